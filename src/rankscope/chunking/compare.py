"""Compare chunkings fairly: :func:`compare_chunkings` and :class:`ChunkingComparison`.

Chunk-level labels cannot compare two chunkings (each has its own chunk ids, and
smaller chunks mean more relevant ids per query).  Span judgments can: they are
written once on the documents' text.  :func:`compare_chunkings` takes one test set
with span judgments, several chunkings of its corpus and one retriever factory, and

1. builds the retriever on each chunking's chunk texts and runs every query with
   span judgments (:func:`rankscope.evaluate_retriever`: batches, failures kept);
2. scores each run with the span measures (``span_recall@k``, ``span_precision@k``,
   ``span_iou@k``, ``span_precision_omega``, the context cost ``context_size@k``) and
   with ordinary measures on the chunk qrels derived by the rule (``ndcg@k``,
   ``mrr@k``);
3. compares the chunkings with :func:`rankscope.compare` — paired tests per query,
   multiple-testing correction over all pairs × metrics, bootstrap intervals,
   effect sizes — exactly as runs are compared, on the measures that mean the same
   on every chunking (:func:`comparable`: span recall, precision and IoU @k, scored on
   the judged characters); the others are shown per chunking, never tested or starred:
   nDCG / MRR score each chunking's own chunk qrels, ``context_size@k`` and the Ω
   measures differ by construction (a chunk size, a property of the chunking alone);
4. says when two compared measures carry the same information (|Pearson r| ≥ 0.99
   across the queries of every chunking: ``span_precision@5`` and ``span_iou@5`` when
   answers are short): one finding, not two;
5. keeps, per chunking, its size statistics, how the spans fall on it and the mean
   span recall and context size at k = 1..depth (the recall-versus-context curve of
   the HTML report).

>>> from rankscope.data.testset import Query, TestSet
>>> from rankscope.data.spans import SpanQrels
>>> docs = {f"d{i}": f"文档{i}讲的是主题{i}。" * 4 + f"答案{i}在这里。" + "无关的内容。" * 6 for i in range(8)}
>>> spans = SpanQrels.from_records([{"query_id": f"q{i}", "doc_id": f"d{i}", "start": 40, "end": 47}
...                                 for i in range(8)], corpus=docs)
>>> ts = TestSet([Query(f"q{i}", f"答案{i}") for i in range(8)], None, docs, "toy", spans=spans)
>>> cc = compare_chunkings(ts, ["fixed:14", "fixed:64"], "bm25", k=1, progress=False)
>>> for row in cc.table():
...     print(row["chunking"], f"{row['span_recall@1']:.3f} {row['span_precision@1']:.3f}", row["context_size@1"])
fixed:14 0.286 0.143 14.0
fixed:64 1.000 0.109 64.0
>>> cc.comparison.labels, cc.per_chunking
(('span_recall@1', 'span_precision@1', 'span_iou@1'), ('ndcg@1', 'mrr@1', 'context_size@1', 'span_precision_omega'))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.data.chunking import Chunking
from rankscope.data.span_rules import ChunkRule
from rankscope.data.testset import TestSet
from rankscope.errors import EmptyInputError, InvalidParameterError, Items
from rankscope.i18n import _

if TYPE_CHECKING:
    from rankscope.comparison import Comparison
    from rankscope.retrieval.evaluation import RetrieverEvaluation

__all__ = ["compare_chunkings", "ChunkingComparison", "default_metrics", "comparable", "same_information",
           "SAME_INFORMATION"]

#: measures that differ between chunkings by construction (a chunk size, a property of the chunking alone)
_BY_CONSTRUCTION = ("context_size", "span_precision_omega", "span_iou_omega")
SAME_INFORMATION = 0.99
"""Two compared measures whose per-query values correlate at least this much (|Pearson r|) carry one finding."""


def comparable(measure: Any) -> bool:
    """Whether a measure means the same on every chunking, so that chunkings can be tested on it: a span measure
    scored on the judged characters, not one that differs by construction (``context_size``, the Ω measures).

    >>> from rankscope.measures import parse_metric
    >>> [comparable(parse_metric(m)) for m in ("span_recall@5", "ndcg@5", "context_size@5", "span_precision_omega")]
    [True, False, False, False]
    """
    spec = measure.spec
    return spec.family == "span" and spec.name not in _BY_CONSTRUCTION


def same_information(labels: Sequence[str], scores: np.ndarray) -> list[dict[str, Any]]:
    """Pairs of measures whose per-query values (``scores``: systems × queries × measures) correlate with
    |r| ≥ :data:`SAME_INFORMATION` within every system: ``{"a", "b", "r"}`` with the weakest r of the systems.

    >>> x = np.array([[[0.1, 0.2, 0.9], [0.5, 1.0, 0.1], [0.3, 0.6, 0.4]]])
    >>> same_information(["p", "iou", "r"], x)
    [{'a': 'p', 'b': 'iou', 'r': 1.0}]
    """
    out = []
    for i in range(len(labels)):
        for j in range(i + 1, len(labels)):
            rs: list[float] = []
            for system in scores:
                a, b = system[:, i], system[:, j]
                if len(a) < 3 or a.std() == 0 or b.std() == 0:
                    rs = []
                    break
                rs.append(float(np.corrcoef(a, b)[0, 1]))
            weakest = min(rs, key=abs) if rs else 0.0
            if rs and abs(weakest) >= SAME_INFORMATION:
                out.append({"a": labels[i], "b": labels[j], "r": round(weakest, 6)})
    return out


def default_metrics(k: int) -> list[str]:
    """The measures compared by default at cutoff ``k``.

    >>> default_metrics(5)
    ['span_recall@5', 'span_precision@5', 'span_iou@5', 'ndcg@5', 'mrr@5', 'context_size@5', 'span_precision_omega']
    """
    return [f"span_recall@{k}", f"span_precision@{k}", f"span_iou@{k}", f"ndcg@{k}", f"mrr@{k}",
            f"context_size@{k}", "span_precision_omega"]


@dataclass
class ChunkingComparison:
    """The outcome of :func:`compare_chunkings`.

    ``comparison``
        the :class:`~rankscope.comparison.Comparison` of the chunkings (systems = chunking names):
        means, intervals, paired tests, corrected p-values, win/tie/loss per metric;
    ``evaluations``
        the :class:`~rankscope.retrieval.evaluation.RetrieverEvaluation` of each chunking (runs,
        latencies, failed queries);
    ``chunkings``
        per chunking: its summary (chunks, sizes, overlap) and the span coverage;
    ``curves``
        per chunking: ``k``, mean ``span_recall@k`` and mean ``context_size@k`` for k = 1..depth;
    ``k``, ``rule``, ``retriever``
        the cutoff, the chunk rule of the ordinary measures, the retriever's name;
    ``per_chunking``
        the measures shown per chunking and not tested (see the module doc);
    ``same_information``
        pairs of compared measures carrying the same information (``{"a", "b", "r"}``).
    """

    comparison: Comparison
    evaluations: dict[str, RetrieverEvaluation]
    chunkings: dict[str, dict[str, Any]]
    curves: dict[str, dict[str, list[float]]]
    k: int
    rule: str
    retriever: str
    build: dict[str, Any] = field(default_factory=dict)
    per_chunking: tuple[str, ...] = ()
    same_information: list[dict[str, Any]] = field(default_factory=list)

    @property
    def names(self) -> tuple[str, ...]:
        """The chunkings, in the order given."""
        return self.comparison.systems

    def table(self) -> list[dict[str, Any]]:
        """One row per chunking: its name, size statistics, coverage and the mean of every metric."""
        rows = []
        for name in self.names:
            info = self.chunkings[name]
            rows.append({"chunking": name, "chunks": info["summary"]["chunks"],
                         "mean_size": info["summary"]["mean_size"], "overlap_chars": info["summary"]["overlap_chars"],
                         "spans_not_in_one_chunk": info["coverage"]["spans"] - info["coverage"]["contained"],
                         **self.comparison.means[name], **self.per_chunking_means()[name]})
        return rows

    def per_chunking_means(self) -> dict[str, dict[str, float]]:
        """Per chunking, the mean of each measure shown per chunking (not tested across chunkings)."""
        return {name: {label: float(ev.result.mean()[label]) for label in self.per_chunking}
                for name, ev in self.evaluations.items()}

    def significant(self) -> list[dict[str, Any]]:
        """The pairs × metrics whose difference is significant after the correction."""
        return [p.to_dict() for p in self.comparison.pairs if p.significant]

    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        """Everything as JSON-ready data (the comparison in its own schema under ``comparison``)."""
        return {"k": self.k, "rule": self.rule, "retriever": self.retriever, "build": self.build,
                "chunkings": self.chunkings, "table": self.table(), "curves": self.curves,
                "compared": list(self.comparison.labels), "per_chunking": list(self.per_chunking),
                "same_information": self.same_information,
                "failed_queries": {n: len(ev.errors) for n, ev in self.evaluations.items()},
                "comparison": self.comparison.to_dict(per_query=per_query)}

    def report(self, lang: str = "en") -> dict[str, Any]:
        """The report content (:func:`rankscope.report.build_report`) with a ``chunking`` section."""
        from rankscope.report.content import build_report

        report = build_report(self.comparison, lang=lang, curves=False)
        report["chunking"] = {"k": self.k, "rule": self.rule, "retriever": self.retriever,
                              "chunkings": self.chunkings, "curves": self.curves, "table": self.table(),
                              "build": self.build, "per_chunking": list(self.per_chunking),
                              "same_information": self.same_information}
        report["warnings"] = [*self.notes(lang), *report.get("warnings", [])]
        return report

    def notes(self, lang: str = "en") -> list[str]:
        """What the tests rest on, in ``lang``: the measures shown per chunking (and why), and the compared
        measures that carry the same information."""
        from rankscope.errors import Items

        out = []
        if self.per_chunking:
            out.append(_("Shown per chunking, not tested across chunkings: {metrics} (ordinary measures score each "
                         "chunking's own chunk qrels; context size and the Ω measures differ by construction).",
                         metrics=Items(self.per_chunking)).text(lang))
        out += [_("{a} and {b} carry the same information (r = {r} across the queries of every chunking): their "
                  "verdicts are one finding, not two.", a=p["a"], b=p["b"], r=f"{p['r']:.4f}").text(lang)
                for p in self.same_information]
        return out

    def write_report(self, path: str | Path, lang: str = "en") -> Path:
        """Write the report (``.html`` with the recall-versus-context plot, ``.md``, ``.json``, ``.tex``)."""
        from rankscope.report import FORMATS, render_report

        out = Path(path)
        fmt = FORMATS.get(out.suffix.lower())
        if fmt is None:
            extensions = Items(tuple(FORMATS))
            raise InvalidParameterError(_("cannot tell the report format from {path!r}; use one of the "
                                                 "extensions {extensions}", path=str(path), extensions=extensions))
        if out.parent and not out.parent.exists():
            raise InvalidParameterError(_("cannot write the report: folder {folder!r} does not exist",
                                                 folder=str(out.parent)))
        out.write_text(render_report(self.report(lang), fmt), encoding="utf-8")
        return out

    def __repr__(self) -> str:
        first = self.comparison.labels[0]
        means = ", ".join(f"{n}: {self.comparison.means[n][first]:.4f}" for n in self.names)
        return f"ChunkingComparison({self.retriever}, {first} — {means})"


def _named(chunkings: Mapping[str, Chunking | str] | Sequence[Chunking | str], corpus: Mapping[str, str]
           ) -> list[tuple[str, Chunking]]:
    from rankscope.chunking.splitters import split

    items = list(chunkings.items()) if isinstance(chunkings, Mapping) else [(None, c) for c in chunkings]
    out: list[tuple[str, Chunking]] = []
    for name, c in items:
        if isinstance(c, str):
            ch = split(corpus, c, name=name)
        elif isinstance(c, Chunking):
            ch = c
        else:
            raise InvalidParameterError(_("a chunking is a Chunking or a splitter spec such as 'fixed:256', got "
                                          "{type}", type=type(c).__name__))
        out.append((str(name) if name is not None else ch.name, ch))
    names = [n for n, __ in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InvalidParameterError(_("two chunkings share the name {name!r}; pass a dict {{name: chunking}}",
                                      name=dup[0]))
    if len(out) < 2:
        raise InvalidParameterError(_("compare_chunkings needs at least 2 chunkings, got {n}", n=len(out)))
    return out


def compare_chunkings(
    testset: TestSet | str | Path,
    chunkings: Mapping[str, Chunking | str] | Sequence[Chunking | str],
    retriever: Any = "bm25",
    metrics: Iterable[str] | None = None,
    *,
    k: int = 5,
    depth: int = 10,
    spans: Any = None,
    rule: str = "any",
    queries: Sequence[str] | None = None,
    test: str = "t",
    alpha: float = 0.05,
    correction: str | None = None,
    baseline: str | None = None,
    permutations: int = 10_000,
    bootstrap: int = 1000,
    rng: np.random.Generator | int | None = None,
    relevance_level: int = 1,
    batch_size: int = 64,
    progress: bool | None = None,
    cache_dir: str | Path | None = None,
) -> ChunkingComparison:
    """Compare ``chunkings`` of ``testset``'s corpus with one retriever, on its span judgments.

    Parameters
    ----------
    testset : a :class:`~rankscope.data.testset.TestSet` (or path) with a corpus and span judgments
        (its items' ``evidence``), or give ``spans=``
    chunkings : ``{name: Chunking or spec}`` or a list of them; a spec such as ``"fixed:256:64"``,
        ``"sentences:256"`` is split by :mod:`rankscope.chunking.splitters`
    retriever : ``"bm25"``, ``"e5"``, ``"dense"``, ``"hybrid"`` or a factory ``chunk texts -> retriever``
        (see :mod:`rankscope.chunking.retrievers`); built once per chunking
    metrics : measures (default :func:`default_metrics` of ``k``); the span measures are compared across
        chunkings, the others (ordinary ones scored on the chunk qrels of ``rule``, ``context_size``, the Ω
        measures) shown per chunking
    k : the cutoff of the default metrics; ``depth`` the hits asked for (and the curve's last k)
    spans : span judgments to use instead of the test set's
    rule : chunk qrels rule for the ordinary measures (``"any"``, ``"contains"``, ``"chars>=N"``, ``"fraction>=F"``)
    queries : evaluate only these query ids (e.g. a sample)
    test, alpha, correction, baseline, permutations, bootstrap, rng : as in :func:`rankscope.compare`
    relevance_level : minimum grade in R (span measures) and of a relevant chunk
    batch_size, progress : passed to :func:`rankscope.evaluate_retriever`
    cache_dir : where the ``e5`` / ``dense`` / ``hybrid`` factories keep embeddings between runs (default: the
        dense retriever's user cache)
    """
    from rankscope.chunking.retrievers import make_factory
    from rankscope.comparison import compare
    from rankscope.measures.parse import parse_metrics
    from rankscope.retrieval.runner import evaluate_retriever

    ts = testset if isinstance(testset, TestSet) else TestSet.from_file(testset)
    if ts.corpus is None:
        raise EmptyInputError(_("test set {name!r} has no corpus to chunk", name=ts.name))
    span_qrels = spans if spans is not None else ts.spans
    if span_qrels is None:
        raise EmptyInputError(_("test set {name!r} has no span judgments (items with 'evidence'); build them with "
                                "SpanQrels.from_answers / from_squad and pass spans=", name=ts.name))
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidParameterError(_("k must be a positive integer, got {value!r}", value=k))
    ChunkRule.parse(rule)
    named = _named(chunkings, ts.corpus)
    factory = make_factory(retriever, cache_dir=cache_dir)
    retriever_name = retriever if isinstance(retriever, str) else getattr(retriever, "__name__", "retriever")
    labels = [label for label, __ in parse_metrics(list(metrics) if metrics is not None else default_metrics(k))]
    cutoffs = [m.cutoff for __, m in parse_metrics(labels) if m.cutoff is not None]
    depth = max(depth, k, *cutoffs)
    curve = [f"{name}@{j}" for j in range(1, depth + 1) for name in ("span_recall", "context_size")]
    ask = list(dict.fromkeys([*labels, *curve]))

    judged = set(span_qrels.queries)
    keep = [q.id for q in ts.queries if q.id in judged]
    if queries is not None:
        wanted = set(queries)
        keep = [q for q in keep if q in wanted]
    if not keep:
        raise EmptyInputError(_("no query has span judgments to evaluate"))
    sub = TestSet([ts[q] for q in keep], None, ts.corpus, ts.name, spans=span_qrels.subset(keep))

    evaluations: dict[str, Any] = {}
    info: dict[str, dict[str, Any]] = {}
    curves: dict[str, dict[str, list[float]]] = {}
    for name, chunking in named:
        built = factory(chunking.texts(ts.corpus))
        ev = evaluate_retriever(built, sub, ask, k=depth, chunking=chunking, rule=rule, name=name,
                                relevance="spans", relevance_level=relevance_level, batch_size=batch_size,
                                progress=progress, workers=1)
        evaluations[name] = ev
        means = ev.result.mean()
        curves[name] = {"k": list(range(1, depth + 1)),
                        "span_recall": [means[f"span_recall@{j}"] for j in range(1, depth + 1)],
                        "context_size": [means[f"context_size@{j}"] for j in range(1, depth + 1)]}
        info[name] = {"spec": chunking.name, "summary": chunking.summary(),
                      "coverage": sub.spans.coverage(chunking).to_dict() if sub.spans is not None else {},
                      "failed_queries": len(ev.errors)}
    pairs = parse_metrics(labels)
    tested = [label for label, m in pairs if comparable(m)]
    shown = tuple(label for label, m in pairs if not comparable(m))
    if not tested:
        raise InvalidParameterError(_("none of {metrics} can be compared across chunkings: ordinary measures score "
                                      "each chunking's own chunk qrels; ask for a span measure (span_recall@5, "
                                      "span_precision@5, span_iou@5)", metrics=Items(tuple(labels))))
    comparison = compare(None, {n: ev.result for n, ev in evaluations.items()}, tested, test=test, alpha=alpha,
                         correction=correction, baseline=baseline, permutations=permutations, bootstrap=bootstrap,
                         rng=rng)
    return ChunkingComparison(comparison, evaluations, info, curves, k, str(ChunkRule.parse(rule)),
                              str(retriever_name), {"queries": len(keep), "spans": len(sub.spans or [])},
                              shown, same_information(comparison.labels, comparison.scores))
