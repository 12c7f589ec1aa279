"""Early stopping of :func:`~rankscope.retrieval.runner.evaluate_retriever` (``stop_when=``): rounds of queries in a
random order, an anytime-valid interval after each round (:class:`rankscope.stats.betting.StopWhen`).

The queries are shuffled with the rule's seed and run ``every`` at a time; after each round the metric of the
round's queries (or its difference to the baseline) feeds a confidence sequence over all the scorable queries
(sampling without replacement), and the evaluation stops as soon as the rule holds.  The interval reported at that
point covers the mean over *all* scorable queries with probability at least ``1 - alpha``, however early it
stopped: the sequence is valid at every round at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rankscope.data.testset import Query
from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import _
from rankscope.stats.betting import Stopped, StopWhen

__all__ = ["run_until", "StopWhen", "Stopped"]


def check_rule(rule: Any, scorable: Sequence[Query]) -> StopWhen:
    """The rule, checked before any call: a :class:`StopWhen`, with a baseline covering every scorable query."""
    from rankscope.measures.parse import parse_metric

    if not isinstance(rule, StopWhen):
        raise InvalidParameterError(_("stop_when must be a StopWhen, got {type}", type=type(rule).__name__))
    parse_metric(rule.metric)
    if rule.baseline is not None:
        missing = [q.id for q in scorable if q.id not in rule.baseline]
        if missing:
            some = Items(tuple(missing[:3]))
            raise InvalidParameterError(_("the baseline of stop_when has no value for {n} of the {total} queries "
                                          "(e.g. {some})", n=len(missing), total=len(scorable), some=some))
    return rule


def run_until(rule: StopWhen, scorable: Sequence[Query], run: Callable[[list[Query]], None],
              values: Callable[[list[Query]], Sequence[float]]) -> tuple[list[Query], Stopped]:
    """Run rounds of queries (``run``) until ``rule`` holds; ``values`` scores a round's queries (already run).

    Returns the queries used, in the test set's order, and how it stopped.
    """
    order = [scorable[i] for i in np.random.default_rng(rule.seed).permutation(len(scorable))]
    cs = rule.start(population=len(order))
    used: list[Query] = []
    reason = None
    for start in range(0, len(order), rule.every):
        batch = order[start:start + rule.every]
        run(batch)
        v = np.asarray(values(batch), dtype=np.float64)
        if rule.baseline is not None:
            v = v - np.array([rule.baseline[q.id] for q in batch], dtype=np.float64)
        cs.update(v)
        used += batch
        reason = rule.reason(cs)
        if reason is not None:
            break
    kept = {q.id for q in used}
    return [q for q in scorable if q.id in kept], Stopped(
        rule.metric, reason, len(used), len(order), cs.lower, cs.upper, cs.mean, rule.alpha,
        difference=rule.baseline is not None, width=rule.width, excludes=rule.excludes)

