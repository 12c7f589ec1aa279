"""Judged metrics of production traffic: a sample of events, judged by the cached LLM judge, within a budget.

1. **Sample** (:func:`sample_events`): per retriever version (stratified), the events whose
   :func:`~rankscope.monitor.windows.hash_fraction` (of their key and a seed) is below ``rate``,
   or the ``per_window`` events with the smallest one.  The choice depends only on the events, so a
   restarted aggregation picks the same sample.
2. **Plan and budget** (:class:`JudgeBudget`): the top ``depth`` documents of each sampled event
   (``depth``: the largest cutoff of the metrics) make the (query, document) pairs; the plan
   (:func:`rankscope.labels.plan_judging`: calls, cached answers, estimated tokens and cost) is
   made before anything is sent; when the day's remaining budget cannot pay for every sampled
   event, the events are judged in sample order as far as it goes and the rest are counted as
   *not judged: budget*.
3. **Judge** (:func:`rankscope.labels.judge_pairs`, the same cache, prompts and parsing as
   ``rankscope judge``): a document without text cannot be judged (counted); an event one of whose
   pairs failed is left out of the metrics (counted), never scored as if the document were not
   relevant.
4. **Score** with the engine (:class:`rankscope.engine.Evaluator`) on the judge's grades: each
   event is a query, its results in rank order the run; the mean of each metric with a two-sided
   betting interval (:func:`rankscope.stats.betting.betting_interval`, valid at any number of events).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankscope.errors import InvalidParameterError
from rankscope.i18n import _
from rankscope.monitor.events import RetrievalEvent
from rankscope.monitor.windows import hash_fraction

__all__ = ["sample_events", "JudgeBudget", "Spent", "JudgedWindow", "judge_events", "judging_depth",
           "DEFAULT_JUDGED_METRICS", "version_difference"]

DEFAULT_JUDGED_METRICS = ("precision@5", "ndcg@10", "hit_rate@5")


def sample_events(events: Iterable[RetrievalEvent], *, rate: float | None = None, per_window: int | None = None,
                  seed: int = 0) -> list[RetrievalEvent]:
    """The sampled events, stratified by retriever version, in sample order (smallest hash first).

    >>> from rankscope.monitor.events import parse_event
    >>> evs = [parse_event({"query": f"q{i}", "results": [], "time": i, "retriever": "ab"[i % 2]}) for i in range(10)]
    >>> [e.retriever for e in sample_events(evs, per_window=2)]
    ['a', 'a', 'b', 'b']
    """
    if (rate is None) == (per_window is None):
        raise InvalidParameterError(_("sampling needs a rate or a number per window (one of them)"))
    if rate is not None and not (isinstance(rate, (int, float)) and 0 < rate <= 1):
        raise InvalidParameterError(_("the sampling rate must be in (0, 1], got {value!r}", value=rate))
    if per_window is not None and (isinstance(per_window, bool) or not isinstance(per_window, int)
                                   or per_window < 1):
        raise InvalidParameterError(_("the sample per window must be a positive integer, got {value!r}",
                                      value=per_window))
    by_version: dict[str, list[tuple[float, RetrievalEvent]]] = {}
    seen: set[str] = set()
    for ev in events:
        if ev.key in seen:
            continue
        seen.add(ev.key)
        by_version.setdefault(ev.retriever, []).append((hash_fraction(ev.key, seed), ev))
    out: list[RetrievalEvent] = []
    for version in sorted(by_version):
        ranked = sorted(by_version[version], key=lambda x: x[0])
        keep = [ev for h, ev in ranked if h < rate] if rate is not None else [ev for __, ev in ranked[:per_window]]
        out.extend(keep)
    return out


@dataclass(frozen=True)
class JudgeBudget:
    """What judging may spend per day (UTC): LLM calls, tokens (input + output, estimated as ``judge --dry-run``
    does), and money (with prices per million input / output tokens); None: no limit of that kind."""

    calls: int | None = None
    tokens: int | None = None
    money: float | None = None
    price_in: float | None = None
    price_out: float | None = None

    def __post_init__(self) -> None:
        if self.money is not None and (self.price_in is None or self.price_out is None):
            raise InvalidParameterError(_("a budget in money needs the prices per million input and output tokens"))

    def fits(self, calls: int, tokens: int, money: float | None, spent: Spent) -> bool:
        if self.calls is not None and spent.calls + calls > self.calls:
            return False
        if self.tokens is not None and spent.tokens + tokens > self.tokens:
            return False
        return not (self.money is not None and spent.money + (money or 0.0) > self.money)

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "tokens": self.tokens, "money": self.money, "price_in": self.price_in,
                "price_out": self.price_out}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> JudgeBudget:
        return cls(**{k: v for k, v in (d or {}).items() if k in cls.__dataclass_fields__})


@dataclass
class Spent:
    """What judging spent so far today (estimates of the calls made: tokens as planned)."""

    calls: int = 0
    tokens: int = 0
    money: float = 0.0


@dataclass
class JudgedWindow:
    """The judged metrics of one sample: per metric ``{"mean", "lower", "upper", "n"}`` (interval at
    ``1 - alpha``), the per-event values, and what judging took and left out."""

    metrics: dict[str, dict[str, float | int | None]]
    per_event: dict[str, dict[str, float]]
    alpha: float
    sampled: int
    scored: int
    pairs: int = 0
    from_cache: int = 0
    judged_now: int = 0
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    planned_tokens: int = 0
    cost: float | None = None
    not_judged_budget: int = 0
    missing_text: int = 0
    failed_events: int = 0
    errors: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"metrics": self.metrics, "alpha": self.alpha, "sampled": self.sampled, "scored": self.scored,
                "pairs": self.pairs, "from_cache": self.from_cache, "judged_now": self.judged_now,
                "calls": self.calls, "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "planned_tokens": self.planned_tokens, "estimated_cost": self.cost,
                "not_judged_budget": self.not_judged_budget, "missing_text": self.missing_text,
                "failed_events": self.failed_events, "errors": dict(self.errors)}


def judging_depth(metrics: Sequence[str]) -> int:
    """How many documents of each event are judged: the largest cutoff of the metrics (10 when none has one).

    >>> judging_depth(["precision@5", "ndcg@10", "mrr"])
    10
    """
    from rankscope.measures import parse_metric

    cuts = [parse_metric(m).cutoff for m in metrics]
    return max([c for c in cuts if c is not None] or [10])


def _pairs(events: Sequence[RetrievalEvent], depth: int) -> tuple[list[tuple[str, str]], dict[str, str],
                                                                  dict[str, str]]:
    pairs: list[tuple[str, str]] = []
    queries: dict[str, str] = {}
    corpus: dict[str, str] = {}
    for ev in events:
        queries[ev.key] = ev.query
        for h in ev.results[:depth]:
            pairs.append((ev.key, h.id))
            if h.text is not None and h.id not in corpus:
                corpus[h.id] = h.text
    return pairs, queries, corpus


def judge_events(events: Sequence[RetrievalEvent], settings: Any, *,
                 metrics: Sequence[str] = DEFAULT_JUDGED_METRICS, cache: Any = None,
                 budget: JudgeBudget | None = None, spent: Spent | None = None, alpha: float = 0.05,
                 concurrency: int = 4, client: Any = None, judge: Callable[..., Any] | None = None,
                 relevance_level: int = 1) -> JudgedWindow:
    """Judge the sampled ``events`` and score them (see the module docstring); ``settings`` is a
    :class:`rankscope.labels.JudgeSettings`, ``cache`` a :class:`rankscope.labels.LabelCache` or its path; ``spent``
    is updated with what this call spent."""
    from rankscope.data import Run
    from rankscope.engine import Evaluator
    from rankscope.labels.batch import judge_pairs, plan_judging
    from rankscope.labels.cache import LabelCache
    from rankscope.labels.judge import judge_one
    from rankscope.monitor.alerts import metric_bounds
    from rankscope.stats.betting import betting_interval

    metrics = list(metrics)
    bounds = {m: metric_bounds(m) for m in metrics}
    depth = judging_depth(metrics)
    spent = spent if spent is not None else Spent()
    own = cache is not None and not isinstance(cache, LabelCache)
    db = LabelCache(cache) if own else cache
    try:
        chosen = list(events)
        pairs, queries, corpus = _pairs(chosen, depth)
        plan = plan_judging(pairs, queries, corpus, settings, cache=db)
        if budget is not None and not budget.fits(plan.calls, plan.tokens_in + plan.tokens_out,
                                                  plan.cost(budget.price_in, budget.price_out), spent):
            low, high = 0, len(chosen)  # the most events, in sample order, whose plan fits
            while low < high:
                mid = (low + high + 1) // 2
                p2 = plan_judging(_pairs(chosen[:mid], depth)[0], queries, corpus, settings, cache=db)
                if budget.fits(p2.calls, p2.tokens_in + p2.tokens_out, p2.cost(budget.price_in, budget.price_out),
                               spent):
                    low = mid
                else:
                    high = mid - 1
            chosen = chosen[:low]
            pairs, queries, corpus = _pairs(chosen, depth)
            plan = plan_judging(pairs, queries, corpus, settings, cache=db)
        out = JudgedWindow({}, {}, alpha, sampled=len(events), scored=0, not_judged_budget=len(events) - len(chosen),
                           planned_tokens=plan.tokens_in + plan.tokens_out)
        if budget is not None:
            out.cost = plan.cost(budget.price_in, budget.price_out)
        if not pairs:
            out.metrics = {m: {"mean": None, "lower": None, "upper": None, "n": 0} for m in metrics}
            return out
        report = judge_pairs(pairs, queries, corpus, settings, cache=db, concurrency=concurrency, progress=False,
                             client=client, judge=judge or judge_one)
    finally:
        if own and db is not None:
            db.close()
    spent.calls += report.http_calls
    spent.tokens += plan.tokens_in + plan.tokens_out
    if budget is not None:
        spent.money += plan.cost(budget.price_in, budget.price_out) or 0.0
    out.pairs, out.from_cache, out.judged_now = report.plan.items, report.from_cache, report.judged_now
    out.calls, out.tokens_in, out.tokens_out = report.http_calls, report.tokens_in, report.tokens_out
    out.missing_text, out.errors = len(report.plan.missing), dict(report.errors)
    labels = report.labels
    failed = {lab.query_id for lab in labels.failures()}
    keep = [ev for ev in chosen if ev.key not in failed and ev.results]
    out.failed_events = sum(1 for ev in chosen if ev.key in failed)
    qrels_all = labels.qrels
    if not keep:
        out.metrics = {m: {"mean": None, "lower": None, "upper": None, "n": 0} for m in metrics}
        return out
    qs, ds, vs = [], [], []
    for ev in keep:
        for rank, h in enumerate(ev.results[:depth]):
            qs.append(ev.key)
            ds.append(h.id)
            vs.append(float(depth - rank))
    run = Run.from_arrays(qs, ds, vs, "traffic", duplicates="keep_best")  # a repeated id counts at its first rank
    wanted = {ev.key for ev in keep}
    t = qrels_all.to_arrow()
    mask = np.fromiter((q in wanted for q in t["query_id"].to_pylist()), dtype=bool, count=t.num_rows)
    from rankscope.data import Qrels

    qrels = Qrels(t["query_id"].filter(mask), t["doc_id"].filter(mask), t["relevance"].to_numpy()[mask])
    res = Evaluator(qrels, metrics, relevance_level=relevance_level).evaluate(run)
    ids = [str(q) for q in res.per_query.query_ids]
    vals = res.per_query.values
    labels_order = list(res.labels)
    out.scored = len(ids)
    out.per_event = {q: {m: float(vals[i, j]) for j, m in enumerate(labels_order)} for i, q in enumerate(ids)}
    for j, m in enumerate(labels_order):
        col = vals[:, j]
        lo, hi, __ = bounds[metrics[j]]
        low, high = betting_interval(np.clip(col, lo, hi), bounds=(lo, hi), alpha=alpha)
        out.metrics[m] = {"mean": float(col.mean()), "lower": float(low), "upper": float(high), "n": int(col.size)}
    return out


def version_difference(new: Mapping[str, Any], old: Mapping[str, Any]) -> dict[str, Any] | None:
    """The difference of two versions' judged means on their own samples (``new - old``) with an interval that holds
    when both intervals do (``[new.lower - old.upper, new.upper - old.lower]``; each side at its level, so the
    difference at ``1 - 2 alpha`` or better).

    >>> version_difference({"mean": 0.6, "lower": 0.5, "upper": 0.7}, {"mean": 0.4, "lower": 0.3, "upper": 0.5})
    {'difference': 0.2, 'lower': 0.0, 'upper': 0.4}
    """
    if new.get("mean") is None or old.get("mean") is None:
        return None
    return {"difference": round(float(new["mean"]) - float(old["mean"]), 12),
            "lower": round(float(new["lower"]) - float(old["upper"]), 12),
            "upper": round(float(new["upper"]) - float(old["lower"]), 12)}
