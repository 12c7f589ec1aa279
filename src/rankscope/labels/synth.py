"""Synthetic questions that keep their gold ids: a test set generated from the corpus itself.

Sampling (stratified across documents)
    Chunks are grouped by document (``chunk_to_doc``: a pattern such as
    ``"{doc_id}#{chunk}"``, a dict or a function, see
    :func:`rankscope.retrieval.map_chunk_ids`; by default every chunk is its own
    document).  The candidate order takes one random chunk from each document
    (documents in random order), then a second chunk from each document that has
    one, and so on — so ``n`` questions spread over ``min(n, documents)``
    documents and no document gets two questions before every document has one.
    Chunks shorter than ``min_chars`` are skipped (counted).  ``seed`` fixes it.
Generation
    Each candidate chunk is sent with the ``synth`` prompt (English or Chinese);
    the reply must be ``{"question": ..., "answer": ...}`` (retried, then a
    recorded failure).  The chunk's id becomes the question's relevant id
    (grade 1) and the answer its reference answer.
Filters (each rejection is kept with its reason)
    * not standalone: the question points at its passage ("according to the
      passage", "in the text", "根据这段文字", "文中提到的", "本文", "上述" …,
      :func:`not_standalone`), so it means nothing to someone searching;
    * verbatim copy (:func:`is_copy`): the longest run of tokens shared by the
      question and its chunk covers ``max_copy`` or more of the question and at
      least ``min_copy_run`` tokens (defaults 0.85 and 5).  Tokens
      (:func:`tokens`) are Latin words and digits (casefolded) and, for Chinese,
      Japanese and Korean text, jieba's words (dictionary mode, no HMM, so the
      same text always splits the same way); a CJK run is never glued to a
      preceding Latin letter or digit.  On CMRC 2018 these defaults catch 98% of
      the passages' sentences turned into questions ("…吗？", "请问…？") and
      reject 1.9% of the dataset's own questions, which were written while
      reading the passage and often repeat most of a sentence;
    * near-duplicate: character-trigram Jaccard ``>= near`` with an earlier
      accepted question (the same test as ``rankscope testset check``);
    * unanswerable: the judge (the ``graded`` prompt, by default the generator's
      endpoint and model) grades the chunk for the question below ``min_grade``,
      or cannot grade it.
Waves
    Candidates are generated, filtered and judged in waves until ``n`` questions
    are accepted or ``max_candidates`` chunks were tried; calls are cached like
    the judge's, so a re-run with the same settings costs nothing.

>>> copy_ratio("What is the capital of France?", "Paris is the capital of France.")  # short: kept
(0.8333333333333334, 5)
>>> copy_ratio("2019年北京举办了世界园艺博览会吗？", "2019年北京举办了世界园艺博览会，吸引了大量游客。")
(0.8571428571428571, 6)
>>> order = sample_order({"a#1": "x", "a#2": "y", "a#3": "w", "b#1": "z"}, chunk_to_doc="{doc_id}#{n}", seed=0)
>>> [c.split("#")[0] for c in order]  # one chunk of each document before a second one
['b', 'a', 'a', 'a']
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from rankscope._progress import progress_bar
from rankscope.data.testset import Query, TestSet
from rankscope.errors import EmptyInputError, InvalidParameterError
from rankscope.i18n import _
from rankscope.labels.batch import judge_pairs, parallel
from rankscope.labels.cache import LabelCache
from rankscope.labels.judge import Answer, JudgeSettings, ask, client_for, prompt_tokens, token_counter
from rankscope.labels.parse import parse_question
from rankscope.llm_client import ChatClient

__all__ = ["MAX_COPY", "MIN_COPY_RUN", "Rejected", "SynthResult", "copy_ratio", "is_copy", "not_standalone",
           "plan_synth", "sample_order", "synthesize", "tokens"]

#: the defaults of the copy filter (see the module docstring for what they catch on CMRC 2018)
MAX_COPY, MIN_COPY_RUN = 0.85, 5

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_RUN = re.compile(rf"(?P<cjk>[{_CJK}]+)|[^\W_{_CJK}]+")
_WORD = re.compile(rf"[^\W_{_CJK}]+|[{_CJK}]+")

#: questions that point at their passage (not standalone); the Chinese patterns leave 英文中 / 中文中, 日本文化 and
#: 根据传说 / 根据什么 alone
_NOT_STANDALONE = re.compile("|".join([
    r"(?:根据|依据|按照|结合|参考|阅读)(?:上文|上述|以上|下文|本文|原文|文中|全文|材料|短文|文章|段落|文字|这|该|此|本)",
    r"(?:这|该|此|本|上|下)一?(?:段|篇)(?:文字|文章|话|材料|内容|短文|段落|文本|中|里|所|提到|描述)",
    r"(?<![英中日韩法德俄汉外梵藏满蒙经碑论古散韵正])文中",
    r"(?<![日基])本文(?![化字件])",
    r"上述|上文|以上内容|前文|原文(?:中|里|提到)|上面(?:提到|所说|的文字|这段)",
    r"(?:文章|材料|段落|短文)(?:中|里)?(?:提到|提及|所说|描述|介绍)",
    r"\b(?:according to (?:the|this|that) (?:passage|text|article|document|paragraph|excerpt|context|above|given|"
    r"following|provided)|(?:this|the given|the above|the following|the provided|the preceding) (?:passage|text|"
    r"paragraph|excerpt|article|document|context|snippet)|in the (?:passage|text|paragraph|excerpt)|"
    r"(?:mentioned|described|stated|discussed) (?:above|earlier in the text))\b",
]), re.IGNORECASE)


def tokens(text: str) -> list[str]:
    """The tokens the copy filter compares: Latin words and digits casefolded, CJK text split by jieba.

    >>> tokens("2019年北京举办了世界园艺博览会")
    ['2019', '年', '北京', '举办', '了', '世界园艺博览会']
    >>> tokens("What is BM25?")
    ['what', 'is', 'bm25']
    """
    out: list[str] = []
    jieba = None
    for m in _RUN.finditer(text):
        if m.group("cjk") is None:
            out.append(m.group(0).casefold())
            continue
        if jieba is None:
            from rankscope.retrieval.tokenize import _jieba

            jieba = _jieba()
        out.extend(w for w in jieba.lcut(m.group(0), HMM=False) if _WORD.fullmatch(w))
    return out


def copy_ratio(question: str, passage: str) -> tuple[float, int]:
    """``(share of the question's tokens in its longest run shared with the passage, that run's length)``."""
    return _copy_ratio(tokens(question), list(_passage_tokens(passage)))


@functools.lru_cache(maxsize=1024)
def _passage_tokens(passage: str) -> tuple[str, ...]:
    # a passage is checked against every question generated from it: jieba splits it once
    return tuple(tokens(passage))


def _copy_ratio(q: list[str], p: list[str]) -> tuple[float, int]:
    if not q or not p:
        return 0.0, 0
    m = difflib.SequenceMatcher(None, q, p, autojunk=False).find_longest_match(0, len(q), 0, len(p))
    return m.size / len(q), m.size


def is_copy(question: str, passage: str, max_copy: float = MAX_COPY, min_copy_run: int = MIN_COPY_RUN) -> bool:
    """True when ``question`` copies ``passage`` (see the module docstring).

    >>> is_copy("What is the capital of France?", "Paris is the capital of France.")
    False
    """
    ratio, run = copy_ratio(question, passage)
    return ratio >= max_copy and run >= min_copy_run


def not_standalone(question: str) -> bool:
    """True when ``question`` points at its passage and means nothing without it.

    >>> not_standalone("根据这段文字，谁发明了印刷术？"), not_standalone("Who invented printing?")
    (True, False)
    """
    return _NOT_STANDALONE.search(question) is not None


def sample_order(corpus: Mapping[str, str], *, chunk_to_doc: Any = None, seed: int = 0,
                 min_chars: int = 1) -> list[str]:
    """Chunk ids in stratified candidate order (see the module docstring); short chunks left out."""
    ids = [c for c, t in corpus.items() if len(t.strip()) >= min_chars]
    if not ids:
        return []
    if chunk_to_doc is None:
        docs = np.arange(len(ids))
    else:
        from rankscope.retrieval.chunks import map_chunk_ids

        mapped, __ = map_chunk_ids(pa.array(ids, type=pa.string()), chunk_to_doc)
        names = np.array([d if d is not None else c for d, c in zip(mapped.to_pylist(), ids)], dtype=object)
        _names, docs = np.unique(names, return_inverse=True)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(ids))  # random chunk order within a document
    d = docs[perm]
    grouped = np.argsort(d, kind="stable")
    dg = d[grouped]
    starts = np.flatnonzero(np.r_[True, dg[1:] != dg[:-1]])
    position = np.arange(len(dg)) - np.repeat(starts, np.diff(np.r_[starts, len(dg)]))
    doc_rank = rng.permutation(int(docs.max()) + 1)[dg]  # random document order
    order = np.lexsort((doc_rank, position))
    return [ids[i] for i in perm[grouped[order]]]


@dataclass(frozen=True)
class Rejected:
    """A candidate that did not make it: its chunk, the question and answer (if any) and why."""

    chunk_id: str
    question: str | None
    answer: str | None
    reason: str


@dataclass
class SynthResult:
    """The test set, the rejected candidates, and counts of what happened."""

    testset: TestSet
    rejected: list[Rejected]
    counts: dict[str, int]
    settings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"settings": self.settings, "counts": self.counts,
                "rejected": [vars(r) for r in self.rejected]}

    def write_report(self, path: str | Path) -> None:
        """Write settings, counts and every rejected candidate as JSON."""
        Path(path).write_text(json.dumps(self.to_dict(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def _generate(chunks: list[str], corpus: Mapping[str, str], settings: JudgeSettings, db: LabelCache | None,
              client: ChatClient, concurrency: int) -> dict[str, Answer[tuple[str, str]]]:
    prompt = settings.prompt
    out: dict[str, Answer[tuple[str, str]]] = {}
    todo = []
    for c in chunks:
        text, __ = settings.cut(corpus[c])
        hit = db.get(settings.key(prompt.messages(passage=text))) if db is not None else None
        if hit is not None:
            out[c] = Answer(parse_question(hit.reply), None, hit.reply, 0, 0, 0)
        else:
            todo.append(c)

    def one(c: str) -> Answer[tuple[str, str]]:
        return ask(client, settings.model, prompt, prompt.messages(passage=settings.cut(corpus[c])[0]),
                   parse_question, parse_retries=settings.parse_retries, max_tokens=settings.max_tokens)

    for c, ans in parallel(todo, one, concurrency):
        out[c] = ans
        if ans.value is not None and db is not None:
            db.put(settings.key(prompt.messages(passage=settings.cut(corpus[c])[0])), grade=None,
                   reply=ans.reply or "", tokens_in=ans.tokens_in, tokens_out=ans.tokens_out)
    return out


def _check(n: int, oversample: float, min_grade: int, max_copy: float, near: float) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InvalidParameterError(_("{name} must be an integer >= {low}, got {value!r}", name="n", low=1, value=n))
    if not oversample >= 1:
        raise InvalidParameterError(_("oversample must be >= 1, got {value!r}", value=oversample))
    if not 0 <= min_grade <= 3:
        raise InvalidParameterError(_("min_grade must be 0-3, got {value!r}", value=min_grade))
    for name, v in (("max_copy", max_copy), ("near", near)):
        if not 0 < v <= 1:
            raise InvalidParameterError(_("{name} must be in (0, 1], got {value!r}", name=name, value=v))


def synthesize(
    corpus: Mapping[str, str],
    n: int,
    generator: JudgeSettings,
    *,
    judge: JudgeSettings | None = None,
    chunk_to_doc: Any = None,
    seed: int = 0,
    min_chars: int = 40,
    min_grade: int = 2,
    max_copy: float = MAX_COPY,
    min_copy_run: int = MIN_COPY_RUN,
    near: float = 0.8,
    oversample: float = 1.25,
    max_candidates: int | None = None,
    cache: LabelCache | str | Path | None = None,
    concurrency: int = 4,
    progress: bool | None = None,
    client: ChatClient | None = None,
    name: str = "synthetic",
) -> SynthResult:
    """Generate ``n`` questions from ``corpus`` (``{chunk_id: text}``); see the module docstring.

    ``generator`` is a :class:`JudgeSettings` whose ``prompt_name`` is set to ``synth`` here;
    ``judge`` defaults to the generator's endpoint and model with the ``graded`` prompt; ``client``
    (tests) serves the generator, and the judge too when it has the same endpoint.
    ``max_candidates`` (default ``3 n``) bounds the chunks tried; the progress bar says ``questions from MODEL`` in
    the reader's language.
    """
    import sys

    _check(n, oversample, min_grade, max_copy, near)
    gen = replace(generator, prompt_name="synth")
    jud = judge if judge is not None else replace(generator, prompt_name="graded")
    order = sample_order(corpus, chunk_to_doc=chunk_to_doc, seed=seed, min_chars=min_chars)
    if not order:
        raise EmptyInputError(_("synth: no chunk of at least {n} characters in the corpus", n=min_chars))
    limit = min(len(order), max_candidates if max_candidates is not None else 3 * n)
    db = cache if isinstance(cache, LabelCache) or cache is None else LabelCache(cache)
    chat = client or client_for(gen.endpoint, max_connections=concurrency)
    judge_chat = chat if jud.endpoint == gen.endpoint else client_for(jud.endpoint, max_connections=concurrency)
    accepted: list[tuple[str, str, str, int]] = []  # chunk, question, answer, judge grade
    rejected: list[Rejected] = []
    counts = {"candidates": 0, "short_chunks_skipped": len(corpus) - len(order), "generation_failed": 0,
              "not_standalone": 0, "verbatim_copy": 0, "near_duplicate": 0, "unanswerable": 0, "judge_failed": 0,
              "surplus": 0}
    tried = 0
    show = sys.stderr.isatty() if progress is None else bool(progress)
    try:
        from rankscope.choices import resolve_lang

        with progress_bar(_("questions from {model}", model=gen.model).text(resolve_lang()), n, show) as bar:
            while len(accepted) < n and tried < limit:
                need = n - len(accepted)
                wave = order[tried: min(limit, tried + max(concurrency, math.ceil(need * oversample)))]
                tried += len(wave)
                counts["candidates"] += len(wave)
                answers = _generate(wave, corpus, gen, db, chat, concurrency)
                fresh: list[tuple[str, str, str]] = []
                for c in wave:
                    ans = answers[c]
                    if ans.value is None:
                        counts["generation_failed"] += 1
                        rejected.append(Rejected(c, None, None, f"generation failed: {ans.error}"))
                        continue
                    q, a = ans.value
                    if not_standalone(q):
                        counts["not_standalone"] += 1
                        rejected.append(Rejected(c, q, a, "not standalone: it points at its passage"))
                        continue
                    ratio, run = copy_ratio(q, corpus[c])
                    if ratio >= max_copy and run >= min_copy_run:
                        counts["verbatim_copy"] += 1
                        rejected.append(Rejected(c, q, a, f"copies the passage ({run} tokens in a row, "
                                                          f"{ratio:.0%} of the question)"))
                        continue
                    fresh.append((c, q, a))
                survivors = []
                for (c, q, a), twin in zip(fresh, _twins([x[1] for x in accepted], [x[1] for x in fresh], near)):
                    if twin is not None:
                        counts["near_duplicate"] += 1
                        rejected.append(Rejected(c, q, a, f"near-duplicate of {twin!r}"))
                    else:
                        survivors.append((c, q, a))
                if not survivors:
                    continue
                ids = [f"cand{k}" for k in range(len(survivors))]
                report = judge_pairs(list(zip(ids, [c for c, __, __ in survivors])),
                                     dict(zip(ids, [q for __, q, __ in survivors])), corpus, jud, cache=db,
                                     concurrency=concurrency, progress=False, client=judge_chat)
                grades = {r["query_id"]: (r["grade"], r["error"]) for r in report.labels.table.to_pylist()}
                for cid, (c, q, a) in zip(ids, survivors):
                    grade, error = grades[cid]
                    if grade is None:
                        counts["judge_failed"] += 1
                        rejected.append(Rejected(c, q, a, f"judge failed: {error}"))
                    elif grade < min_grade:
                        counts["unanswerable"] += 1
                        rejected.append(Rejected(c, q, a, f"the judge finds it unanswerable from its chunk "
                                                          f"(grade {grade} < {min_grade})"))
                    elif len(accepted) < n:
                        accepted.append((c, q, a, int(grade)))
                        bar.advance()
                    else:
                        counts["surplus"] += 1
                        rejected.append(Rejected(c, q, a, f"not needed: {n} questions were already accepted"))
    finally:
        if db is not None and db is not cache:
            db.close()
    counts["accepted"] = len(accepted)
    queries = [Query(f"syn{i + 1}", q, answers=(a,), metadata={
        "generator": gen.model, "prompt": gen.prompt.id, "judge": jud.model,
        "judge_prompt": jud.prompt.id, "judge_grade": g})
        for i, (c, q, a, g) in enumerate(accepted)]
    ts = TestSet(queries, {q.id: {c: 1} for q, (c, *_rest) in zip(queries, accepted)},
                 corpus=dict(corpus), name=name)
    settings = {"n": n, "seed": seed, "lang": gen.lang, "generator": gen.model, "generator_prompt": gen.prompt.id,
                "judge": jud.model, "judge_prompt": jud.prompt.id, "min_grade": min_grade, "max_copy": max_copy,
                "min_copy_run": min_copy_run, "near": near, "min_chars": min_chars, "chunk_to_doc":
                    chunk_to_doc if isinstance(chunk_to_doc, str) else None, "max_candidates": limit}
    return SynthResult(ts, rejected, counts, settings)


def _twins(kept: list[str], fresh: list[str], near: float) -> list[str | None]:
    """For each fresh question, the earlier kept or fresh question it nearly duplicates (None: keep it)."""
    from rankscope.data.testset_audit import near_duplicate_pairs, query_key

    texts = [*kept, *fresh]
    pairs = near_duplicate_pairs([query_key(t) for t in texts], near) if len(texts) > 1 else []
    earlier: dict[int, list[int]] = {}
    for i, j, __ in pairs:
        earlier.setdefault(j, []).append(i)
    dropped: set[int] = set()
    out: list[str | None] = []
    for j in range(len(kept), len(texts)):
        twin = next((i for i in sorted(earlier.get(j, [])) if i not in dropped), None)
        if twin is not None:
            dropped.add(j)
        out.append(None if twin is None else texts[twin])
    return out


def plan_synth(corpus: Mapping[str, str], n: int, generator: JudgeSettings, *, chunk_to_doc: Any = None,
               seed: int = 0, min_chars: int = 40, oversample: float = 1.25) -> dict[str, Any]:
    """Estimated calls and tokens of :func:`synthesize` if ``ceil(n * oversample)`` candidates are enough."""
    gen = replace(generator, prompt_name="synth")
    jud = replace(generator, prompt_name="graded")
    order = sample_order(corpus, chunk_to_doc=chunk_to_doc, seed=seed, min_chars=min_chars)
    chunks = order[: math.ceil(n * oversample)]
    texts = [gen.cut(corpus[c])[0] for c in chunks]
    name, count = token_counter(gen.model)
    gen_in = sum(prompt_tokens(gen.prompt, "", t, count) for t in texts)
    judge_in = sum(prompt_tokens(jud.prompt, "x" * 60, t, count) for t in texts)
    return {"candidates": len(chunks), "calls": 2 * len(chunks), "tokens_in": gen_in + judge_in,
            "tokens_out": len(chunks) * (gen.prompt.reply_tokens + count(jud.prompt.reply_example)),
            "chunks_available": len(order), "tokenizer": name}
