"""The copy and standalone filters of ``synth``: CJK text is split into words (jieba) and Latin words apart, and a
question that points at its passage ("according to the passage", "根据这段文字") is not standalone."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rankscope.labels.synth import copy_ratio, is_copy, not_standalone, tokens

CMRC = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "zh_cmrc2018_retrieval"


def test_cjk_is_not_glued_to_a_preceding_digit_or_latin_letter() -> None:
    assert tokens("2019年北京举办了世界园艺博览会")[0] == "2019"
    assert "ω" in tokens("光荣和ω-force开发") and "force" in tokens("光荣和ω-force开发")
    ratio, run = copy_ratio("2019年北京举办了世界园艺博览会吗？", "2019年北京举办了世界园艺博览会，吸引了大量游客。")
    assert ratio >= 0.85 and run >= 5
    assert is_copy("2019年北京举办了世界园艺博览会吗？", "2019年北京举办了世界园艺博览会，吸引了大量游客。")


def test_short_factoid_questions_are_kept() -> None:
    assert not is_copy("What is the capital of France?", "Paris is the capital of France.")
    assert not is_copy("锣鼓经是什么？", "锣鼓经是中国传统戏曲的打击乐。")
    assert is_copy("Paris is the capital of France and its largest city by far?",
                   "Paris is the capital of France and its largest city by far.")


@pytest.mark.parametrize("question", [
    "根据这段文字，2019年哪里举办了世界园艺博览会？", "文中提到的典型例子叫什么？", "本文选自哪部著作？",
    "上述事件发生在哪一年？",
    "According to the passage, who wrote Hamlet?", "What does this passage say about BM25?", "In the text, what is X?",
])
def test_questions_that_point_at_their_passage(question: str) -> None:
    assert not_standalone(question)


@pytest.mark.parametrize("question", [
    "渗透一词在英文中的意思是什么？", "九命奇冤根据什么小说改编而成？", "根据传说，猎骄靡为什么能被冒顿单于收养？",
    "日本文化的特点是什么？", "彼得·吕姆克尔夫在什么杂志上发表了文章？", "Who is the author of Hamlet?",
    "What is the text of the first amendment?",
])
def test_standalone_questions(question: str) -> None:
    assert not not_standalone(question)


def _cmrc() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    corpus = {r["_id"]: r["text"] for r in map(json.loads, (CMRC / "corpus.jsonl").read_text("utf-8").splitlines())}
    queries = {r["_id"]: r["text"] for r in map(json.loads, (CMRC / "queries.jsonl").read_text("utf-8").splitlines())}
    genuine = []
    for name in ("dev.tsv", "trial.tsv"):
        for line in (CMRC / "qrels" / name).read_text(encoding="utf-8").splitlines()[1:]:
            q, d, _ = line.split("\t")
            genuine.append((queries[q], corpus[d]))
    copies = []  # every sentence of 10 characters or more, made a question as a lazy generator does
    for text in corpus.values():
        for s in re.split(r"(?<=[。！？；])", text):
            s = s.strip().rstrip("。！？；，")
            if len(s) >= 10:
                copies += [(s + "吗？", text), ("请问" + s + "？", text)]
    return copies, genuine


@pytest.mark.slow
@pytest.mark.skipif(not CMRC.exists(), reason="needs ../shared/data/zh_cmrc2018_retrieval")
def test_cmrc2018_copies_are_caught_and_its_own_questions_kept() -> None:
    copies, genuine = _cmrc()
    caught = sum(is_copy(q, p) for q, p in copies) / len(copies)
    rejected = sum(is_copy(q, p) for q, p in genuine) / len(genuine)
    print(f"CMRC 2018: {len(copies)} verbatim copies, {caught:.2%} caught; {len(genuine)} genuine questions, "
          f"{rejected:.2%} rejected as copies; not standalone: {sum(not_standalone(q) for q, _ in genuine)}")
    assert caught >= 0.95 and rejected <= 0.02
