"""rankscope's splitters: every chunk is a character range of its document, in Chinese and English."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankscope.chunking import fixed, fixed_tokens, paragraphs, parse_spec, recursive, sentences, split
from rankscope.data.units import token_offsets
from rankscope.errors import InvalidParameterError

ZH = ("检索增强生成（RAG）先从语料中找出相关的段落，再让模型据此作答。分块的大小会影响召回率！"
      "块太小，答案被切开；块太大，模型要读很多无关的文字。\n\n第二段：评测时应当用片段标注。")
EN = ("Retrieval-augmented generation first finds passages, then answers. Chunk size matters! "
      "Small chunks cut answers; large chunks waste context.\n\nSecond paragraph: judge spans, not chunk ids.")


def covered(ch, doc):
    """Characters of ``doc`` held by some chunk."""
    mask = np.zeros(len(ch.corpus[doc]), dtype=bool)
    for d, s, e in zip(ch.doc, ch.start, ch.end):
        if d == doc:
            mask[s:e] = True
    return mask


@given(st.text(min_size=0, max_size=300), st.integers(1, 40), st.integers(0, 39))
@settings(max_examples=80, deadline=None)
def test_fixed_windows_cover_every_character(text, size, overlap):
    overlap = min(overlap, size - 1)
    ch = fixed({"d": text, "e": text[::-1]}, size, overlap)
    assert (ch.sizes <= size).all()
    for d in ("d", "e"):
        assert covered(ch, d).all()
        starts = ch.start[ch.doc == d]
        assert (np.diff(starts) == size - overlap).all()
    assert ch.summary()["chunks"] == len(ch)


@pytest.mark.parametrize("text", [ZH, EN])
@pytest.mark.parametrize(("size", "overlap"), [(30, 0), (60, 15), (200, 40)])
def test_recursive_chunks_fit_and_keep_every_word(text, size, overlap):
    ch = recursive({"d": text}, size, overlap)
    assert (ch.sizes <= size).all()
    non_space = np.array([not c.isspace() for c in text])
    assert covered(ch, "d")[non_space].all()
    texts = ch.texts()
    assert all(t == t.strip() for t in texts.values())


def test_recursive_prefers_coarse_separators():
    ch = recursive({"d": ZH}, 60)
    texts = list(ch.texts().values())
    assert all(t[-1] in "。！？；，、" for t in texts)  # cut after a sentence or clause, never inside a word
    assert any(t.startswith("第二段") for t in recursive({"d": ZH}, 40).texts().values())  # paragraph break


def test_sentences_in_both_languages():
    ch = sentences({"zh": ZH, "en": EN})
    texts = list(ch.texts().values())
    assert "分块的大小会影响召回率！" in texts
    assert "Chunk size matters!" in texts
    packed = sentences({"zh": ZH}, 80)
    assert (packed.sizes <= 80).all() and len(packed) < len([t for t in texts if t[0] > "\u3000"])


def test_paragraphs():
    ch = paragraphs({"en": EN, "zh": ZH})
    assert [t[:6] for t in ch.texts().values()] == ["Retrie", "Second", "检索增强生成", "第二段：评测"]
    assert (paragraphs({"en": EN}, 50).sizes <= 50).all()


@pytest.mark.parametrize("unit", ["words", "jieba"])
def test_token_windows_end_on_token_boundaries(unit):
    ch = fixed_tokens({"zh": ZH, "en": EN}, 12, 4, unit)
    for d in ("zh", "en"):
        starts, ends = token_offsets(ch.corpus[d], unit)
        rows = ch.doc == d
        assert set(ch.start[rows].tolist()) <= set(starts) and set(ch.end[rows].tolist()) <= set(ends)
        for s, e in zip(ch.start[rows], ch.end[rows]):
            assert sum(1 for a, b in zip(starts, ends) if a >= s and b <= e) <= 12


def test_specs():
    corpus = {"d": EN}
    assert split(corpus, "fixed:50:10") == fixed(corpus, 50, 10)
    assert split(corpus, "fixed:50:10").name == "fixed:50:10"
    assert str(parse_spec("tokens:64")) == "tokens:64"
    assert split(corpus, "sentences").name == "sentences"
    for bad, msg in [("fixd:10", "did you mean 'fixed'"), ("fixed", "needs a size"), ("fixed:10:10", "smaller"),
                     ("fixed:a", "whole numbers"), ("sentences:10:2:3", "too many fields"),
                     ("tokens:10:2:klingon", "unknown unit")]:
        with pytest.raises(InvalidParameterError, match=msg):
            parse_spec(bad)
