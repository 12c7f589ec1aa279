"""Judge many (query, document) pairs: cache, bounded concurrency, progress, cost estimate.

:func:`plan_judging` says what a batch would cost before anything is sent
(``--dry-run``); :func:`judge_pairs` does it:

1. each pair's texts are looked up (a pair whose query or document has no text
   is not judged: it is recorded as a failure ``missing text`` and counted);
2. pairs with the same texts are judged once (the cache key is the hash of the
   exact request: endpoint URL, model, the prompt's full text with the query and
   the document *as sent* — after the ``max_doc_chars`` cut — and every request
   parameter; :mod:`rankscope.labels.cache`);
3. keys found in the cache are not asked again; the others go to
   :func:`~rankscope.labels.judge.judge_one` from ``concurrency`` threads, and each
   success is written to the cache as soon as it arrives — an interrupted batch
   resumes from there, a failure is asked again next time;
4. every pair gets a :class:`~rankscope.labels.provenance.Label`: a grade, or a
   failure with its reason, and its receipt — the raw reply, when the answer was
   made, the endpoint, model, prompt id and hash, the tokens it cost and whether
   this run took it from the cache.

>>> plan = JudgePlan(items=4, distinct=3, cached=1, calls=2, missing=[], tokens_in=900, tokens_out=20,
...                  truncated=0)
>>> round(plan.cost(0.15, 0.60), 6)
0.000147
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from rankscope._progress import progress_bar
from rankscope.errors import InvalidParameterError
from rankscope.i18n import _
from rankscope.labels.cache import CacheKey, LabelCache
from rankscope.labels.judge import JudgeSettings, Judgment, client_for, judge_one, prompt_tokens, utc_time
from rankscope.labels.provenance import Label, Labels
from rankscope.llm_client import ChatClient, EndpointError, public_url

__all__ = ["JudgePlan", "JudgeReport", "judge_pairs", "judge_until", "parallel", "plan_judging"]

Pair = tuple[str, str]
K = TypeVar("K")
R = TypeVar("R")


@dataclass(frozen=True)
class JudgePlan:
    """What a batch costs: pairs, distinct text pairs, cached answers, calls to make, pairs without text,
    estimated input / output tokens of the calls to make, documents cut at ``max_doc_chars``; the tokenizer that
    counted (``"estimate"``: the character rule of :mod:`rankscope.labels.judge`); the input tokens re-asks would
    add at most (every reply unreadable ``parse_retries`` times: each re-ask resends the conversation plus the
    retry message); and, when the cache holds earlier answers, how many input tokens they used per token this
    count gives for them (retries included), None otherwise."""

    items: int
    distinct: int
    cached: int
    calls: int
    missing: list[tuple[str, str, str]]
    tokens_in: int
    tokens_out: int
    truncated: int
    tokenizer: str = "estimate"
    retry_in_max: int = 0
    observed_ratio: float | None = None

    def cost(self, price_in: float | None, price_out: float | None) -> float | None:
        """Estimated cost of the calls to make, with prices per million input / output tokens."""
        if price_in is None or price_out is None:
            return None
        return (self.tokens_in * price_in + self.tokens_out * price_out) / 1e6

    def to_dict(self, price_in: float | None = None, price_out: float | None = None) -> dict[str, Any]:
        return {"pairs": self.items, "distinct_texts": self.distinct, "cached": self.cached, "calls": self.calls,
                "missing_text": len(self.missing), "truncated_documents": self.truncated,
                "estimated_tokens_in": self.tokens_in, "estimated_tokens_out": self.tokens_out,
                "tokenizer": self.tokenizer, "retries_not_included": {
                    "input_tokens_at_most": self.retry_in_max,
                    "cached_answers_input_per_estimated_token": self.observed_ratio},
                "price_in_per_million": price_in, "price_out_per_million": price_out,
                "estimated_cost": self.cost(price_in, price_out)}


@dataclass
class JudgeReport:
    """The outcome of :func:`judge_pairs`: the labels (grades and failures) and what it took."""

    labels: Labels
    plan: JudgePlan
    from_cache: int = 0
    judged_now: int = 0
    failed: int = 0
    http_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    not_sent: int = 0

    def cost(self, price_in: float | None, price_out: float | None) -> float | None:
        """What the calls of this run cost, with prices per million input / output tokens (None without both)."""
        if price_in is None or price_out is None:
            return None
        return (self.tokens_in * price_in + self.tokens_out * price_out) / 1e6

    def to_dict(self) -> dict[str, Any]:
        return {"pairs": self.plan.items, "graded": self.labels.counts()["model"], "from_cache": self.from_cache,
                "judged_now": self.judged_now, "failed": self.failed, "missing_text": len(self.plan.missing),
                "truncated_documents": self.plan.truncated, "http_calls": self.http_calls,
                "tokens_in": self.tokens_in, "tokens_out": self.tokens_out, "errors": dict(self.errors),
                "not_sent_max_cost": self.not_sent}


@dataclass
class _Work:
    pairs: list[Pair]
    keys: dict[Pair, CacheKey]
    texts: dict[CacheKey, tuple[str, str]]
    missing: dict[Pair, str]
    truncated: set[CacheKey]


def _prepare(pairs: Iterable[Pair], queries: Mapping[str, str], corpus: Mapping[str, str],
             settings: JudgeSettings) -> _Work:
    prompt = settings.prompt
    seen: set[Pair] = set()
    work = _Work([], {}, {}, {}, set())
    for q, d in pairs:
        pair = (str(q), str(d))
        if pair in seen:
            continue
        seen.add(pair)
        work.pairs.append(pair)
        qt, dt = queries.get(pair[0]), corpus.get(pair[1])
        if qt is None or not qt.strip():
            work.missing[pair] = f"missing text: no text for query {pair[0]!r}"
            continue
        if dt is None or not dt.strip():
            work.missing[pair] = f"missing text: no text for document {pair[1]!r}"
            continue
        sent, cut = settings.cut(dt)
        key = settings.key(prompt.messages(query=qt, passage=sent))
        work.keys[pair] = key
        work.texts[key] = (qt, sent)
        if cut:
            work.truncated.add(key)
    return work


def _open_cache(cache: LabelCache | str | Path | None) -> tuple[LabelCache | None, bool]:
    if cache is None or isinstance(cache, LabelCache):
        return cache, False
    return LabelCache(cache), True


def plan_judging(pairs: Iterable[Pair], queries: Mapping[str, str], corpus: Mapping[str, str],
                 settings: JudgeSettings, *, cache: LabelCache | str | Path | None = None) -> JudgePlan:
    """Count the calls a batch needs and estimate their tokens, sending nothing."""
    work = _prepare(pairs, queries, corpus, settings)
    db, owned = _open_cache(cache)
    try:
        hits = db.get_many(work.texts) if db is not None else {}
    finally:
        if owned and db is not None:
            db.close()
    return _plan(work, hits, settings, count=True)


def _plan(work: _Work, hits: Mapping[CacheKey, Any], settings: JudgeSettings, count: bool = False) -> JudgePlan:
    """The plan; ``count``: with the model's tokenizer where installed (the dry run), else the character rule."""
    from rankscope.labels.judge import estimate_tokens, token_counter

    prompt = settings.prompt
    todo = [k for k in work.texts if k not in hits]
    name, counter = token_counter(settings.model) if count else ("estimate", estimate_tokens)
    per_call = [prompt_tokens(prompt, *work.texts[k], counter) for k in todo]
    reply = counter(prompt.reply_example) if prompt.reply_example and prompt.name != "synth" else prompt.reply_tokens
    retry = counter(prompt.retry) + reply
    r = settings.parse_retries
    # re-ask j resends the first call, j replies and j retry messages: Σ_j (call + j·retry) for j = 1..r
    retry_max = sum(r * c + r * (r + 1) // 2 * retry for c in per_call)
    observed = None
    earlier = [(k, h) for k, h in hits.items() if getattr(h, "tokens_in", 0)]
    if count and earlier:
        estimated = sum(prompt_tokens(prompt, *work.texts[k], counter) for k, __ in earlier)
        observed = sum(h.tokens_in for __, h in earlier) / estimated if estimated else None
    return JudgePlan(items=len(work.pairs), distinct=len(work.texts), cached=len(work.texts) - len(todo),
                     calls=len(todo), missing=[(q, d, r) for (q, d), r in work.missing.items()],
                     tokens_in=sum(per_call), tokens_out=reply * len(todo),
                     truncated=len(work.truncated), tokenizer=name, retry_in_max=retry_max, observed_ratio=observed)


def judge_pairs(
    pairs: Iterable[Pair],
    queries: Mapping[str, str],
    corpus: Mapping[str, str],
    settings: JudgeSettings,
    *,
    cache: LabelCache | str | Path | None = None,
    concurrency: int = 4,
    progress: bool | None = None,
    client: ChatClient | None = None,
    judge: Callable[..., Judgment] = judge_one,
    max_cost: float | None = None,
    prices: tuple[float, float] | None = None,
) -> JudgeReport:
    """Judge every ``(query_id, doc_id)`` pair; see the module docstring.

    ``max_cost`` (with ``prices``, per million input and output tokens) stops sending new calls once the tokens the
    endpoint reported cost that much; the calls in flight are still collected, and the pairs never sent are failures
    ``max cost: ...`` (asked next time).

    ``queries`` / ``corpus`` map ids to texts; ``cache`` is a :class:`LabelCache`
    or the path of its SQLite file (None: no cache); ``progress`` shows a bar
    (default: when stderr is a terminal) labelled ``judging with MODEL`` in the reader's language; ``judge`` is
    the per-item function (``judge(query, doc, settings, client=...)``).
    """
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise InvalidParameterError(_("{name} must be an integer >= {low}, got {value!r}", name="concurrency", low=1,
                                      value=concurrency))
    if max_cost is not None and prices is None:
        raise InvalidParameterError(_("a cost limit needs the prices per million input and output tokens"))
    work = _prepare(pairs, queries, corpus, settings)
    db, owned = _open_cache(cache)
    try:
        hits = db.get_many(work.texts) if db is not None else {}
        plan = _plan(work, hits, settings)
        results: dict[CacheKey, Judgment] = {
            k: Judgment(h.grade, None, h.reply, 0, h.tokens_in, h.tokens_out, k in work.truncated, h.created, True)
            for k, h in hits.items()}
        report = JudgeReport(Labels.from_records([]), plan, from_cache=len(hits))
        todo = [k for k in work.texts if k not in hits]
        if todo:
            chat = client or client_for(settings.endpoint, max_connections=concurrency)
            show = sys.stderr.isatty() if progress is None else bool(progress)
            from rankscope.choices import resolve_lang

            label = _("judging with {model}", model=settings.model).text(resolve_lang())
            with progress_bar(label, len(todo), show) as bar:
                def one(key: CacheKey) -> Judgment:
                    return _with_cut(judge(*work.texts[key], settings, client=chat), key in work.truncated)

                def spent() -> bool:
                    assert prices is not None and max_cost is not None
                    return (report.tokens_in * prices[0] + report.tokens_out * prices[1]) / 1e6 >= max_cost

                for key, j in parallel(todo, one, concurrency, stop=spent if max_cost is not None else None):
                    results[key] = j
                    report.http_calls += j.calls
                    report.tokens_in += j.tokens_in
                    report.tokens_out += j.tokens_out
                    if j.grade is not None:
                        report.judged_now += 1
                        if db is not None:
                            db.put(key, grade=j.grade, reply=j.reply or "", tokens_in=j.tokens_in,
                                   tokens_out=j.tokens_out, created=j.time or None)
                    bar.advance()
    finally:
        if owned and db is not None:
            db.close()
    prompt = settings.prompt
    receipt: dict[str, Any] = {"endpoint": public_url(settings.endpoint.base_url), "prompt_hash": prompt.hash}
    for key in work.texts:
        if key not in results:  # never sent: the cost limit was reached
            report.not_sent += 1
            results[key] = Judgment(None, f"max cost: not sent, the limit of {max_cost:g} was reached", None)
    labels = []
    for pair in work.pairs:
        if pair in work.missing:
            labels.append(Label(*pair, None, "model", settings.model, prompt.id, work.missing[pair], **receipt))
            continue
        j = results[work.keys[pair]]
        labels.append(Label(*pair, j.grade, "model", settings.model, prompt.id, j.error, reply=j.reply,
                            time=utc_time(j.time) if j.time else None, tokens_in=j.tokens_in,
                            tokens_out=j.tokens_out, cached=j.cached, **receipt))
        if j.error is not None:
            kind = j.error.split(":", 1)[0]
            report.errors[kind] = report.errors.get(kind, 0) + 1
    report.labels = Labels.from_records(labels)
    report.failed = sum(1 for lab in labels if lab.grade is None)
    if work.missing:
        report.errors["missing text"] = len(work.missing)
    return report


def parallel(todo: Iterable[K], call: Callable[[K], R], concurrency: int,
             stop: Callable[[], bool] | None = None) -> Iterator[tuple[K, R]]:
    """Yield ``(item, call(item))`` as calls finish, at most ``concurrency`` in flight (which also bounds what
    an interruption leaves running).  An :class:`EndpointError` stops sending; the calls already in flight
    are collected (so that their answers can be cached), then the error is raised.  When ``stop()`` turns
    true nothing new is sent either; the calls in flight are collected and the rest of ``todo`` is left."""
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="rankscope-llm")
    pending: dict[Future[R], K] = {}
    queue = iter(todo)
    done = 0
    try:
        while True:
            while len(pending) < concurrency and not (stop is not None and stop()):
                try:
                    nxt = next(queue)
                except StopIteration:
                    break
                pending[pool.submit(call, nxt)] = nxt
            if not pending:
                break
            finished, __ = wait(pending, return_when=FIRST_COMPLETED)
            fatal: EndpointError | None = None
            for fut in finished:
                item = pending.pop(fut)
                try:
                    result = fut.result()
                except EndpointError as exc:
                    fatal = fatal or exc
                    continue
                done += 1
                yield item, result
            if fatal is not None:
                for fut in list(pending):  # keep what is already in flight, send nothing new
                    item = pending.pop(fut)
                    try:
                        result = fut.result()
                    except Exception:
                        continue
                    done += 1
                    yield item, result
                raise EndpointError(_("{error} ({done} answers of this batch were kept before it stopped; run "
                                      "again to resume)", error=fatal, done=done))
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _with_cut(j: Judgment, truncated: bool) -> Judgment:
    return replace(j, truncated=truncated)


def judge_until(
    pairs: Iterable[Pair],
    queries: Mapping[str, str],
    corpus: Mapping[str, str],
    settings: JudgeSettings,
    *,
    width: float,
    alpha: float = 0.05,
    relevance_level: int = 1,
    every: int = 50,
    seed: int = 0,
    **options: Any,
) -> tuple[JudgeReport, Any]:
    """Judge the pairs in a random order (``seed``), ``every`` at a time, until the anytime-valid interval of the
    pool's share of relevant pairs (grade >= ``relevance_level``) is at most ``width`` wide.

    The interval is a :class:`~rankscope.stats.betting.ConfidenceSequence` over the pairs sampled without
    replacement: when judging stops, the share over *all* the pairs lies in it with probability at least
    ``1 - alpha``.  A pair that could not be judged (a failure) has no grade to put in it: from the first one on
    no early stop is made (every pair is judged) and the report says so.  ``options`` go to :func:`judge_pairs`.
    Returns the merged report and the :class:`~rankscope.stats.betting.Stopped` record.
    """
    import numpy as np

    from rankscope.stats.betting import Stopped, StopWhen

    rule = StopWhen("relevant share", width=width, alpha=alpha, every=every, min_queries=1, seed=seed)
    unique = list(dict.fromkeys((str(q), str(d)) for q, d in pairs))
    order = [unique[i] for i in np.random.default_rng(seed).permutation(len(unique))]
    cs = rule.start(population=len(order))
    reports: list[JudgeReport] = []
    used, reason, failed = 0, None, False
    max_cost, prices = options.pop("max_cost", None), options.pop("prices", None)
    spent = 0.0
    for start in range(0, len(order), every):
        batch = order[start:start + every]
        budget = None if max_cost is None else max(max_cost - spent, 0.0)
        rep = judge_pairs(batch, queries, corpus, settings, max_cost=budget, prices=prices, **options)
        if prices is not None:
            spent += rep.cost(*prices) or 0.0
        reports.append(rep)
        used += len(batch)
        grades = {(lab["query_id"], lab["doc_id"]): lab["grade"] for lab in rep.labels.table.to_pylist()}
        values = [grades.get(p) for p in batch]
        if any(v is None for v in values):
            failed = True
        if failed:
            continue
        cs.update([1.0 if v >= relevance_level else 0.0 for v in values if v is not None])
        reason = rule.reason(cs)
        if reason is not None:
            break
    merged = _merge(reports, len(unique))
    stopped = Stopped(rule.metric, "failed" if failed else reason, used, len(order), cs.lower, cs.upper, cs.mean,
                      alpha, width=width, unit="pairs", grade=relevance_level)
    return merged, stopped


def _merge(reports: list[JudgeReport], items: int) -> JudgeReport:
    """One report of several rounds: labels together, counts summed."""
    import pyarrow as pa

    tables = [r.labels.table for r in reports]
    labels = Labels(pa.concat_tables(tables)) if tables else Labels.from_records([])
    plans = [r.plan for r in reports]
    plan = JudgePlan(items=items, distinct=sum(p.distinct for p in plans), cached=sum(p.cached for p in plans),
                     calls=sum(p.calls for p in plans), missing=[m for p in plans for m in p.missing],
                     tokens_in=sum(p.tokens_in for p in plans), tokens_out=sum(p.tokens_out for p in plans),
                     truncated=sum(p.truncated for p in plans),
                     tokenizer=plans[0].tokenizer if plans else "estimate",
                     retry_in_max=sum(p.retry_in_max for p in plans))
    out = JudgeReport(labels, plan)
    for r in reports:
        out.from_cache += r.from_cache
        out.judged_now += r.judged_now
        out.failed += r.failed
        out.http_calls += r.http_calls
        out.tokens_in += r.tokens_in
        out.tokens_out += r.tokens_out
        out.not_sent += r.not_sent
        for k, v in r.errors.items():
            out.errors[k] = out.errors.get(k, 0) + v
    return out
