"""Choose a fusion method and its parameters by cross-validation over queries: :func:`tune`.

Sweeping the weight of BM25 against a dense run (or RRF's ``k``, or the method)
and reporting the best mean on the same queries reports the maximum of many
noisy means: it is biased upward, and the "win" is often noise.  :func:`tune`
keeps the queries that choose a setting apart from the queries that score it:

1. every candidate setting (method × normalisation × parameters × weights, from
   a grid or drawn by optuna) is scored on every query (each run is pooled once;
   fusion and scoring are vectorised over the candidates:
   :mod:`rankscope.retrieval.fusion.scoring`);
2. the queries are split into ``folds`` (seeded); for each fold the setting with
   the best mean on the *other* folds is chosen (a supervised method is trained
   on those folds' judgments only) and scored on the held-out fold: every query
   gets an **out-of-fold** value from a setting chosen without it;
3. the out-of-fold mean, with its bootstrap interval, is the honest estimate of
   "tune on queries like these, then deploy"; it is compared, query by query,
   with each input run and with default RRF (``k = 60``) by the paired test of
   :func:`rankscope.compare` (Holm-corrected over those comparisons);
4. the setting refitted on all queries is the one to deploy; its in-sample mean
   is shown beside the out-of-fold one (the optimism the split avoids), with the
   setting each fold chose (how stable the choice is);
5. the recommendation: the tuned setting when it is significantly better than
   default RRF out of fold, otherwise default RRF — said in those words.

``nested=True`` estimates the whole recommendation procedure (inner
cross-validation, then the significance-gated choice between the tuned setting
and default RRF) on outer folds: what deploying what ``tune`` recommends is
worth on queries it never saw.

Live retrievers are tuned too: ``tune(testset, {"bm25": bm25, "dense": dense})``
asks each retriever once for its top ``retrieve_k`` documents per query and fuses
those runs offline.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import NC_, _, gettext, pgettext
from rankscope.retrieval.fusion.registry import METHODS, FusionSpec, get_method, get_norm

__all__ = ["tune", "TuneResult", "Setting", "DEFAULT_NORMS"]

DEFAULT_NORMS: tuple[str, ...] = ("minmax", "zscore")
TUNED = "tuned"
RRF_DEFAULT = "rrf"


#: the paired tests of the comparison, as the summary names them
_TESTS = {"t": NC_("tune", "paired t-test"), "wilcoxon": NC_("tune", "Wilcoxon signed-rank test"),
          "randomization": NC_("tune", "randomization test"), "tukey-hsd": NC_("tune", "randomized Tukey HSD")}

@dataclass(frozen=True)
class Setting:
    """One candidate: a method, its normalisation (None for a rank-only method), parameters and weights."""

    method: str
    norm: str | None = None
    params: tuple[tuple[str, float], ...] = ()
    weights: tuple[float, ...] | None = None

    def label(self) -> str:
        """``wsum(norm=minmax, weights=0.3/0.7)``: what ``rankscope fuse`` takes, in one line."""
        parts = [] if self.norm is None else [f"norm={self.norm}"]
        parts += [f"{k}={v:g}" for k, v in self.params]
        if self.weights is not None:
            parts.append("weights=" + "/".join(f"{w:g}" for w in self.weights))
        return f"{self.method}({', '.join(parts)})"

    def fuse_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of :func:`~rankscope.retrieval.fusion.fuse` for this setting."""
        out: dict[str, Any] = {"norm": self.norm if self.norm is not None else "minmax", **dict(self.params)}
        if self.weights is not None:
            out["weights"] = list(self.weights)
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"method": self.method, "norm": self.norm, "params": dict(self.params),
                "weights": None if self.weights is None else list(self.weights), "label": self.label()}


@dataclass(frozen=True)
class FoldChoice:
    """The setting fold ``fold`` chose on the other folds, its mean there and on the held-out fold."""

    fold: int
    setting: Setting
    train_mean: float
    test_mean: float
    queries: int


@dataclass(frozen=True, eq=False)
class TuneResult:
    """What :func:`tune` found (see the module doc); :meth:`text` says it, :meth:`to_dict` gives it as JSON.

    ``oof_mean`` / ``oof_ci``: the out-of-fold mean of ``metric`` and its bootstrap interval (level
    ``1 - alpha``); ``in_sample``: the mean of ``chosen`` on the queries that chose it; ``comparison``:
    the paired comparisons (:class:`~rankscope.comparison.Comparison`, baseline ``"tuned"`` = the
    out-of-fold values); ``recommended``: ``chosen`` when it is significantly better than default RRF
    out of fold, else default RRF.
    """

    metric: str
    folds: int
    seed: int
    queries: int
    candidates: int
    methods: tuple[str, ...]
    chosen: Setting
    in_sample: float
    oof_mean: float
    oof_ci: tuple[float, float] | None
    per_fold: tuple[FoldChoice, ...]
    comparison: Any
    significant_vs_rrf: bool
    recommended: Setting
    runs: tuple[str, ...]
    top: tuple[tuple[Setting, float], ...]
    alpha: float
    test: str
    seconds: float
    oof: np.ndarray = field(repr=False)
    query_ids: np.ndarray = field(repr=False)
    nested: dict[str, Any] | None = None
    search: str = "grid"

    @property
    def stability(self) -> float:
        """Share of folds that chose the setting refitted on all queries."""
        return sum(f.setting == self.chosen for f in self.per_fold) / max(len(self.per_fold), 1)

    def pair(self, other: str) -> Any:
        """The comparison of the tuned (out-of-fold) values with ``other`` (an input run's name, or ``"rrf"``)."""
        return self.comparison.pair(TUNED, other, self.comparison.labels[0])

    def text(self, lang: str = "en") -> str:
        """The summary, in ``lang``: the chosen setting, its out-of-fold and in-sample means, every comparison,
        the stability of the choice and the recommendation."""
        ci = "" if self.oof_ci is None else _(" [{lo}, {hi}] ({level}% bootstrap interval)",
                                              lo=f"{self.oof_ci[0]:.4f}", hi=f"{self.oof_ci[1]:.4f}",
                                              level=f"{100 * (1 - self.alpha):g}").text(lang)
        lines = [
            _("searched {n} settings ({methods}) by {folds}-fold cross-validation over {queries} queries (seed "
              "{seed}, {search})", n=self.candidates, methods=Items(self.methods).text(lang), queries=self.queries,
              folds=self.folds, seed=self.seed, search=self.search).text(lang),
            _("chosen (refitted on all queries): {setting}", setting=self.chosen.label()).text(lang),
            _("out of fold: {metric} = {mean}{ci}", metric=self.metric, mean=f"{self.oof_mean:.4f}", ci=ci).text(lang),
            _("in sample (the same queries chose and scored it): {metric} = {mean} ({optimism} of optimism)",
              metric=self.metric, mean=f"{self.in_sample:.4f}",
              optimism=_signed(self.in_sample - self.oof_mean)).text(lang),
            _("stability: {same} of {folds} folds chose this setting",
              same=sum(f.setting == self.chosen for f in self.per_fold), folds=len(self.per_fold)).text(lang),
        ]
        for f in self.per_fold:
            lines.append(_("  fold {fold}: {setting}: {train} on the other folds, {test} on its {n} queries",
                           fold=f.fold + 1, setting=f.setting.label(), train=f"{f.train_mean:.4f}",
                           test=f"{f.test_mean:.4f}", n=f.queries).text(lang))
        c = self.comparison
        test_said = gettext(_TESTS[c.test], lang, context="tune") if c.test in _TESTS else c.test
        lines.append(_("out-of-fold difference per query ({test}, {correction} correction, alpha = {alpha}, "
                       "two-sided):", test=test_said, correction=c.correction, alpha=f"{c.alpha:g}").text(lang))
        for name in (*self.runs, RRF_DEFAULT):
            p = self.pair(name)
            verdict = gettext("better" if p.significant and p.diff < 0 else
                              "worse" if p.significant else "not significantly different", lang)
            lo, hi = (-p.diff_ci[1], -p.diff_ci[0]) if p.diff_ci is not None else (math.nan, math.nan)
            lines.append(_("  vs {name}: {diff} [{lo}, {hi}], p {p}: {verdict}",
                           name=name if name != RRF_DEFAULT else "rrf (k=60)", diff=_signed(-p.diff), lo=_signed(lo),
                           hi=_signed(hi), p=_p(p.p_adjusted), verdict=verdict).text(lang))
        if self.nested is not None:
            n = self.nested
            nci = "" if n["ci"] is None else _(" [{lo}, {hi}] ({level}% bootstrap interval)", lo=f"{n['ci'][0]:.4f}",
                                               hi=f"{n['ci'][1]:.4f}", level=f"{100 * (1 - self.alpha):g}").text(lang)
            lines.append(_("nested cross-validation of the whole procedure (tune, then keep the default unless "
                           "significantly better): {metric} = {mean}{ci}; the tuned setting was kept in {tuned} of "
                           "{folds} outer folds", metric=self.metric, mean=f"{n['mean']:.4f}", ci=nci,
                           tuned=n["tuned_folds"], folds=len(n["per_fold"])).text(lang))
        said = {"setting": self.chosen.label(), "default": "rrf (k=60)"}
        lines.append((_("recommendation: {setting}: significantly better than {default} out of fold", **said)
                      if self.significant_vs_rrf else
                      _("recommendation: keep {default}: the tuned setting is not significantly better out of fold",
                        **said)).text(lang))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text("en")

    def to_dict(self) -> dict[str, Any]:
        """Every figure, JSON-ready (the out-of-fold values per query included)."""
        return {
            "metric": self.metric, "folds": self.folds, "seed": self.seed, "queries": self.queries,
            "candidates": self.candidates, "methods": list(self.methods), "search": self.search,
            "chosen": self.chosen.to_dict(), "in_sample": self.in_sample, "oof_mean": self.oof_mean,
            "oof_ci": None if self.oof_ci is None else list(self.oof_ci), "stability": self.stability,
            "per_fold": [{"fold": f.fold + 1, "setting": f.setting.to_dict(), "train_mean": f.train_mean,
                          "test_mean": f.test_mean, "queries": f.queries} for f in self.per_fold],
            "comparisons": [p.to_dict() for p in self.comparison.pairs],
            "test": self.comparison.test, "correction": self.comparison.correction, "alpha": self.alpha,
            "significant_vs_rrf": self.significant_vs_rrf, "recommended": self.recommended.to_dict(),
            "top_in_sample": [{"setting": s.to_dict(), "mean": m} for s, m in self.top],
            "nested": None if self.nested is None else {
                "mean": self.nested["mean"], "ci": self.nested["ci"], "tuned_folds": self.nested["tuned_folds"],
                "per_fold": self.nested["per_fold"]},
            "seconds": self.seconds,
            "oof_per_query": dict(zip(self.query_ids.tolist(), self.oof.tolist())),
        }


def _signed(x: float) -> str:
    """``+0.0123`` (never ``-0.0000``)."""
    return f"{x + 0.0:+.4f}" if round(x, 4) != 0 else "+0.0000"


def _p(p: float) -> str:
    """A p-value as printed after ``p``: ``< 0.001`` below that, else ``= `` and three significant digits."""
    return "< 0.001" if p < 0.001 else f"= {p:.3g}"


# -- candidates ------------------------------------------------------------------------------------------------
def simplex(n_runs: int, step: float = 0.1) -> list[tuple[float, ...]]:
    """Weight vectors whose components are multiples of ``step`` and sum to 1 (ranx's grid of weights).

    >>> simplex(2, 0.25)
    [(0.0, 1.0), (0.25, 0.75), (0.5, 0.5), (0.75, 0.25), (1.0, 0.0)]
    """
    m = round(1 / step)
    out = []
    for combo in itertools.product(range(m + 1), repeat=n_runs):
        if sum(combo) == m:
            out.append(tuple(round(c / m, 10) for c in combo))
    return out


def _values(name: str, given: Any) -> list[Any]:
    if isinstance(given, (str, bytes)) or not isinstance(given, (Sequence, np.ndarray)):
        return [given]
    vals = list(given)
    if not vals:
        raise InvalidParameterError(_("grid: {name} lists no value", name=name))
    return vals


def candidates(methods: Sequence[str] | None, grid: Mapping[str, Any] | None, n_runs: int,
               weight_step: float = 0.1) -> list[Setting]:
    """Every setting of the grid (see :func:`tune`)."""
    specs = list(METHODS) if methods is None else [get_method(m) for m in methods]
    grid = dict(grid or {})
    per_method = {get_method(k).name: v for k, v in grid.items() if _is_method(k)}
    shared = {k: v for k, v in grid.items() if not _is_method(k)}
    known = {"norm", "weights"} | {p.name for s in specs for p in s.params}
    for key in shared:
        if key not in known:
            allowed = Items(tuple(sorted(known)))
            raise InvalidParameterError(_("grid: no method searched takes {name!r} (grid keys: {allowed})", name=key,
                                          allowed=allowed))
    out: list[Setting] = []
    for spec in specs:
        g = {**shared, **dict(per_method.get(spec.name, {}))}
        out.extend(_settings(spec, g, n_runs, weight_step))
    seen: set[Setting] = set()
    unique = [s for s in out if not (s in seen or seen.add(s))]  # type: ignore[func-returns-value]
    return unique


def _is_method(key: str) -> bool:
    try:
        get_method(key)
    except InvalidParameterError:
        return False
    return True


def _settings(spec: FusionSpec, g: Mapping[str, Any], n_runs: int, weight_step: float) -> list[Setting]:
    if spec.scores:
        norms = [get_norm(n) for n in _values("norm", g.get("norm", DEFAULT_NORMS))]
        norm_names: list[str | None] = [None if n is None else n.name for n in norms]
    else:
        norm_names = [None if n is None or n.name not in ("borda",) else n.name
                      for n in (get_norm(x) for x in _values("norm", g.get("norm", [None])))]
        norm_names = list(dict.fromkeys(norm_names))
    if "min-max-inverted" in norm_names:
        raise InvalidParameterError(_("tune does not search min-max-inverted: give runs whose higher scores are "
                                      "better"))
    axes = []
    for p in spec.params:
        axes.append([(p.name, p.check(spec.name, v)) for v in _values(p.name, g.get(p.name, p.grid))])
    if spec.weights == "required":
        ws: list[tuple[float, ...] | None] = [tuple(float(x) for x in w) for w in g.get("weights",
                                                                                         simplex(n_runs, weight_step))]
    elif spec.weights == "optional" and "weights" in g:
        ws = [None if w is None else tuple(float(x) for x in w) for w in g["weights"]]
    else:
        ws = [None]
    for w in ws:
        if w is not None and (len(w) != n_runs or any(not math.isfinite(x) or x < 0 for x in w)):
            raise InvalidParameterError(_("grid: weights {weights} must be {n} numbers >= 0", weights=list(w),
                                          n=n_runs))
    out = []
    for norm in norm_names:
        for combo in itertools.product(*axes) if axes else [()]:
            for w in ws:
                out.append(Setting(spec.name, norm, tuple(combo), w))
    return out


# -- the evaluation of candidates --------------------------------------------------------------------------------
class _Table:
    """Per-query values of candidate settings, computed once (unsupervised) or per training set (supervised)."""

    def __init__(self, pool: Any, evaluator: Any, settings: list[Setting], eager: bool = True) -> None:
        from rankscope.measures.parse import parse_metric
        from rankscope.retrieval.fusion.scoring import PoolScorer

        self.pool, self.ev, self.settings = pool, evaluator, settings
        self.scorer = PoolScorer(pool, evaluator)
        self._scorers: dict[int, Any] = {id(pool): self.scorer}
        self._map_scorer: Any = None
        self._parse = parse_metric
        self.supervised = np.array([get_method(s.method).supervised for s in settings], dtype=bool)
        self.fixed = np.zeros((len(settings), self.scorer.n_eval))
        self.done = np.zeros(len(settings), dtype=bool)
        self._cache: dict[tuple[int, bytes], np.ndarray] = {}
        if eager:
            self._score_unsupervised(np.flatnonzero(~self.supervised))

    def scorer_for(self, pool: Any) -> Any:
        from rankscope.retrieval.fusion.scoring import PoolScorer

        if id(pool) not in self._scorers:
            self._scorers[id(pool)] = PoolScorer(pool, self.ev)
        return self._scorers[id(pool)]

    def _score_unsupervised(self, which: np.ndarray) -> None:
        """Score the unsupervised settings ``which``, batched by (method, norm)."""
        from rankscope.retrieval.fusion.methods import KERNELS

        groups: dict[tuple[str, str | None], list[int]] = {}
        for i in which:
            s = self.settings[int(i)]
            groups.setdefault((s.method, s.norm), []).append(int(i))
        n_runs = self.pool.n_runs
        chunk = max(1, 4_000_000 // max(self.pool.n_rows, 1))
        for (method, norm), idx in groups.items():
            feat = self.pool.features(norm)
            scorer = self.scorer_for(feat.pool)
            spec = get_method(method)
            for start in range(0, len(idx), chunk):
                part = idx[start:start + chunk]
                w = np.array([self.settings[i].weights or (1.0,) * n_runs for i in part])
                params = {p.name: np.array([dict(self.settings[i].params)[p.name] for i in part], dtype=np.float64)
                          for p in spec.params}
                fused = KERNELS[method](feat, w, params)
                if fused.shape[0] == 1 and len(part) > 1:
                    fused = np.repeat(fused, len(part), axis=0)
                self.fixed[part] = scorer.values(fused)[:, :, 0]
                self.done[part] = True

    def values(self, i: int, train: np.ndarray | None = None) -> np.ndarray:
        """Per-query values of setting ``i`` (a supervised one trained on the queries ``train``, default all)."""
        if not self.supervised[i]:
            if not self.done[i]:
                self._score_unsupervised(np.array([i]))
            return self.fixed[i]
        mask = np.ones(self.scorer.n_eval, dtype=bool) if train is None else train
        key = (i, np.packbits(mask).tobytes())
        if key not in self._cache:
            from rankscope.retrieval.fusion import learn
            from rankscope.retrieval.fusion.train import supervised_scores

            s = self.settings[i]
            spec = get_method(s.method)
            feat = self.pool.features(s.norm)
            if self._map_scorer is None:
                from rankscope.retrieval.fusion.scoring import PoolScorer

                self._map_scorer = PoolScorer(self.pool, self.ev, (self._parse("map"),))
            params = dict(s.params)
            tables, __ = learn(spec, feat, params, self.ev, mask, scorer=self._map_scorer)
            fused = supervised_scores(spec.name, feat, tables, params)
            self._cache[key] = self.scorer_for(feat.pool).values(fused[None, :])[0, :, 0]
        return self._cache[key]

    def means(self, rows: np.ndarray, train: np.ndarray) -> np.ndarray:
        """Mean over ``rows`` of every setting (supervised ones trained on ``train``)."""
        self._score_unsupervised(np.flatnonzero(~self.supervised & ~self.done))
        out = self.fixed[:, rows].mean(axis=1) if len(rows) else np.zeros(len(self.settings))
        for i in np.flatnonzero(self.supervised):
            out[i] = self.values(int(i), train)[rows].mean()
        return out

    def select(self, rows: np.ndarray, train: np.ndarray) -> tuple[int, float]:
        """The setting with the best mean over ``rows`` (the first of equal ones) and that mean."""
        if self.search is not None:
            return self.search(self, rows, train)
        means = self.means(rows, train)
        best = int(np.argmax(means))
        return best, float(means[best])

    search: Any = None  # a search over the settings (optuna) instead of trying them all


def _folds(n: int, folds: int, rng: np.random.Generator) -> np.ndarray:
    """Fold number of each of ``n`` queries: a seeded permutation dealt round-robin."""
    fold = np.empty(n, dtype=np.int64)
    fold[rng.permutation(n)] = np.arange(n) % folds
    return fold


def _cross_validate(table: _Table, rows: np.ndarray, folds: int, rng: np.random.Generator
                    ) -> tuple[np.ndarray, list[tuple[int, np.ndarray, float]]]:
    """Out-of-fold values on ``rows`` (selection on the other folds) and each fold's (choice, test rows, train mean)."""
    n_all = table.scorer.n_eval
    fold = _folds(len(rows), folds, rng)
    oof = np.zeros(len(rows))
    chosen: list[tuple[int, np.ndarray, float]] = []
    for f in range(folds):
        test = rows[fold == f]
        train = rows[fold != f]
        mask = np.zeros(n_all, dtype=bool)
        mask[train] = True
        best, train_mean = table.select(train, mask)
        oof[fold == f] = table.values(best, mask)[test]
        chosen.append((best, test, train_mean))
    return oof, chosen


def _significant(comparison: Any) -> bool:
    """The recommendation rule: the tuned values beat default RRF (adjusted p <= alpha, better mean)."""
    p = comparison.pair(TUNED, RRF_DEFAULT, comparison.labels[0])
    return bool(p.significant and p.diff < 0)  # diff = rrf - tuned


@dataclass
class _Judge:
    """What the recommendation compares with: the evaluator, the scorer, each baseline's per-query values, the test."""

    ev: Any
    scorer: Any
    baselines: dict[str, np.ndarray]
    label: str
    test: str
    alpha: float
    seed: int

    def compare(self, tuned: np.ndarray, rows: np.ndarray | None = None) -> Any:
        """:func:`rankscope.compare` of ``tuned`` (out-of-fold values on ``rows``) with every baseline there."""
        from rankscope.comparison import compare

        pick = slice(None) if rows is None else rows
        qids = self.scorer.query_ids[pick]
        values = {TUNED: tuned, **{k: v[pick] for k, v in self.baselines.items()}}
        results = {name: self.ev.result(name, qids, v[:, None], self.scorer.counts, None)
                   for name, v in values.items()}
        return compare(None, results, [self.label], test=self.test, alpha=self.alpha, baseline=TUNED, rng=self.seed)


def _procedure(table: _Table, rows: np.ndarray, folds: int, rng: np.random.Generator, judge: _Judge) -> int | None:
    """What :func:`tune` recommends when it sees only ``rows``: a setting index, or None for default RRF."""
    oof, _folds = _cross_validate(table, rows, folds, rng)
    mask = np.zeros(table.scorer.n_eval, dtype=bool)
    mask[rows] = True
    best, __ = table.select(rows, mask)
    return best if _significant(judge.compare(oof, rows)) else None


# -- the entry point ---------------------------------------------------------------------------------------------
def _resolve(qrels: Any, runs: Any, retrieve_k: int, depth: int | None) -> tuple[Any, list[Any]]:
    """``(qrels, runs)``: retrievers are run once over the test set (their top ``retrieve_k``), runs read."""
    from rankscope.data.testset import TestSet
    from rankscope.retrieval.compare_entry import is_retriever
    from rankscope.retrieval.fusion import _as_runs

    if isinstance(runs, Mapping) and any(is_retriever(v) for v in runs.values()):
        from rankscope.retrieval.runner import evaluate_retriever

        example = "tune(testset, {name: retriever, ...})"
        if not isinstance(qrels, TestSet):
            raise InvalidParameterError(_("to tune retrievers, pass the test set first: {example}", example=example))
        k = max(retrieve_k, depth or 0)
        out = {}
        for name, value in runs.items():
            if is_retriever(value):
                ev = evaluate_retriever(value, qrels, ["ndcg@10"], k=k, name=str(name))
                out[str(name)] = ev.doc_run if ev.doc_run is not None else ev.run
            else:
                out[str(name)] = value
        runs = out
    if isinstance(qrels, TestSet):
        qrels = qrels.qrels
    run_list = _as_runs(runs)
    if len(run_list) < 2:
        raise InvalidParameterError(_("tune needs at least two runs to fuse, got {n}", n=len(run_list)))
    names = [r.name for r in run_list]
    if len(set(names)) != len(names) or TUNED in names or RRF_DEFAULT in names:
        raise InvalidParameterError(_("tune needs distinct run names other than {tuned!r} and {rrf!r}; got {names}",
                                      tuned=TUNED, rrf=RRF_DEFAULT, names=Items(tuple(names))))
    return qrels, run_list


def tune(
    qrels: Any,
    runs: Sequence[Any] | Mapping[str, Any],
    method: str | Sequence[str] | None = None,
    grid: Mapping[str, Any] | None = None,
    *,
    search: str = "grid",
    trials: int = 100,
    metric: str = "ndcg@10",
    folds: int = 5,
    seed: int = 0,
    nested: bool = False,
    alpha: float = 0.05,
    test: str = "t",
    depth: int | None = None,
    weight_step: float = 0.1,
    retrieve_k: int = 100,
    relevance_level: int = 1,
    bootstrap: int = 1000,
) -> TuneResult:
    """Choose a fusion method and parameters by ``folds``-fold cross-validation over queries (see the module doc).

    Parameters
    ----------
    qrels:
        The judgments (or a :class:`~rankscope.data.testset.TestSet`, required with retrievers).
    runs:
        ``{name: run}`` or a list of runs (two or more), or ``{name: retriever}`` (each asked once for its
        top ``retrieve_k`` documents of every test-set query).
    method:
        A method name, a list of them, or None (every method of the registry, supervised ones included).
    grid:
        Values to try per parameter: ``{"k": [10, 60]}``, ``{"norm": ["minmax", "zscore"]}``, ``{"weights":
        [[0.3, 0.7], ...]}``; per method with method names as keys (``{"rrf": {"k": [...]}}``).  Unset
        parameters take the registry's grid (weights: every vector of multiples of ``weight_step`` summing to 1;
        norms of score-based methods: ``"minmax"`` and ``"zscore"``).
    search:
        ``"grid"`` (every setting) or ``"optuna"`` (``trials`` settings drawn from the grid by optuna's TPE sampler,
        seeded; the optional extra ``rankscope[tune]``).
    metric:
        The metric to maximise (any rankscope metric; default nDCG@10).
    folds, seed:
        Cross-validation folds over the qrels queries and the seed of the split (and of the bootstrap).
    nested:
        Also estimate the whole recommendation procedure on outer folds (its own inner ``folds``-fold CV).
    alpha, test:
        Significance level (also of the intervals) and the paired test (as :func:`rankscope.compare`).
    depth:
        Fuse only each run's top ``depth`` documents per query.

    >>> from rankscope import Qrels, Run
    >>> qrels = Qrels.from_dict({f"q{i}": {f"a{i}": 1} for i in range(30)})
    >>> good = Run.from_ranked_lists({f"q{i}": [f"a{i}", "x", "y"] for i in range(30)}, name="good")
    >>> weak = Run.from_ranked_lists({f"q{i}": ["x", "y", f"a{i}"] for i in range(30)}, name="weak")
    >>> r = tune(qrels, [good, weak], "wsum", {"norm": ["minmax"]}, metric="mrr", weight_step=0.5)
    >>> r.chosen.label(), round(r.oof_mean, 3), r.pair("weak").significant
    ('wsum(norm=minmax, weights=1/0)', 1.0, True)
    """
    from rankscope.engine.evaluator import Evaluator
    from rankscope.measures.parse import parse_metrics
    from rankscope.retrieval.fusion import _check_depth
    from rankscope.retrieval.fusion.methods import KERNELS
    from rankscope.retrieval.fusion.pool import Pool
    from rankscope.stats import bootstrap as bs

    started = time.perf_counter()
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise InvalidParameterError(_("folds must be an integer >= 2, got {value!r}", value=folds))
    if search not in ("grid", "optuna"):
        raise InvalidParameterError(_("search must be 'grid' or 'optuna', got {value!r}", value=search))
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not 0 < alpha < 1:
        raise InvalidParameterError(pgettext("stats.alpha",
                                             "alpha must be a number between 0 and 1, got {value!r}", value=alpha))
    _check_depth(depth)
    pairs = parse_metrics(metric)
    if len(pairs) != 1:
        raise InvalidParameterError(_("tune maximises one metric, got {n}", n=len(pairs)))
    label, measure = pairs[0]
    if not measure.spec.higher_is_better:
        raise InvalidParameterError(_("tune maximises a metric; {metric} is better when lower", metric=label))
    qrels, run_list = _resolve(qrels, runs, retrieve_k, depth)
    methods = [method] if isinstance(method, str) else (None if method is None else list(method))
    settings = candidates(methods, grid, len(run_list), weight_step)
    rng = np.random.default_rng(seed)
    ev = Evaluator(qrels, [label], relevance_level=relevance_level)
    pool = Pool.build(run_list, depth)
    table = _Table(pool, ev, settings, eager=search == "grid")
    if search == "optuna":
        table.search = _optuna_search(trials, seed)
    scorer = table.scorer
    n = scorer.n_eval
    if n < folds:
        raise InvalidParameterError(_("{folds}-fold cross-validation needs at least {folds} queries, got {n}",
                                      folds=folds, n=n))
    every = np.arange(n)
    # the baselines: each input run (cut at depth) and default RRF, scored on the same pool
    inputs = {r.name: scorer.run_values(pool.rank[i], pool.present[i], pool.length[i])[:, 0]
              for i, r in enumerate(run_list)}
    rrf = scorer.values(KERNELS["rrf"](pool.features(None), np.ones((1, pool.n_runs)),
                                       {"k": np.array([60.0])}))[0, :, 0]

    oof, chosen = _cross_validate(table, every, folds, rng)
    all_mask = np.ones(n, dtype=bool)
    best, __ = table.select(every, all_mask)
    means = np.array([table.values(i, all_mask).mean() if table.done[i] or table.supervised[i] else -np.inf
                      for i in range(len(settings))])
    order = [i for i in np.argsort(-means, kind="stable")[:10] if np.isfinite(means[i])]
    per_fold = tuple(FoldChoice(f, settings[c], tm, float(oof[np.isin(every, test)].mean()), len(test))
                     for f, (c, test, tm) in enumerate(chosen))

    judge = _Judge(ev, scorer, {**inputs, RRF_DEFAULT: rrf}, label, test, alpha, seed)
    comparison = judge.compare(oof)
    significant = _significant(comparison)
    boot = bs.bootstrap_means(oof[None, :], bootstrap, np.random.default_rng(seed))
    lo, hi = bs.percentile_ci(boot, alpha)
    nested_out = _nested(table, folds, seed, judge, alpha, bootstrap) if nested else None
    rrf_setting = Setting("rrf", None, (("k", 60.0),))
    return TuneResult(
        metric=label, folds=folds, seed=seed, queries=n, candidates=len(settings),
        methods=tuple(dict.fromkeys(s.method for s in settings)), chosen=settings[best],
        in_sample=float(table.values(best, all_mask).mean()), oof_mean=float(oof.mean()),
        oof_ci=None if n < 2 else (float(lo[0]), float(hi[0])), per_fold=per_fold, comparison=comparison,
        significant_vs_rrf=significant, recommended=settings[best] if significant else rrf_setting,
        runs=tuple(r.name for r in run_list), top=tuple((settings[i], float(means[i])) for i in order),
        alpha=float(alpha), test=test, seconds=time.perf_counter() - started, oof=oof, query_ids=scorer.query_ids,
        nested=nested_out, search=search,
    )


def _nested(table: _Table, folds: int, seed: int, judge: _Judge, alpha: float, bootstrap: int) -> dict[str, Any]:
    """The out-of-fold value of the whole recommendation procedure (inner CV + the gate against default RRF)."""
    from rankscope.stats import bootstrap as bs

    rrf = judge.baselines[RRF_DEFAULT]
    n = table.scorer.n_eval
    rng = np.random.default_rng([seed, 1])
    outer = _folds(n, folds, rng)
    values = np.zeros(n)
    per_fold = []
    tuned = 0
    for f in range(folds):
        train, test = np.flatnonzero(outer != f), np.flatnonzero(outer == f)
        pick = _procedure(table, train, folds, np.random.default_rng([seed, 2, f]), judge)
        mask = np.zeros(n, dtype=bool)
        mask[train] = True
        values[test] = rrf[test] if pick is None else table.values(pick, mask)[test]
        tuned += pick is not None
        per_fold.append({"fold": f + 1, "recommended": "rrf(k=60)" if pick is None else table.settings[pick].label(),
                         "test_mean": float(values[test].mean())})
    boot = bs.bootstrap_means(values[None, :], bootstrap, np.random.default_rng([seed, 3]))
    lo, hi = bs.percentile_ci(boot, alpha)
    return {"mean": float(values.mean()), "ci": None if n < 2 else (float(lo[0]), float(hi[0])),
            "tuned_folds": tuned, "per_fold": per_fold, "values": values}


def _optuna_search(trials: int, seed: int) -> Any:
    """A search that asks optuna's TPE sampler (seeded) for ``trials`` settings of the grid, each scored by its mean
    on the selecting queries, and keeps the best: a method, then each of its axes (normalisation, parameters,
    weights) drawn from the grid's values."""
    try:
        import optuna
    except ImportError:
        raise InvalidParameterError(_("{who} needs {package}: pip install 'rankscope[{extra}]'", who="search='optuna'",
                                      package="optuna", extra="tune")) from None
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise InvalidParameterError(_("trials must be a positive integer, got {value!r}", value=trials))
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    calls = [0]

    def search(table: _Table, rows: np.ndarray, train: np.ndarray) -> tuple[int, float]:
        index = {s: i for i, s in enumerate(table.settings)}
        axes: dict[str, dict[str, list[Any]]] = {}
        for s in table.settings:
            ax = axes.setdefault(s.method, {"norm": [], "weights": [], **{k: [] for k, __ in s.params}})
            for key, value in (("norm", s.norm), ("weights", s.weights), *s.params):
                if value not in ax[key]:
                    ax[key].append(value)
        methods = list(axes)
        calls[0] += 1
        study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed + calls[0]), direction="maximize")
        best: tuple[float, int] = (-np.inf, 0)
        for __ in range(trials):
            trial = study.ask()
            m = methods[trial.suggest_categorical("method", list(range(len(methods))))]
            picks = {key: vals[trial.suggest_categorical(f"{m}.{key}", list(range(len(vals))))]
                     for key, vals in axes[m].items()}
            setting = Setting(m, picks.pop("norm"), tuple((k, v) for k, v in picks.items() if k != "weights"),
                              picks["weights"])
            i = index.get(setting)
            value = float(table.values(i, train)[rows].mean()) if i is not None else -1.0
            study.tell(trial, value)
            if i is not None and (value > best[0] or (value == best[0] and i < best[1])):
                best = (value, i)
        return best[1], best[0]

    return search

