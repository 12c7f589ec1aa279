"""A CI quality gate: requirements on a run's metrics and non-inferiority against a baseline.

Two kinds of checks:

- a *threshold* ``"recall@5>=0.8"`` (operators ``>=``, ``<=``, ``>``, ``<``; the
  metric in any spelling the registry parses; the value may end in ``%``): the
  run's mean of the metric is compared with the threshold (means are rounded to
  10 decimals first, so float noise cannot flip a result);
- a *maximum drop* ``"ndcg@10=0.02"`` (or ``"ndcg@10=2%"``, relative to the
  baseline's mean) against a baseline run: a paired, one-sided non-inferiority
  test on the queries both runs share.  With per-query differences
  ``d = run - baseline`` (``baseline - run`` for a metric where lower is better)
  and margin ``delta``, H0 is ``mean(d) <= -delta`` and H1 ``mean(d) > -delta``;
  a test of the mean (see :mod:`rankscope.stats.noninferiority`) decides it and
  the check passes when ``p <= alpha``, which is the same as the one-sided
  ``1 - alpha`` lower confidence bound of ``mean(d)`` lying above ``-delta``;
  each verdict states that bound.  The default test is the betting bound
  (:mod:`rankscope.stats.betting`): a metric bounded by ``[lo, hi]`` gives
  differences in ``[lo - hi, hi - lo]``, and the bound's level then holds at any
  number of queries and any skew.  A metric without a fixed range (``num_rel_ret``,
  ``context_size``) cannot use it: its drop is tested with the studentized
  bootstrap, and the verdict says so.  The t, randomization and bootstrap tests
  are options; a verdict of one of them on a sample in the region where it was
  measured above its level (few queries, skewed differences) carries a
  calibration warning.  The Wilcoxon test is refused: it tests a pseudo-median,
  not the mean.  Each maximum drop is tested at ``alpha`` without correction:
  all of them must pass (an intersection–union test keeps the level).

A maximum drop that cannot be decided — fewer than 2 shared queries, all
differences equal (no variation: a zero standard deviation proves nothing), a
Monte-Carlo p-value still within error of ``alpha`` — is *undecided*: it does not
pass, and when nothing failed the gate exits 3 (JSON ``"undecided": true``) with a
line that says what to add.

Thresholds and drops outside a metric's range (``ndcg@10>=1.5``, a 150% drop)
are errors.  Queries a run lacks, queries outside the qrels and queries with no
relevant judgment are counted and reported as warnings
(:mod:`rankscope.engine.coverage`).

Named presets (``production:good``, ``benchmark:faq``, ...) come from
:mod:`rankscope.interpret.presets` and add their thresholds.

>>> from rankscope import Qrels, Run
>>> qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 1}})
>>> run = Run.from_ranked_lists({"q1": ["a"], "q2": ["x", "b"]})
>>> gate = check(qrels, run, ["mrr>=0.7", "P@1>0.6"])
>>> for o in gate.outcomes:
...     print(o.line())
PASS  mrr >= 0.7: 0.7500
FAIL  P@1 > 0.6: 0.5000
>>> gate.exit_code
1
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.choices import term
from rankscope.errors import InvalidParameterError
from rankscope.i18n import N_, _, gettext, ngettext
from rankscope.measures.base import Measure

if TYPE_CHECKING:
    from rankscope.data.notices import InputNotice
    from rankscope.engine.coverage import DataWarning

__all__ = ["Requirement", "MaxDrop", "Outcome", "GateResult", "parse_requirement", "parse_max_drop", "check"]

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt,
}
_REQ = re.compile(r"^\s*(?P<metric>.+?)\s*(?P<op>>=|<=|>|<)\s*(?P<value>[^<>=\s]+)\s*$")


#: what :func:`_number` reads, as its errors name it (message ``error.gate.what.<key>`` in other languages)
_WHAT = {"threshold": "the threshold", "max_drop": "the maximum drop"}


def _number(text: str, what: str, original: str) -> tuple[float, bool]:
    """A float, and whether it was written as a percentage; ``what`` is ``threshold`` or ``max_drop``."""
    t = text.strip()
    pct = t.endswith("%")
    said = _("the threshold") if what == "threshold" else _("the maximum drop")
    try:
        v = float(t[:-1] if pct else t)
    except ValueError:
        raise InvalidParameterError(_("{what} in {text!r} must be a number, got {value!r}", what=said, text=original,
                                      value=t)) from None
    if not math.isfinite(v):
        raise InvalidParameterError(_("{what} in {text!r} must be a finite number, got {value!r}", what=said,
                                      text=original, value=t))
    return (v / 100.0 if pct else v), pct


@dataclass(frozen=True)
class Requirement:
    """``metric op threshold``, e.g. ``recall@5 >= 0.8``; ``source`` says where it came from."""

    label: str
    measure: Measure
    op: str
    threshold: float
    source: str = "--require"

    def holds(self, value: float) -> bool:
        """Whether ``value`` (rounded to 10 decimals) satisfies the requirement."""
        return OPERATORS[self.op](round(value, 10), self.threshold)


@dataclass(frozen=True)
class MaxDrop:
    """The largest acceptable drop of ``metric`` against the baseline (absolute, or relative if ``relative``)."""

    label: str
    measure: Measure
    max_drop: float
    relative: bool = False


def _once(reqs: list[Requirement]) -> list[Requirement]:
    """Each requirement once: the same metric, operator and threshold (in any spelling, from any source) is one
    check, shown with the sources it came from.

    >>> reqs = [parse_requirement("mrr>=0.5"), parse_requirement("MRR >= 50%", "production:minimum")]
    >>> [r.source for r in _once(reqs)]
    ['--require, production:minimum']
    """
    out: dict[tuple[Measure, str, float], Requirement] = {}
    for r in reqs:
        key = (r.measure, r.op, round(r.threshold, 12))
        if key not in out:
            out[key] = r
        elif r.source not in out[key].source.split(", "):
            out[key] = replace(out[key], source=f"{out[key].source}, {r.source}")
    return list(out.values())


def parse_requirement(text: str, source: str = "--require") -> Requirement:
    """Parse ``"metric>=value"`` (also ``<=``, ``>``, ``<``; value may end in ``%``).

    >>> parse_requirement("Recall@5 >= 80%")
    Requirement(label='Recall@5', measure=Measure('recall@5'), op='>=', threshold=0.8, source='--require')
    """
    from rankscope.measures.parse import parse_metric

    m = _REQ.match(text or "")
    if m is None or m["metric"].endswith(("=", "!")):
        raise InvalidParameterError(_("cannot read the requirement {text!r}; write it as METRIC>=VALUE (or <=, >, "
                                      "<), e.g. recall@5>=0.8", text=text))
    value, __ = _number(m["value"], "threshold", text)
    label = m["metric"]
    measure = parse_metric(label)
    bounds = measure.spec.bounds
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        raise InvalidParameterError(_("the threshold in {text!r} is outside the range of {label}: it lies between "
                                      "{low:g} and {high:g}, got {value:g}", text=text, label=label, low=bounds[0],
                                      high=bounds[1], value=value))
    return Requirement(label, measure, m["op"], value, source)


def parse_max_drop(text: str) -> MaxDrop:
    """Parse ``"metric=drop"``: an absolute drop (``ndcg@10=0.02``) or relative to the baseline (``ndcg@10=2%``).

    >>> parse_max_drop("ndcg@10=0.02"), parse_max_drop("mrr=5%").relative
    (MaxDrop(label='ndcg@10', measure=Measure('ndcg@10'), max_drop=0.02, relative=False), True)
    """
    from rankscope.measures.parse import parse_metric

    label, sep, value = (text or "").rpartition("=")
    label = label.strip()
    if not sep or not label:
        raise InvalidParameterError(_("cannot read the maximum drop {text!r}; write it as METRIC=DROP, e.g. "
                                      "ndcg@10=0.02", text=text))
    drop, pct = _number(value, "max_drop", text)
    if drop < 0:
        raise InvalidParameterError(_("the maximum drop in {text!r} must be >= 0, got {value!r}", text=text,
                                      value=value.strip()))
    measure = parse_metric(label)
    bounds = measure.spec.bounds
    if pct and drop > 1:
        raise InvalidParameterError(_("the maximum drop in {text!r} is more than {all} of the baseline's mean",
                                      all="100%",
                                      text=text))
    if not pct and bounds is not None and drop > bounds[1] - bounds[0]:
        raise InvalidParameterError(_("the maximum drop in {text!r} is larger than the whole range of {label} "
                                      "({low:g} to {high:g}), got {value:g}", text=text, label=label, low=bounds[0],
                                      high=bounds[1], value=drop))
    return MaxDrop(label, measure, drop, pct)


_TEST_NAMES = {"t": "paired t test", "randomization": "paired randomization test",
               "bootstrap": "studentized bootstrap test", "betting": "betting test"}


def _signed(x: float) -> str:
    """``+0.05`` / ``-0.05``, and ``0`` for zero (never ``-0``).

    >>> _signed(-0.0), _signed(-0.05)
    ('0', '-0.05')
    """
    return "0" if x == 0 else f"{x:+.4g}"


#: a requirement's outcome, as the terminal line shows it
_STATUS = {"pass": N_("PASS"), "fail": N_("FAIL"), "undecided": N_("UNDECIDED")}
#: why a maximum drop could not be decided (the other reasons say their numbers: GateOutcome._undecided)
_WHY = {
    "no_queries": N_("the run and the baseline share no query: there is nothing to test; add queries both runs "
                     "answer ({test})"),
    "one_query": N_("one shared query: no test can bound a mean from a single difference; add queries ({test})"),
}

def _pct(x: float) -> str:
    """A level as a percentage: 0.95 -> ``95%``, 0.975 -> ``97.5%``."""
    return f"{100 * x:.6g}%"


@dataclass(frozen=True)
class Outcome:
    """The result of one check.

    ``kind`` is ``"threshold"`` or ``"non_inferiority"``.  For a threshold,
    ``value`` is the run's mean.  For non-inferiority, ``value`` and
    ``baseline_value`` are the two means on the shared queries, ``margin`` the
    absolute drop allowed, ``p_value`` that of the one-sided test at level
    ``alpha`` and ``lower_bound`` the one-sided ``confidence`` (``1 - alpha``)
    lower bound of the difference ``value - baseline_value`` (reversed when lower
    is better) from the same test: it passes when ``lower_bound > -margin``.
    ``mc_se`` is the Monte-Carlo standard error of ``p_value`` (randomization and
    bootstrap tests, after ``resamples`` draws); ``near_alpha`` flags a p-value
    still within 2.576 standard errors of ``alpha`` after the most draws allowed.
    ``ceiling`` is the mean a perfect ranking reaches on these qrels, given when a
    threshold asks for more (it can never hold).
    """

    kind: str
    label: str
    passed: bool
    value: float
    op: str | None = None
    threshold: float | None = None
    source: str | None = None
    baseline_value: float | None = None
    margin: float | None = None
    p_value: float | None = None
    test: str | None = None
    alpha: float | None = None
    lower_bound: float | None = None
    confidence: float | None = None
    mc_se: float | None = None
    resamples: int | None = None
    near_alpha: bool = False
    ceiling: float | None = None
    undecided: str | None = None
    n: int | None = None
    skew: float | None = None
    miscalibrated: bool = False
    bounds: tuple[float, float] | None = None
    fallback: str | None = None

    @property
    def status(self) -> str:
        """``"pass"``, ``"fail"`` or ``"undecided"``."""
        return "pass" if self.passed else "undecided" if self.undecided else "fail"

    def _test_name(self, lang: str) -> str:
        name = str(_TEST_NAMES.get(self.test or "", self.test) if lang == "en" else term(self.test, lang))
        if self.test == "betting" and self.bounds is not None:
            name += _(" (differences within [{lo}, {hi}]; valid at any number of queries)", lo=f"{self.bounds[0]:g}",
                      hi=f"{self.bounds[1]:g}").text(lang)
        return name

    def evidence(self, lang: str = "en") -> str:
        """The bound, the test, alpha and sidedness of a non-inferiority verdict, in one clause (an undecided one:
        why, and what to add)."""
        assert self.margin is not None and self.alpha is not None
        if self.undecided is not None:
            return self._undecided(lang)
        assert self.p_value is not None
        lb = "-inf" if self.lower_bound is None or not math.isfinite(self.lower_bound) else f"{self.lower_bound:+.4f}"
        p = f"p = {self.p_value:.3g}"
        if self.mc_se is not None:
            p += _(" ± {se} (Monte-Carlo s.e., {n} resamples)", se=f"{self.mc_se:.2g}", n=self.resamples).text(lang)
        text = _("{level} one-sided lower bound of the difference {lb} {rel} {margin}; {test}, {p}, α = {alpha} "
                 "one-sided (the lower end of a two-sided {two} interval)", level=_pct(1 - self.alpha), lb=lb,
                 rel=">" if self.passed else "<=", margin=_signed(-self.margin), test=self._test_name(lang), p=p,
                 alpha=f"{self.alpha:g}", two=_pct(1 - 2 * self.alpha)).text(lang)
        if self.fallback == "unbounded":
            text += _("; {label} has no fixed range, which the betting test needs, so the studentized bootstrap "
                      "test decides it", label=self.label).text(lang)
        if self.miscalibrated:
            text += _("; CALIBRATION WARNING: on {n} queries with differences this skewed (skewness {skew}) the "
                      "{test} was measured to pass runs at the margin more often than α; --test betting keeps its "
                      "level", test=self._test_name(lang), n=self.n, skew=f"{self.skew:+.2f}").text(lang)
        return text

    def _undecided(self, lang: str) -> str:
        why = self.undecided
        test = self._test_name(lang)
        if why == "unstable":
            return _("p = {p} ± {se} after {n} resamples is still within Monte-Carlo error of α = {alpha} "
                     "({test}), so the verdict could change with the seed; raise --permutations",
                     p=f"{self.p_value:.3g}", se=f"{self.mc_se or 0:.2g}", n=self.resamples, alpha=f"{self.alpha:g}",
                     test=test).text(lang)
        if why == "no_variance":
            return _("all {n} per-query differences are equal ({diff}): without variation no test can bound the "
                     "mean (a standard deviation of 0 is not evidence); add queries on which the runs differ "
                     "({test})", n=self.n, diff=_signed(self.value - (self.baseline_value or 0.0)),
                     test=test).text(lang)
        return _(_WHY[str(why)], test=test).text(lang)

    def line(self, lang: str = "en") -> str:
        """One line for the terminal: verdict, requirement, measured value."""
        verdict = gettext(_STATUS[self.status], lang)
        if self.kind == "threshold":
            where = "" if self.source in (None, "--require") else _(" [{source}]", source=self.source).text(lang)
            if self.ceiling is not None:
                where += _(" (unreachable: a perfect ranking scores {ceiling} on these qrels)",
                           ceiling=f"{self.ceiling:.4f}").text(lang)
            return _("{verdict}  {label} {op} {threshold}: {value}{where}", verdict=verdict, label=self.label,
                     op=self.op, threshold=f"{self.threshold:g}", value=f"{self.value:.4f}", where=where).text(lang)
        assert self.baseline_value is not None and self.margin is not None
        return _("{verdict}  {label} drop <= {margin} vs baseline: {value} vs {base} (diff {diff}); {evidence}",
                 verdict=verdict, label=self.label, margin=f"{self.margin:.4g}", value=f"{self.value:.4f}",
                 base=f"{self.baseline_value:.4f}", diff=f"{self.value - self.baseline_value:+.4f}",
                 evidence=self.evidence(lang)).text(lang)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (an undefined p-value, bound or skewness is None)."""
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        for k in ("p_value", "lower_bound", "skew"):
            if isinstance(out[k], float) and not math.isfinite(out[k]):
                out[k] = None
        out["bounds"] = None if self.bounds is None else list(self.bounds)
        out["status"] = self.status
        return out


@dataclass(frozen=True, repr=False)
class GateResult:
    """All checks of one run; ``passed`` when every check holds.

    ``queries`` holds the query counts of the run (and the baseline) and
    ``warnings`` what they imply (:class:`~rankscope.engine.coverage.DataWarning`).
    """

    run_name: str
    baseline_name: str | None
    n_queries: int
    outcomes: tuple[Outcome, ...]
    queries: dict[str, dict[str, int]] = field(default_factory=dict)
    warnings: tuple[DataWarning, ...] = ()
    tags: dict[str, str] = field(default_factory=dict)
    judged: dict[str, dict[str, Any]] = field(default_factory=dict)
    notices: tuple[InputNotice, ...] = ()
    policies: dict[str, Any] = field(default_factory=dict)

    def _judged_line(self, lang: str = "en") -> list[str]:
        from rankscope.engine.coverage import judged_line

        line = judged_line(self.judged, lang)
        return [line] if line else []

    def _named(self, name: str, quote: str = "", lang: str = "en") -> str:
        tag = self.tags.get(name)
        named = f"{quote}{name}{quote}"
        return _("{name} (TREC tag {tag})", name=named, tag=f"{quote}{tag}{quote}").text(lang) if tag else named

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outcomes)

    @property
    def failed(self) -> int:
        """Requirements not met (undecided ones apart)."""
        return sum(o.status == "fail" for o in self.outcomes)

    @property
    def undecided(self) -> int:
        """Maximum drops that could not be decided (too few queries, no variation, an unstable p-value)."""
        return sum(o.status == "undecided" for o in self.outcomes)

    def _verdict(self, lang: str) -> str:
        n = len(self.outcomes)
        if self.failed:
            return ngettext("gate FAILED: {failed} of {n} requirement not met",
                            "gate FAILED: {failed} of {n} requirements not met", n, failed=self.failed).text(lang)
        if self.undecided:
            return ngettext("gate UNDECIDED: {undecided} of {n} requirement could not be decided and none failed",
                            "gate UNDECIDED: {undecided} of {n} requirements could not be decided and none failed",
                            n, undecided=self.undecided).text(lang)
        return ngettext("gate passed: {n} requirement holds", "gate passed: {n} requirements hold", n).text(lang)

    def __repr__(self) -> str:
        failed = self.failed
        verdict = ("passed" if self.passed else f"FAILED ({failed} of {len(self.outcomes)} not met)" if failed
                   else f"UNDECIDED ({self.undecided} of {len(self.outcomes)} could not be decided)")
        base = f" vs {self.baseline_name!r}" if self.baseline_name else ""
        n, w = len(self.outcomes), len(self.warnings)
        return (f"GateResult({self.run_name!r}{base}, {self.n_queries} queries, {n} requirement{'s' * (n != 1)}: "
                f"{verdict}, {w} warning{'s' * (w != 1)})")

    @property
    def exit_code(self) -> int:
        """0 when every requirement holds, 1 when one fails, 3 when none fails but one could not be decided."""
        return 0 if self.passed else 1 if self.failed else 3

    def lines(self, lang: str = "en") -> list[str]:
        """The warnings, one line per requirement, judged@k of the runs, then a verdict line (in ``lang``)."""
        verdict = self._verdict(lang)
        head = []
        if self.tags:  # say which run is which when a file's tag differs from its name
            base = (_(" against baseline {named}", named=self._named(self.baseline_name, lang=lang)).text(lang)
                    if self.baseline_name else "")
            head = [_("run {named}{base}", named=self._named(self.run_name, lang=lang), base=base).text(lang)]
        warnings = [_("WARNING  {text}", text=w.text(lang)).text(lang) for w in self.warnings]
        notes = [_("NOTE     {text}", text=n.text(lang)).text(lang) for n in self.notices]
        return head + warnings + notes + [o.line(lang) for o in self.outcomes] + self._judged_line(lang) + [verdict]

    def to_markdown(self, lang: str = "en") -> str:
        """A Markdown summary (for ``$GITHUB_STEP_SUMMARY`` or a pull-request comment), in ``lang``."""
        head = gettext("passed" if self.passed else "FAILED" if self.failed else "UNDECIDED", lang)
        out = [_("## rankscope gate {head}: {named}", head=head,
                 named=self._named(self.run_name, "`", lang)).text(lang), ""]
        out += [*self._judged_line(lang), ""] if self.judged else []
        if self.warnings:
            out += [_("> ⚠️ **Warning:** {text}",
                      text=w.text(lang)).text(lang) + ("  " if i < len(self.warnings) - 1 else "")
                    for i, w in enumerate(self.warnings)] + [""]
        out += [f"> ℹ️ {n.text(lang)}" + ("  " if i < len(self.notices) - 1 else "")
                for i, n in enumerate(self.notices)]
        out += [""] if self.notices else []
        base = _(" against baseline {named}",
                 named=self._named(self.baseline_name, "`", lang)).text(lang) if self.baseline_name else ""
        queries = ngettext("{n} query", "{n} queries", self.n_queries)
        out += [_("{queries}{base}.", queries=queries, base=base).text(lang), "",
                gettext("| | requirement | measured | detail |", lang), "|---|---|---|---|"]
        for o in self.outcomes:
            mark = {"pass": "✅", "fail": "❌", "undecided": "❔"}[o.status]
            if o.kind == "threshold":
                src = "" if o.source in (None, "--require") else _("from {source}", source=o.source).text(lang)
                if o.ceiling is not None:
                    src += _(" (unreachable: a perfect ranking scores {ceiling} on these qrels)",
                             ceiling=f"{o.ceiling:.4f}").text(lang)
                out.append(f"| {mark} | `{o.label} {o.op} {o.threshold:g}` | {o.value:.4f} | {src} |")
            else:
                assert o.baseline_value is not None and o.margin is not None
                measured = _("{value} (baseline {base}, diff {diff})", value=f"{o.value:.4f}",
                             base=f"{o.baseline_value:.4f}", diff=f"{o.value - o.baseline_value:+.4f}").text(lang)
                req = _("`{label}` drops at most {margin}", label=o.label, margin=f"{o.margin:.4g}").text(lang)
                out.append(f"| {mark} | {req} | {measured} | {o.evidence(lang)} |")
        return "\n".join(out) + "\n"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "run": self.run_name, "baseline": self.baseline_name, "n_queries": self.n_queries,
            "passed": self.passed, "undecided": not self.passed and not self.failed, "exit_code": self.exit_code,
            "tags": self.tags, "queries": self.queries, "judged": self.judged, "policies": self.policies,
            "warnings": [w.to_dict() for w in self.warnings],
            "notices": [n.to_dict() for n in self.notices],
            "outcomes": [o.to_dict() for o in self.outcomes],
        }


def preset_requirements(name: str) -> list[Requirement]:
    """The thresholds of a named standard (``production:good``, ``benchmark:faq``, ...)."""
    from rankscope.interpret.presets import standard_requirements

    return [parse_requirement(f"{m}{op}{v!r}", name) for m, op, v in standard_requirements(name)]


def check(
    qrels: Any,
    run: Any,
    requirements: Iterable[str | Requirement] = (),
    *,
    preset: str | Sequence[str] | None = None,
    baseline: Any = None,
    max_drops: Iterable[str | MaxDrop] = (),
    test: str = "betting",
    alpha: float = 0.05,
    permutations: int = 10_000,
    max_permutations: int | None = None,
    rng: np.random.Generator | int | None = None,
    relevance_level: int = 1,
    missing: str = "zero",
    depth: int | None = None,
    names: Sequence[str] | None = None,
    tags: dict[str, str] | None = None,
    unjudged: str = "keep",
    score_precision: str = "float32",
) -> GateResult:
    """Check ``run`` against thresholds, presets and (with ``baseline``) maximum drops.

    ``names`` (the run's, then the baseline's) replace the runs' own names (their
    TREC tags); ``tags`` maps a name to the tag shown next to it where they differ.

    ``test`` (``"betting"``, ``"t"``, ``"randomization"`` or ``"bootstrap"``; Wilcoxon is
    refused; ``"betting"`` falls back to ``"bootstrap"`` for a metric without a fixed range)
    and ``alpha`` (one-sided) decide each maximum drop; ``permutations`` is the
    number of sign flips or bootstrap resamples, redrawn up to ``max_permutations``
    (default 16 times as many) while the verdict is within Monte-Carlo error of
    ``alpha``; ``rng`` (default seed 0) seeds them.  ``relevance_level``, ``missing``, ``depth``,
    ``unjudged`` and ``score_precision`` are the evaluation policies of :func:`rankscope.evaluate`
    (``unjudged="condense"`` checks condensed lists), kept in ``policies``; labels with provenance as
    ``qrels`` add the share of model labels in each run's top k to the warnings.  Raises
    :class:`~rankscope.errors.InvalidParameterError` when there is nothing to
    check, when ``max_drops`` are given without a baseline, or on a bad option.
    """
    from rankscope.comparison import aligned_scores
    from rankscope.comparison_inputs import ceilings
    from rankscope.engine.coverage import counts_dict, coverage_warnings
    from rankscope.engine.evaluator import Evaluator
    from rankscope.engine.policies import Policies
    from rankscope.io.convert import as_run
    from rankscope.stats.noninferiority import non_inferiority, refuse_wilcoxon

    reqs = [r if isinstance(r, Requirement) else parse_requirement(r) for r in requirements]
    presets = [preset] if isinstance(preset, str) else list(preset or [])
    for name in presets:
        reqs += preset_requirements(name)
    reqs = _once(reqs)
    unique: dict[tuple[Measure, float, bool], MaxDrop] = {}
    for d in (d if isinstance(d, MaxDrop) else parse_max_drop(d) for d in max_drops):
        unique.setdefault((d.measure, d.max_drop, d.relative), d)  # a repeated maximum drop is one check
    drops = list(unique.values())
    if not reqs and not drops:
        raise InvalidParameterError(_("nothing to check: give at least one requirement, preset or maximum drop"))
    if drops and baseline is None:
        raise InvalidParameterError(_("a maximum drop needs a baseline run to compare with"))
    if baseline is not None and not drops:
        raise InvalidParameterError(_("a baseline run needs at least one maximum drop (e.g. ndcg@10=0.02)"))
    if drops or test != "wilcoxon":  # the test only matters for a maximum drop
        refuse_wilcoxon(test)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise InvalidParameterError(_("alpha must be a number between 0 and 1, got {value!r}", value=alpha))
    seed = int(np.random.default_rng(0 if rng is None else rng).integers(0, 2**63 - 1))

    measures: list[Measure] = []
    for m in [r.measure for r in reqs] + [d.measure for d in drops]:
        if m not in measures:
            measures.append(m)
    policies = Policies.of("check", relevance_level=relevance_level, missing=missing, depth=depth,
                           unjudged=unjudged, score_precision=score_precision)
    ev = Evaluator(qrels, measures, policies=policies)
    run = as_run(run, name=names[0] if names else None)
    result = ev.evaluate(run)
    means = dict(zip(measures, result.mean().values()))
    best = ceilings(ev, [str(m) for m in measures], measures, result.per_query.query_ids)
    outcomes = []
    for req in reqs:
        reach = best.get(str(req.measure))
        unreachable = reach is not None and req.op in (">=", ">") and not OPERATORS[req.op](round(reach, 10),
                                                                                            req.threshold)
        outcomes.append(Outcome("threshold", req.label, req.holds(means[req.measure]), means[req.measure], req.op,
                                req.threshold, req.source, ceiling=reach if unreachable else None))
    n_queries = result.queries.evaluated
    notices = result.notices
    base_name = None
    counts = {run.name: result.queries}
    judged = {run.name: result.judged}
    if drops:
        base = as_run(baseline, name=names[1] if names and len(names) > 1 else None)
        base_name = base.name if base.name != run.name else f"{base.name} (baseline)"
        base_res = ev.evaluate(base, name=base_name)
        counts[base_name] = base_res.queries
        judged[base_name] = base_res.judged
        notices += base_res.notices
        qids, scores = aligned_scores([result, base_res])
        n_queries = len(qids)
        for dr in drops:
            j = measures.index(dr.measure)
            ours, theirs = scores[0, :, j], scores[1, :, j]
            hib = dr.measure.spec.higher_is_better
            d = ours - theirs if hib else theirs - ours
            margin = dr.max_drop * abs(float(theirs.mean())) if dr.relative else dr.max_drop
            bounds = dr.measure.spec.bounds
            used, fallback = test, None
            if test == "betting" and bounds is None:  # no fixed range: the betting bound does not apply
                used, fallback = "bootstrap", "unbounded"
            spread = None if bounds is None else float(bounds[1] - bounds[0])
            r = non_inferiority(d, margin, used, alpha, resamples=permutations, max_resamples=max_permutations,
                                rng=seed, bounds=(-spread, spread) if spread is not None else (-1.0, 1.0))
            outcomes.append(Outcome(
                "non_inferiority", dr.label, r.passed, float(ours.mean()), baseline_value=float(theirs.mean()),
                margin=margin, p_value=r.p_value, test=used, alpha=float(alpha), lower_bound=r.lower_bound,
                confidence=r.confidence, mc_se=r.mc_se, resamples=r.resamples, near_alpha=r.near_alpha,
                undecided=r.undecided, n=r.n, skew=r.skew, miscalibrated=r.miscalibrated, bounds=r.bounds,
                fallback=fallback,
            ))
    warnings = coverage_warnings(counts, missing=policies.missing, relevance_level=policies.relevance_level,
                                 compared=n_queries, judged=judged, unjudged=policies.unjudged)
    return GateResult(run.name, base_name, n_queries, tuple(outcomes),
                      {name: counts_dict(c) for name, c in counts.items()}, tuple(warnings),
                      {k: v for k, v in (tags or {}).items() if k in counts},
                      judged={name: j.to_dict() for name, j in judged.items() if j is not None}, notices=notices,
                      policies=policies.to_dict())
