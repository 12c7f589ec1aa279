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
    * verbatim copy: the longest run of tokens (words; CJK characters one by
      one) shared by the question and its chunk covers ``max_copy`` or more of
      the question and at least ``min_copy_run`` tokens (defaults 0.7 and 10: a
      short factoid question naturally repeats a few words of its passage);
    * near-duplicate: character-trigram Jaccard ``>= near`` with an earlier
      accepted question (the same test as ``rankscope testset check``);
    * unanswerable: the judge (the UMBRELA prompt, by default the generator's
      endpoint and model) grades the chunk for the question below ``min_grade``,
      or cannot grade it.
Waves
    Candidates are generated, filtered and judged in waves until ``n`` questions
    are accepted or ``max_candidates`` chunks were tried; calls are cached like
    the judge's, so a re-run with the same settings costs nothing.

>>> copy_ratio("What is the capital of France?", "Paris is the capital of France.")  # short: kept
(0.8333333333333334, 5)
>>> order = sample_order({"a#1": "x", "a#2": "y", "a#3": "w", "b#1": "z"}, chunk_to_doc="{doc_id}#{n}", seed=0)
>>> [c.split("#")[0] for c in order]  # one chunk of each document before a second one
['b', 'a', 'a', 'a']
"""

from __future__ import annotations

import difflib
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
from rankscope.labels.cache import LabelCache, cache_key
from rankscope.labels.client import ChatClient
from rankscope.labels.judge import Answer, JudgeSettings, ask, client_for, prompt_tokens
from rankscope.labels.parse import parse_question

__all__ = ["Rejected", "SynthResult", "copy_ratio", "plan_synth", "sample_order", "synthesize"]

_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]|[^\W_]+", re.UNICODE)


def _tokens(text: str) -> list[str]:
    return [t.casefold() for t in _TOKEN.findall(text)]


def copy_ratio(question: str, passage: str) -> tuple[float, int]:
    """``(share of the question's tokens in its longest run shared with the passage, that run's length)``."""
    q, p = _tokens(question), _tokens(passage)
    if not q or not p:
        return 0.0, 0
    m = difflib.SequenceMatcher(None, q, p, autojunk=False).find_longest_match(0, len(q), 0, len(p))
    return m.size / len(q), m.size


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
        hit = db.get(cache_key(settings.model, prompt.id, "", text)) if db is not None else None
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
            db.put(cache_key(settings.model, prompt.id, "", settings.cut(corpus[c])[0]), grade=None,
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
    max_copy: float = 0.7,
    min_copy_run: int = 10,
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
    ``judge`` defaults to the generator's endpoint and model with the ``umbrela`` prompt; ``client``
    (tests) serves the generator, and the judge too when it has the same endpoint.
    ``max_candidates`` (default ``3 n``) bounds the chunks tried; the progress bar says ``questions from MODEL`` in
    the reader's language.
    """
    import sys

    _check(n, oversample, min_grade, max_copy, near)
    gen = replace(generator, prompt_name="synth")
    jud = replace(judge or generator, prompt_name="umbrela")
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
              "verbatim_copy": 0, "near_duplicate": 0, "unanswerable": 0, "judge_failed": 0, "surplus": 0}
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
               seed: int = 0, min_chars: int = 40, oversample: float = 1.25) -> dict[str, int]:
    """Estimated calls and tokens of :func:`synthesize` if ``ceil(n * oversample)`` candidates are enough."""
    gen = replace(generator, prompt_name="synth")
    jud = replace(generator, prompt_name="umbrela")
    order = sample_order(corpus, chunk_to_doc=chunk_to_doc, seed=seed, min_chars=min_chars)
    chunks = order[: math.ceil(n * oversample)]
    texts = [gen.cut(corpus[c])[0] for c in chunks]
    gen_in = sum(prompt_tokens(gen.prompt, "", t) for t in texts)
    judge_in = sum(prompt_tokens(jud.prompt, "x" * 60, t) for t in texts)
    return {"candidates": len(chunks), "calls": 2 * len(chunks), "tokens_in": gen_in + judge_in,
            "tokens_out": len(chunks) * (gen.prompt.reply_tokens + jud.prompt.reply_tokens),
            "chunks_available": len(order)}
