"""Everything a report shows, gathered once into a JSON-ready dict.

:func:`build_report` turns a :class:`~rankscope.comparison.Comparison` (plus,
optionally, the qrels and runs it was computed from) into one plain dict:
means with confidence intervals, the best system per metric (computed, ties
kept), significance against the baseline, rating bands and advice, plain-language
explanations, production-standard tiers, per-query analysis (failing queries,
biggest wins and losses, first-relevant-rank distribution), per-query values and
metric@k curves.  Every renderer (JSON, Markdown, LaTeX, HTML, terminal) reads
this dict, so all formats agree.

First-relevant ranks are read from what the comparison already holds: the
``first_rel_rank`` values its results keep (``compare`` computes them with the
metrics, in the same pass), a ``first_rel_rank`` metric, or an uncut ``mrr``
column (``1/RR`` is exact).  Only when it holds none of them (results built
elsewhere) are they evaluated from the runs, if given (the registered measure,
through the engine).  With the qrels
and runs the curves evaluate ``ndcg@k``, ``recall@k``, ``precision@k`` for
``k = 1..kmax`` in one :class:`~rankscope.engine.Evaluator` call per run;
without them the curves are left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import _
from rankscope.interpret.analysis import (
    biggest_differences,
    failing_queries,
    ranks_from_reciprocal,
    summarize_first_ranks,
)
from rankscope.interpret.bands import metric_profile
from rankscope.interpret.explain import display_name
from rankscope.interpret.i18n import check_lang, setting_text
from rankscope.report.tables import percent
from rankscope.report.verdict import scenario_section, system_verdict

if TYPE_CHECKING:
    from rankscope.comparison import Comparison
    from rankscope.engine.policies import Policies
    from rankscope.measures.base import Measure

__all__ = ["build_report", "REPORT_SCHEMA_VERSION", "CURVE_METRICS", "reference_system"]

REPORT_SCHEMA_VERSION = 1
CURVE_METRICS: tuple[str, ...] = ("ndcg", "recall", "precision")


def reference_system(comparison: Comparison) -> str:
    """The system significance markers refer to: the baseline, else the first system."""
    return comparison.baseline or comparison.systems[0]


def _inputs(comparison: Comparison, qrels: Any, runs: Any) -> tuple[Any, dict[str, Any] | None]:
    qrels = qrels if qrels is not None else getattr(comparison, "qrels", None)
    runs = runs if runs is not None else getattr(comparison, "runs", None)
    if qrels is None or runs is None:
        return qrels, None
    if isinstance(runs, dict):
        named = {str(k): v for k, v in runs.items()}
    else:
        named = {getattr(r, "name", None) or f"run{i + 1}": r for i, r in enumerate(runs)}
    missing = [s for s in comparison.systems if s not in named]
    if missing:
        lacking = Items(tuple(missing))
        raise InvalidParameterError(_("runs given to the report lack system(s) {systems} of the comparison",
                                      systems=lacking))
    from rankscope.engine.result import EvaluationResult

    if any(isinstance(named[s], EvaluationResult) for s in comparison.systems):
        return qrels, None  # a saved evaluation has no ranking left to draw curves from
    return qrels, named


def _policies(comparison: Comparison) -> Policies:
    return comparison.results[comparison.systems[0]].policies


def align(ids: np.ndarray, values: np.ndarray, target: np.ndarray) -> np.ndarray:
    """``values`` (one per id of ``ids``, any order) in the order of ``target``; 0 where ``target`` holds an id
    that ``ids`` lacks.

    >>> align(np.array(["b", "a"], dtype=object), np.array([2, 1]), np.array(["a", "c", "b"], dtype=object)).tolist()
    [1, 0, 2]
    """
    ids = np.asarray(ids, dtype=object)
    order = np.argsort(ids)
    pos = np.clip(np.searchsorted(ids[order], target), 0, max(len(ids) - 1, 0))
    out = np.zeros(len(target), dtype=np.asarray(values).dtype)
    if len(ids):
        hit = ids[order][pos] == target
        out[hit] = np.asarray(values)[order][pos][hit]
    return out


def evaluated_first_ranks(qrels: Any, runs: Mapping[str, Any], policies: Policies,
                          query_ids: np.ndarray) -> dict[str, np.ndarray]:
    """Per run: the exact first-relevant ranks (the ``first_rel_rank`` measure) under ``policies``, aligned with
    ``query_ids`` (0: no relevant document retrieved)."""
    from rankscope.engine.evaluator import Evaluator

    ev = Evaluator(qrels, ["first_rel_rank"], policies=policies)
    out = {}
    for name, run in runs.items():
        res = ev.evaluate(run, name=name)
        out[name] = align(res.per_query.query_ids, res.per_query.values[:, 0].astype(np.int64), query_ids)
    return out


def failing_k(measures: Sequence[Measure]) -> int | None:
    """The rank a query must find a relevant document within not to fail: the cutoff of the first ``success@k``,
    else the largest cutoff asked; None when no metric has a cutoff."""
    hits = [m.cutoff for m in measures if m.name == "success" and m.cutoff]
    if hits:
        return int(hits[0])
    cut = [m.cutoff for m in measures if m.cutoff]
    return int(max(cut)) if cut else None


def metric_curves(qrels: Any, runs: Mapping[str, Any], policies: Policies, kmax: int,
                  query_ids: np.ndarray) -> dict[str, Any]:
    """Mean ``ndcg@k``, ``recall@k``, ``precision@k`` for ``k = 1..kmax`` per run over ``query_ids``, under
    ``policies`` (one :class:`~rankscope.engine.Evaluator` call per run)."""
    from rankscope.engine.evaluator import Evaluator

    ks = list(range(1, kmax + 1))
    names = [f"{m}@{k}" for m in CURVE_METRICS for k in ks]
    ev = Evaluator(qrels, names, policies=policies)
    out: dict[str, Any] = {"ks": ks, "systems": {}}
    for s, run in runs.items():
        res = ev.evaluate(run, name=s)
        keep = np.isin(res.per_query.query_ids, query_ids)
        means = res.per_query.values[keep].mean(axis=0) if keep.any() else np.zeros(len(names))
        out["systems"][s] = {m: means[i * kmax:(i + 1) * kmax].round(6).tolist() for i, m in enumerate(CURVE_METRICS)}
    return out


def _first_ranks(comparison: Comparison, qrels: Any, runs: dict[str, Any] | None) -> tuple[dict[str, np.ndarray], str]:
    """Per system: first-relevant ranks aligned with ``comparison.query_ids``; and their source."""
    held = {s: comparison.results[s].diagnostics for s in comparison.systems}
    if all(d is not None and "first_rel_rank" in d for d in held.values()):
        return {s: align(d.query_ids, d["first_rel_rank"].astype(np.int64), comparison.query_ids)
                for s, d in held.items() if d is not None}, "exact"
    for j, m in enumerate(comparison.measures):
        if m.name == "first_rel_rank" and m.cutoff is None and not m.params:
            return {s: comparison.scores[i, :, j].astype(np.int64) for i, s in enumerate(comparison.systems)}, "exact"
    for j, m in enumerate(comparison.measures):
        if m.name == "mrr" and m.cutoff is None and not m.params:
            return {s: ranks_from_reciprocal(comparison.scores[i, :, j])
                    for i, s in enumerate(comparison.systems)}, "reciprocal_rank"
    if runs is not None:
        return evaluated_first_ranks(qrels, {s: runs[s] for s in comparison.systems}, _policies(comparison),
                                     comparison.query_ids), "exact"
    return {}, "unavailable"


def _pair_name(p: dict[str, Any], names: dict[str, str]) -> str:
    return f"{p['b']} vs {p['a']} ({names[p['metric']]})"


def _significance(comparison: Comparison, ref: str) -> dict[str, dict[str, str | None]]:
    out: dict[str, dict[str, str | None]] = {}
    for s in comparison.systems:
        out[s] = {}
        for label, m in zip(comparison.labels, comparison.measures):
            mark = None
            if s != ref:
                p = comparison.pair(ref, s, label)
                if p.significant:
                    better = p.diff > 0 if m.spec.higher_is_better else p.diff < 0
                    mark = "better" if better else "worse"
            out[s][label] = mark
    return out


def build_report(
    comparison: Comparison,
    *,
    qrels: Any = None,
    runs: Any = None,
    lang: str = "en",
    kmax: int = 100,
    top_n: int = 5,
    scenario: str | None = None,
    curves: bool = True,
) -> dict[str, Any]:
    """Gather the report content of ``comparison`` (see module doc) into a JSON-ready dict.

    ``runs`` is a ``{name: run}`` dict or list of runs whose names are the comparison's systems;
    ``scenario`` (a :func:`~rankscope.interpret.presets.scenario_names` key) adds its benchmark figures;
    ``curves=False`` skips the metric@k curves.
    """
    from rankscope._version import __version__

    check_lang(lang)
    if isinstance(kmax, bool) or not isinstance(kmax, int) or kmax < 1:
        raise InvalidParameterError(_("kmax must be a positive integer, got {value!r}", value=kmax))
    qrels, named_runs = _inputs(comparison, qrels, runs)
    systems = list(comparison.systems)
    labels = list(comparison.labels)
    ref = reference_system(comparison)
    ids = comparison.query_ids

    # ratings and standards compare each mean with what a perfect ranking reaches on these qrels
    ceilings = dict(comparison.ceilings)
    verdicts = {s: system_verdict(comparison.means[s], comparison.measures, ceilings, comparison.scores[i],
                                  n=len(ids), lang=lang) for i, s in enumerate(systems)}
    ratings = {s: v["ratings"] for s, v in verdicts.items()}
    explanations = {s: v["explanations"] for s, v in verdicts.items()}
    standards = {s: v["standards"] for s, v in verdicts.items()}

    ranks, rank_source = _first_ranks(comparison, qrels, named_runs)
    k_fail = failing_k(comparison.measures)
    # a query without a relevant document is nobody's failure: listed apart
    no_rel = None if comparison.no_relevant is None else list(comparison.no_relevant)
    no_rel_count = len(no_rel) if no_rel is not None else max(
        (w.count for w in comparison.warnings if w.kind == "no_relevant"), default=0)
    no_rel_set = set(no_rel or ())
    analysis: dict[str, Any] = {
        "first_rank_source": rank_source,
        "first_rank": {s: summarize_first_ranks(r).to_dict() for s, r in ranks.items()},
        "failing_k": k_fail,
        "failing": {s: [q for q in failing_queries(ids, r, k_fail) if q not in no_rel_set]
                    for s, r in ranks.items()},
        "no_relevant": no_rel,
        "no_relevant_count": no_rel_count,
        "differences": [],
    }
    for s in systems:
        if s == ref:
            continue
        for j, label in enumerate(labels):
            a = comparison.scores[systems.index(ref), :, j]
            b = comparison.scores[systems.index(s), :, j]
            if not comparison.measures[j].spec.higher_is_better:
                a, b = -a, -b
            wins, losses = biggest_differences(ids, a, b, n=top_n)
            analysis["differences"].append({
                "a": ref, "b": s, "metric": label,
                "wins": [vars(d) for d in wins], "losses": [vars(d) for d in losses],
            })

    scen = scenario_section(scenario, comparison.means, lang)

    names = {label: display_name(label, m) for label, m in zip(labels, comparison.measures)}
    level = percent(1 - comparison.alpha)
    ci_method = setting_text("ci", getattr(comparison, "ci", "bootstrap"), lang)
    test_name = setting_text("test", comparison.test, lang)
    correction_name = setting_text("correction", comparison.correction, lang)
    pairs = comparison.to_dict()["pairs"]
    near = [f"{_pair_name(p, names)} p = {p['p_adjusted']:.3g} ± {p['p_mc_se']:.2g}" for p in pairs
            if p["near_alpha"] and p["p_mc_se"] is not None]
    drawn = comparison.permutations_drawn
    return {
        "schema": "rankscope.report",
        "schema_version": REPORT_SCHEMA_VERSION,
        "rankscope_version": __version__,
        "lang": lang,
        "systems": systems,
        "reference": ref,
        "metrics": labels,
        "display_names": names,
        "tags": dict(comparison.tags),
        "confidence": 1 - comparison.alpha,
        "ci_label": _("unadjusted {level} {method} CI", level=level, method=ci_method).text(lang),
        "ci_method": ci_method,
        "ci_short": _("{level} CI*", level=level).text(lang),
        "ci_note": _("* CI: the unadjusted {level} {method} interval of Δ (not corrected for multiple comparisons "
                     "and not taken from the test).", level=level, method=ci_method).text(lang),
        "test_name": test_name,
        "correction_name": correction_name,
        "legend": _("† significantly better than the baseline, ‡ significantly worse ({test}, {correction}, α = "
                    "{alpha}); bold: best value per metric.", test=test_name, correction=correction_name,
                    alpha=f"{comparison.alpha:g}").text(lang),
        "warnings": [w.text(lang) for w in comparison.warnings],
        "notices": [n.to_dict(lang) for n in comparison.notices],
        "near_alpha": _("Within Monte-Carlo error of α: {pairs}; the verdict could change with the seed (raise "
                        "--permutations).", pairs="; ".join(near)).text(lang) if near else None,
        "mc_note": _("p-values of the randomized test are given ± their Monte-Carlo standard error ({drawn} "
                     "permutations).", drawn=drawn).text(lang) if drawn else None,
        "ceilings": ceilings,
        "groups": comparison.groups,
        "groups_title": None if comparison.groups is None else _("Compact-letter groups ({test}, α = {alpha}): "
                                                                 "systems that share a letter are not "
                                                                 "significantly different", test=test_name,
                                                                 alpha=f"{comparison.alpha:g}").text(lang),
        "higher_is_better": {label: m.spec.higher_is_better for label, m in zip(labels, comparison.measures)},
        "n_queries": len(ids),
        "policies": _policies(comparison).to_dict(),
        "queries": {s: vars(comparison.results[s].queries) for s in systems},
        "judged": comparison.to_dict()["judged"],  # judged@10 of every run
        "comparison": comparison.to_dict(per_query=False),
        "leaders": {label: list(comparison.leaders(label)) for label in labels},
        "significance": _significance(comparison, ref),
        "ratings": ratings,
        "profiles": {label: metric_profile(m, lang) for label, m in zip(labels, comparison.measures)},
        "explanations": explanations,
        "standards": standards,
        "scenario": scen,
        "analysis": analysis,
        "query_ids": [str(q) for q in ids],
        "per_query": {s: {label: comparison.scores[i, :, j].tolist() for j, label in enumerate(labels)}
                      for i, s in enumerate(systems)},
        "first_ranks": {s: r.tolist() for s, r in ranks.items()},
        "curves": metric_curves(qrels, {s: named_runs[s] for s in systems}, _policies(comparison), kmax, ids)
        if curves and named_runs is not None else None,
    }
