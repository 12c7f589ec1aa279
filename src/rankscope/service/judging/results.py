"""What the annotators' judgments add up to: agreement between annotators, and labels to export.

Agreement
    For every pair of annotators, on the items both graded (skips left out): Cohen's κ on
    relevant / not relevant at ``relevance_level`` and linearly weighted κ on the grades, each with
    a 95% percentile-bootstrap interval, exact and binary agreement, the confusion matrix — all
    from :func:`rankscope.labels.agreement.label_agreement` (rows: the first annotator).  And each
    annotator against the pre-labels, on the items the annotator graded *blind* (without asking to
    see the pre-label); the others are counted, not compared.  With three or more annotators also
    Fleiss' κ and Krippendorff's α (ordinal) of all of them (``group``), intervals from a bootstrap
    over queries.
Export
    One label per item that has at least one grade from the chosen annotators (``annotator`` one
    name, or everyone): one grade is kept as it is; several are merged by ``merge`` — ``median``
    (the lower median: of two grades the lower), ``min`` or ``max``.  Each label is a human label
    whose provenance names its annotator(s) (comma-separated when merged).  With ``prelabels`` the
    pre-labels fill the items no annotator graded (human wins, :func:`rankscope.labels.combine`).
    Skipped and unjudged items are left out, and counted in the summary.  Each human label says
    whether it is ``blind``: false when the service had shown one of its annotators the item's
    pre-label before the grade was given (``not_blind`` in the summary counts them).

>>> rows = [("q1", "d1", "alice", 2), ("q1", "d1", "bob", 1), ("q1", "d2", "alice", 0)]
>>> labels, summary = export_labels(rows, [], n_items=3, merge="median")
>>> sorted(labels.qrels.to_dict()["q1"].items()), summary["merged"], summary["disagreements"]
([('d1', 1), ('d2', 0)], 1, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

__all__ = ["MERGES", "GRADES", "agreement", "export_labels", "merge_grades"]

GRADES = (0, 1, 2, 3)
MERGES = ("median", "min", "max")
RESAMPLES = 1000


def merge_grades(grades: list[int], merge: str) -> int:
    """One grade of several: ``median`` (the lower median), ``min`` or ``max``.

    >>> merge_grades([3, 1, 2], "median"), merge_grades([1, 2], "median"), merge_grades([1, 2], "max")
    (2, 1, 2)
    """
    ordered = sorted(grades)
    if merge == "min":
        return ordered[0]
    if merge == "max":
        return ordered[-1]
    return ordered[(len(ordered) - 1) // 2]


def _qrels(pairs: dict[tuple[str, str], int]) -> Any:
    from rankscope.data.qrels import Qrels

    nested: dict[str, dict[str, int]] = {}
    for (q, d), g in pairs.items():
        nested.setdefault(q, {})[d] = g
    return Qrels.from_dict(nested)


def _compare(a: dict[tuple[str, str], int], b: dict[tuple[str, str], int], relevance_level: int) -> dict[str, Any]:
    from rankscope.errors import NoOverlapError
    from rankscope.labels.agreement import label_agreement

    both = len(a.keys() & b.keys())
    out: dict[str, Any] = {"both": both, "only_a": len(a.keys() - b.keys()), "only_b": len(b.keys() - a.keys()),
                           "exact": None, "binary": None, "kappa_binary": None, "kappa_weighted": None,
                           "grades": [], "confusion": []}
    if not both:
        return out
    try:
        agr = label_agreement(_qrels(a), _qrels(b), relevance_level=relevance_level, weights="linear",
                              resamples=RESAMPLES, rng=0)
    except NoOverlapError:  # only negative grades in common
        return out
    out.update(exact=agr.exact, binary=agr.binary, kappa_binary=agr.kappa_binary.to_dict(),
               kappa_weighted=agr.kappa_weighted.to_dict(), grades=list(agr.grades),
               confusion=agr.confusion.astype(int).tolist())
    return out


def agreement(graded: list[tuple[str, str, str, int, bool]], prelabels: list[tuple[str, str, int]],
              relevance_level: int = 1) -> dict[str, Any]:
    """Pairwise agreement of the annotators and of each annotator with the pre-labels (module docstring).

    ``graded``: ``(query_id, doc_id, annotator, grade, prelabel_shown)`` of every non-skipped judgment;
    ``prelabels``: ``(query_id, doc_id, grade)`` of the items with a pre-label grade.

    >>> g = [("q", d, who, gr, False) for d, gr in (("a", 0), ("b", 1), ("c", 2), ("d", 3))
    ...      for who in ("alice", "bob")]
    >>> out = agreement(g, [("q", "a", 0), ("q", "b", 2)])
    >>> out["pairs"][0]["kappa_weighted"]["value"], out["prelabels"][0]["both"]
    (1.0, 2)
    """
    by: dict[str, dict[tuple[str, str], int]] = {}
    blind: dict[str, dict[tuple[str, str], int]] = {}
    shown: dict[str, int] = {}
    for q, d, who, grade, was_shown in graded:
        by.setdefault(who, {})[(q, d)] = grade
        if was_shown:
            shown[who] = shown.get(who, 0) + 1
        else:
            blind.setdefault(who, {})[(q, d)] = grade
    pre = {(q, d): g for q, d, g in prelabels}
    pairs = [{"a": a, "b": b, **_compare(by[a], by[b], relevance_level)} for a, b in combinations(sorted(by), 2)]
    vs_pre = []
    if pre:
        for who in sorted(by):
            row = _compare(blind.get(who, {}), pre, relevance_level)
            vs_pre.append({"annotator": who, "not_blind": shown.get(who, 0), **row})
    return {"relevance_level": relevance_level, "weights": "linear", "resamples": RESAMPLES, "level": 0.95,
            "annotators": sorted(by), "pairs": pairs, "prelabels": vs_pre, "group": _group(by)}


def _group(by: dict[str, dict[tuple[str, str], int]]) -> dict[str, Any] | None:
    """Fleiss' κ and Krippendorff's α (ordinal) of three or more annotators, with query-bootstrap intervals
    (:func:`rankscope.labels.group_agreement`); None with fewer annotators or no item graded by two."""
    from rankscope.errors import NoOverlapError
    from rankscope.labels.group_agreement import group_agreement

    if len(by) < 3:
        return None
    try:
        return group_agreement({who: _qrels(by[who]) for who in sorted(by)}, resamples=RESAMPLES, rng=0).to_dict()
    except NoOverlapError:
        return None


def export_labels(graded: Sequence[tuple[str, str, str, int] | tuple[str, str, str, int, bool]],
                  prelabels: list[dict[str, Any]], *, n_items: int, merge: str = "median", skipped: int = 0,
                  with_prelabels: bool = False) -> tuple[Any, dict[str, Any]]:
    """:class:`~rankscope.labels.Labels` to export and what they hold (module docstring).

    ``graded``: ``(query_id, doc_id, annotator, grade[, prelabel_shown])`` of the chosen annotators' non-skipped
    judgments (with ``prelabel_shown`` each label says whether it is ``blind``: every grade in it given without the
    service having shown the pre-label; the summary counts the others, ``not_blind``);
    ``prelabels``: label records (``query_id, doc_id, grade, source, model, prompt, error`` and any other column of
    :class:`~rankscope.labels.Label`: the receipt of a model's answer) of the items' pre-labels; ``skipped``: items
    that the chosen annotators only skipped (for the summary).
    """
    from rankscope.labels.provenance import Label, Labels, combine

    per_item: dict[tuple[str, str], dict[str, int]] = {}
    seen: dict[tuple[str, str], bool | None] = {}
    for row in graded:
        q, d, who, grade = row[:4]
        per_item.setdefault((q, d), {})[who] = grade
        shown = bool(row[4]) if len(row) > 4 else None  # type: ignore[misc]
        before = seen.get((q, d), False)
        seen[(q, d)] = None if shown is None or before is None else (before or shown)
    human = [Label(q, d, merge_grades(list(g.values()), merge), "human", annotator=",".join(sorted(g)),
                   blind=None if seen[(q, d)] is None else not seen[(q, d)])
             for (q, d), g in per_item.items()]
    labels = Labels.from_records(human)
    summary: dict[str, Any] = {"items": n_items, "human": len(human), "merge": merge,
               "merged": sum(1 for g in per_item.values() if len(g) > 1),
               "disagreements": sum(1 for g in per_item.values() if len(set(g.values())) > 1),
               "skipped": skipped, "prelabels": 0, "unlabelled": 0,
               "not_blind": sum(1 for v in seen.values() if v)}
    if with_prelabels and prelabels:
        known = set(Label.__dataclass_fields__)
        model = Labels.from_records(Label(**{k: v for k, v in p.items() if k in known}) for p in prelabels)
        both = combine(labels, model)
        labels = both.labels
        summary["prelabels"] = both.labels.counts()["model"]
        summary["prelabels_failed"] = both.labels.counts()["failed"]
    summary["unlabelled"] = n_items - summary["human"] - summary["prelabels"]
    return labels, summary

