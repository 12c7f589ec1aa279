"""Which queries a verdict rests on: counts of what each run lacks, turned into warnings for every output.

A comparison or a gate is computed on the queries of the qrels (``missing="zero"``:
a query a run did not answer scores 0) or on the queries every run answered
(``missing="ignore"``).  Either way three things change what is measured and are
counted per run (:class:`~rankscope.engine.prepare.PolicyCounts`):

- queries of the qrels the run has no ranking for (``missing_from_run``);
- queries the run ranks that the qrels do not judge (``not_in_qrels``; never evaluated);
- evaluated queries with no document judged relevant at the relevance level
  (``no_relevant``): every run scores 0 on them, so they are not failures of a system.

What each run's top 10 rests on (:class:`~rankscope.engine.judged.JudgedAtK`) adds:

- ``nothing_judged``: none of the run's documents has a judgment for its query — the ids
  do not match (chunk ids against document ids, a prefix, other queries, another
  collection); one example id from each side;
- ``mostly_unjudged``: less than half of its top k is judged (judged@k < 0.5);
- ``model_labels``: the share of its top k judged by a model (labels with provenance);
- ``condensed``: the evaluation removed unjudged documents before ranking (``unjudged="condense"``).

:func:`coverage_warnings` turns the counts into :class:`DataWarning` values; each says
itself from its values (:data:`SENTENCES`) in the reader's language, so the terminal, JSON,
Markdown, HTML, LaTeX, the gate and the service all say the same thing.

>>> w = DataWarning("missing_zero", 20, 50, "bm25")
>>> w.text()
'bm25 has no ranking for 20 of the 50 qrels queries: they are scored 0 (missing=zero), which can change the conclusion.'
>>> print(DataWarning("no_relevant", 3, 50, level=2).text("zh"))
50 个查询中有 3 个在相关性等级 2 下没有任何相关文档：\
大多数指标下所有结果在这些查询上的得分都是 0，它们不是某个系统的失败。
>>> DataWarning("mostly_unjudged", 30, 100, "dense", k=10, value=0.3).text().split(":")[:2]
['dense', ' only 30.0% of its top-10 documents are judged (judged@10 = 0.300, 30 of 100)']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rankscope.i18n import N_, Message, _, ngettext

__all__ = ["DataWarning", "coverage_warnings", "counts_dict", "judged_warnings", "result_warnings", "judged_line"]


#: the sentence of each kind of warning, from its values (``count`` chooses the plural form)
SENTENCES: dict[str, Callable[..., Message]] = {
    "missing_zero": lambda **v: ngettext(
        "{system} has no ranking for {count} of the {total} qrels queries: it is scored 0 (missing=zero), which can "
        "change the conclusion.",
        "{system} has no ranking for {count} of the {total} qrels queries: they are scored 0 (missing=zero), which "
        "can change the conclusion.", v["count"], **v),
    "missing_ignore": lambda **v: ngettext(
        "{system} has no ranking for {count} of the {total} qrels queries: it is left out (missing=ignore).",
        "{system} has no ranking for {count} of the {total} qrels queries: they are left out (missing=ignore).",
        v["count"], **v),
    "not_in_qrels": lambda **v: ngettext(
        "{system} ranks {count} query that is not in the qrels: it is not evaluated.",
        "{system} ranks {count} queries that are not in the qrels: they are not evaluated.", v["count"], **v),
    "intersection": lambda **v: ngettext(
        "The runs are compared on the {count} query all of them answered, out of {total} in the qrels.",
        "The runs are compared on the {count} queries all of them answered, out of {total} in the qrels.",
        v["count"], **v),
    "no_relevant": lambda **v: ngettext(
        "{count} of the {total} queries has no document judged relevant at relevance level {level}: every run scores "
        "0 on it with most metrics, and it is not a failure of a system.",
        "{count} of the {total} queries have no document judged relevant at relevance level {level}: every run "
        "scores 0 on them with most metrics, and they are not failures of a system.", v["count"], **v),
    "nothing_judged": lambda **v: _(
        "{system}: none of the documents it retrieved is judged for its query, so every score is 0 because the ids "
        "do not match, not because retrieval failed. {cause} Example, query {query_id!r}: the run has {run_doc!r}, "
        "the qrels judge {qrels_doc!r}.", **v),
    "mostly_unjudged": lambda **v: _(
        "{system}: only {share} of its top-{k} documents are judged (judged@{k} = {value}, {count} of {total}): "
        "unjudged documents count as non-relevant, so if the qrels were pooled from other systems this run may look "
        "worse than it is. Judge its pool (rankscope pool, rankscope judge) or score condensed lists "
        '(unjudged="condense"; command line: --unjudged condense).', **v),
    "model_labels": lambda **v: _(
        "{system}: {share} of its top-{k} documents are judged by a model (model@{k}; {human} by people): its "
        "scores rest on model labels that far.", **v),
    "condensed": lambda **v: _(
        "Condensed lists (unjudged=condense): unjudged documents were removed before ranking, so scores are usually "
        "higher than, and not comparable with, scores that keep them.", **v),
}
#: the likely cause of ids that never match (``nothing_judged``)
CAUSES: dict[str, str] = {
    "chunk": N_("The run's ids look like chunk ids of the judged documents (chunk ids against document-id qrels): "
                "fold the chunks into documents (rankscope.retrieval.fold_chunks) or judge spans (--span-qrels with "
                "--chunks)."),
    "prefix": N_("The ids differ by a prefix, {prefix!r}, that one side has and the other lacks: strip it or add it."),
    "queries": N_("The run's document ids are judged, but under other queries: the query ids of the run and the "
                  "qrels do not line up."),
    "elsewhere": N_("{found} of the {total} document ids looked at in the run are judged in the qrels, but only for "
                    "other queries: either the query ids of the run and the qrels do not line up, or the ids come "
                    "from two collections and coincide."),
    "collection": N_("None of the run's document ids occurs in the qrels: the run and the qrels probably come from a "
                     "different collection (or corpus version)."),
}


@dataclass(frozen=True)
class DataWarning:
    """A count that changes what is measured: ``count`` of ``total``, for ``system`` (or all).

    ``k`` and ``value`` carry a judged@k (or model@k) share; ``info`` the example ids and the
    likely cause of a ``nothing_judged`` warning.  Kind ``retriever`` is a retriever evaluation's warning
    in a comparison of retrievers (``info``: ``said``, its message as :meth:`~rankscope.i18n.Message.to_dict`
    writes it), said as ``system: text``.
    """

    kind: str
    count: int
    total: int
    system: str | None = None
    level: int | None = None
    k: int | None = None
    value: float | None = None
    info: tuple[tuple[str, Any], ...] = ()

    def text(self, lang: str = "en") -> str:
        """The warning as one sentence in ``lang``."""
        if self.kind == "retriever":  # a retriever evaluation's notice, named by the retriever
            said = Message.from_dict(dict(self.info)["said"])
            return _("{system}: {text}", system=self.system or "", text=said).text(lang)
        values: dict[str, Any] = {"system": self.system or "", "count": self.count, "total": self.total,
                                  "level": self.level, "k": self.k, **dict(self.info)}
        if self.value is not None:  # 3 digits: a share just below one half never shows as 0.50
            values["value"] = f"{self.value:.3f}"
            values["share"] = f"{self.value:.1%}"
        if "cause" in values:
            values["cause"] = _(CAUSES[values["cause"]], **values)
        return SENTENCES[self.kind](**values).text(lang)

    def to_dict(self, lang: str = "en") -> dict[str, Any]:
        """JSON-ready: the fields and the sentence (``message``)."""
        out: dict[str, Any] = {"kind": self.kind, "system": self.system, "count": self.count, "total": self.total,
                               "relevance_level": self.level}
        if self.k is not None:
            out.update(k=self.k, value=self.value)
        if self.info:
            out["info"] = dict(self.info)
        out["message"] = self.text(lang)
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DataWarning:
        """Back from :meth:`to_dict` (a stored report's warnings, shown again in another language)."""
        return cls(d["kind"], int(d["count"]), int(d["total"]), d.get("system"), d.get("relevance_level"),
                   d.get("k"), d.get("value"),
                   tuple((str(a), b if isinstance(b, dict) else str(b)) for a, b in (d.get("info") or {}).items()))


def counts_dict(counts: Any) -> dict[str, int]:
    """The query counts of a :class:`~rankscope.engine.prepare.PolicyCounts` as a dict."""
    return {"evaluated": int(counts.evaluated), "missing_from_run": int(counts.missing_from_run),
            "not_in_qrels": int(counts.not_in_qrels), "no_relevant": int(getattr(counts, "no_relevant", 0))}


def coverage_warnings(
    counts: Mapping[str, Any],
    *,
    missing: str,
    relevance_level: int,
    compared: int,
    no_relevant: int | None = None,
    judged: Mapping[str, Any] | None = None,
    unjudged: str = "keep",
) -> list[DataWarning]:
    """Warnings for the per-system ``counts`` (PolicyCounts) of a verdict computed on ``compared`` queries.

    ``no_relevant`` is the number of compared queries without a relevant judgment (when
    known); otherwise the largest per-system count is used.  ``judged`` (``{system:
    JudgedAtK}``) and ``unjudged`` (the policy) add the warnings of :func:`judged_warnings`:
    ids that never match come first, the judged shares of the top k last.
    """
    ids, shares = judged_warnings(judged or {}, unjudged)
    out: list[DataWarning] = list(ids)
    for system, c in counts.items():
        n_qrels = c.evaluated + (c.missing_from_run if missing == "ignore" else 0)
        if c.missing_from_run:
            kind = "missing_zero" if missing == "zero" else "missing_ignore"
            out.append(DataWarning(kind, int(c.missing_from_run), int(n_qrels), system))
    for system, c in counts.items():
        if c.not_in_qrels:
            out.append(DataWarning("not_in_qrels", int(c.not_in_qrels), int(c.not_in_qrels), system))
    if missing == "ignore" and any(c.missing_from_run for c in counts.values()) and len(counts) > 1:
        first = next(iter(counts.values()))
        out.append(DataWarning("intersection", compared, int(first.evaluated + first.missing_from_run)))
    nr = no_relevant if no_relevant is not None else max((getattr(c, "no_relevant", 0) for c in counts.values()),
                                                         default=0)
    if nr:
        out.append(DataWarning("no_relevant", int(nr), compared, level=relevance_level))
    return out + shares


def judged_warnings(judged: Mapping[str, Any], unjudged: str = "keep") -> tuple[list[DataWarning], list[DataWarning]]:
    """``(nothing judged, the rest)``: the warnings of each system's judged@k
    (:class:`~rankscope.engine.judged.JudgedAtK`, None when unknown) and of the ``unjudged`` policy."""
    first: list[DataWarning] = []
    last: list[DataWarning] = []
    for system, j in judged.items():
        if j is None:
            continue
        if j.nothing_judged:
            mm = j.mismatch
            info = () if mm is None else tuple(mm.to_dict().items())
            first.append(DataWarning("nothing_judged", 0, int(j.queries), system, k=j.k, info=info))
        elif j.mostly_unjudged:
            last.append(DataWarning("mostly_unjudged", int(j.judged), int(j.retrieved), system, k=j.k, value=j.mean))
        if j.model is not None and j.model_mean is not None:
            human = (j.mean or 0.0) - j.model_mean
            last.append(DataWarning("model_labels", int(j.model), int(j.retrieved), system, k=j.k,
                                    value=j.model_mean, info=(("human", f"{human:.1%}"),)))
    if unjudged == "condense":
        last.append(DataWarning("condensed", len(judged), len(judged)))
    return first, last


def result_warnings(result: Any) -> list[DataWarning]:
    """The warnings of one :class:`~rankscope.engine.EvaluationResult`: its query counts, its judged@k and the
    ``unjudged`` policy.

    >>> from rankscope import Qrels, Run, evaluate
    >>> res = evaluate(Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 1}}), Run.from_ranked_lists({"q1": ["a"]}))
    >>> [w.kind for w in result_warnings(res)]
    ['missing_zero']
    """
    pol = result.policies
    return coverage_warnings({result.run_name: result.queries}, missing=str(pol.missing),
                             relevance_level=int(pol.relevance_level), compared=int(result.queries.evaluated),
                             judged={result.run_name: result.judged}, unjudged=str(pol.unjudged))


def judged_line(judged: Mapping[str, Any], lang: str = "en") -> str | None:
    """One sentence with judged@k of every run (``{system: JudgedAtK.to_dict()}``), model@k where known.

    >>> judged_line({"bm25": {"k": 10, "judged@10": 0.94, "model@10": None},
    ...              "dense": {"k": 10, "judged@10": 0.41, "model@10": 0.2}}).split(": ")[1]
    'bm25 0.940, dense 0.410 (model@10 0.200).'
    """
    parts, k = [], None
    for system, d in judged.items():
        if not d:
            continue
        k = int(d["k"])
        value = d.get(f"judged@{k}")
        part = f"{system} {'–' if value is None else f'{value:.3f}'}"
        model = d.get(f"model@{k}")
        if model is not None:
            part += f" ({_('model@{k} {value}', k=k, value=f'{model:.3f}').text(lang)})"
        parts.append(part)
    if k is None:
        return None
    return _("Judged share of each run's top {k} (judged@{k}; unjudged documents count as non-relevant): {values}.",
             k=k, values=("、" if lang == "zh" else ", ").join(parts)).text(lang)
