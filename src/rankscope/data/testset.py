"""A labelled set of questions for a retriever: :class:`Query` and :class:`TestSet`.

A test set holds the queries (id, text, optional reference answers and
metadata such as tags), the relevance judgments as :class:`~rankscope.data.Qrels`
(binary or graded, at document or chunk level) and, optionally, the corpus
(doc id -> text).  It is what :func:`rankscope.evaluate_retriever` runs.

Files: JSON (a list of records, or ``{"name", "queries", "corpus"}``), JSONL
(one record a line) and BEIR folders.  A record is::

    {"id": "q1", "query": "...", "relevant_docs": ["d1", "d2"],
     "relevance_scores": {"d1": 2, "d2": 1, "d7": 0}, "answers": ["..."], "metadata": {"tags": [...]}}

Only ``query`` is required, so the plain format ``[{"query", "relevant_docs",
"relevance_scores"}]`` loads as it is (query ids become ``q1, q2, ...`` in file
order).  A document in ``relevant_docs`` gets its grade from
``relevance_scores`` (default 1); a document only in ``relevance_scores`` is
judged with its grade (0 = judged non-relevant).

>>> ts = TestSet.from_annotations(["capital of France?", "largest planet?"], [["d1"], {"d4": 2, "d5": 0}])
>>> [q.id for q in ts.queries], ts.qrels.to_dict()
(['q1', 'q2'], {'q1': {'d1': 1}, 'q2': {'d4': 2, 'd5': 0}})
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from rankscope.data._places import Where
from rankscope.data.qrels import Qrels
from rankscope.data.spans import SpanQrels
from rankscope.errors import (
    DuplicateEntryError,
    InvalidParameterError,
    Items,
    Message,
    RankscopeError,
    RankscopeWarning,
)
from rankscope.i18n import _, ngettext, say

__all__ = ["Query", "TestSet", "LoadIssue", "TestSetWarning"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class TestSetWarning(RankscopeWarning):
    """Something in a test set file was not used as written (an unknown key, a dropped value)."""

    __test__ = False


@dataclass(frozen=True)
class LoadIssue:
    """One finding while reading a test set file, kept in :attr:`TestSet.issues`.

    ``severity`` is ``"warning"`` (the file loaded; e.g. an unknown key, ignored for scoring) or
    ``"error"`` (only kept by the lenient reading of ``rankscope testset check``; a normal load raises
    :class:`~rankscope.errors.ParseError` instead).  ``where`` is ``"record 3"`` (JSON, 0-based) or
    ``"line 4"`` (JSONL / BEIR), the first occurrence when ``count > 1``.

    >>> print(LoadIssue("t.json", "record 0", "gold", "unknown key 'gold' ignored", count=2))
    t.json: record 0: unknown key 'gold' ignored
    """

    source: str
    where: str
    field: str | None
    message: Message | str
    severity: str = "warning"
    count: int = 1

    def __str__(self) -> str:
        return f"{self.source}: {self.where}: {self.message}" if self.where else f"{self.source}: {self.message}"

    def reason(self, lang: str = "en") -> str:
        """What was found in ``lang``, without the place."""
        return str(say(self.message, lang))

    def warning(self) -> TestSetWarning:
        """The finding as a warning (source, where, what was found)."""
        found = self.message
        if not self.where:
            return TestSetWarning(_("{source}: {said}", source=self.source, said=found))
        return TestSetWarning(_("{source}: {where}: {said}", source=self.source, where=Where(self.where), said=found))

    def text(self, lang: str = "en") -> str:
        """The finding as one sentence in ``lang``."""
        return self.warning().text(lang)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"source": self.source, "where": self.where, "field": self.field, "message": str(self.message),
                "severity": self.severity, "count": self.count}


@dataclass(frozen=True)
class Query:
    """One test question.

    ``answers`` are reference answer strings (used for answer-containment
    relevance); ``metadata`` holds anything else (``tags``, source, ...).

    >>> Query("q1", "Who wrote Hamlet?", answers=("Shakespeare",)).answers
    ('Shakespeare',)
    """

    id: str
    text: str
    answers: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not isinstance(self.text, str):
            raise InvalidParameterError(_("a query needs a string id and text, got {id!r}, {text!r}", id=self.id,
                                          text=self.text))
        if isinstance(self.answers, str):
            object.__setattr__(self, "answers", (self.answers,))
        elif not isinstance(self.answers, tuple):
            object.__setattr__(self, "answers", tuple(self.answers))
        if not isinstance(self.metadata, MappingProxyType):
            object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata or {})))

    @property
    def tags(self) -> tuple[str, ...]:
        """``metadata["tags"]`` as a tuple (a single string counts as one tag)."""
        tags = self.metadata.get("tags", ())
        return (tags,) if isinstance(tags, str) else tuple(str(t) for t in tags)


def check_id(value: Any, what: str | Message) -> str:
    """``value`` as an id string; a null, empty or non-scalar id raises :class:`RankscopeError` naming ``what`` (a
    :class:`~rankscope.i18n.Message` is said in the reader's language).

    >>> check_id(7, "relevant_ids")
    '7'
    >>> check_id(None, "relevant_ids item 0")
    Traceback (most recent call last):
    rankscope.errors.RankscopeError: relevant_ids item 0: null id
    >>> try:
    ...     check_id(None, _("field {field}", field="'id'"))
    ... except RankscopeError as exc:
    ...     print(exc.text("zh"))
    字段 'id'：编号为空值（null）
    """
    if value is None:
        raise RankscopeError(_("{what}: null id", what=what))
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise RankscopeError(_("{what}: an id must be a string or an integer, got {value!r}", what=what, value=value))
    text = str(value)
    if not text.strip():
        raise RankscopeError(_("{what}: empty id {text!r}", what=what, text=text))
    return text


def _grades_of(relevant: Any, grades: Mapping[str, Any] | None, where: Message,
               fields: tuple[str, str] = ("relevant", "grades")) -> dict[str, int]:
    """Merge a list of relevant ids and/or a ``{doc: grade}`` mapping into ``{doc: grade}``.

    Null, empty and non-scalar ids raise :class:`RankscopeError` naming ``where`` (``query 'q1'``), the field and the
    item.
    """
    out: dict[str, Any] = {}
    rel_field, grade_field = fields
    grades = {check_id(d, _("{where}: {field} key {key!r}", where=where, field=grade_field, key=d)): g
              for d, g in dict(grades or {}).items()}
    if isinstance(relevant, Mapping):
        grades = {**{check_id(d, _("{where}: {field} key {key!r}", where=where, field=rel_field, key=d)): g
                     for d, g in relevant.items()}, **grades}
        relevant = []
    if isinstance(relevant, (str, int)) or relevant is None:
        relevant = [] if relevant is None else [relevant]
    if not isinstance(relevant, Iterable):
        kind = type(relevant).__name__
        raise RankscopeError(_("{where}: {field} must be a list of ids, got {type}", where=where, field=rel_field,
                               type=kind))
    for i, doc in enumerate(relevant):
        doc = check_id(doc, _("{where}: {field} item {i}", where=where, field=rel_field, i=i))
        out[doc] = grades.get(doc, 1)
    for doc, grade in grades.items():
        out.setdefault(doc, grade)
    for doc, grade in out.items():
        if isinstance(grade, float) and grade.is_integer():
            out[doc] = int(grade)
        elif isinstance(grade, bool) or not isinstance(grade, int):
            raise RankscopeError(_("{where}: the grade of {doc!r} must be an integer, got {grade!r}", where=where,
                                   doc=doc, grade=grade))
    return out


class TestSet:
    """Queries + relevance judgments (+ optional corpus) for evaluating a retriever.

    Parameters
    ----------
    queries : :class:`Query` objects (ids must be unique)
    qrels : :class:`~rankscope.data.Qrels` or ``{query: {doc: grade}}``; may be empty when
        the queries carry reference answers instead
    corpus : optional ``{doc_id: text}``
    name : a label for reports
    spans : optional span judgments (:class:`~rankscope.data.spans.SpanQrels`, from the items'
        ``evidence``): character ranges of the corpus documents that answer each query
    format : the format of the file it was read from (``"json"``, ``"ragas"``, ``"llamaindex"``... see
        :data:`rankscope.io.testset.FORMATS`); None when built in Python

    >>> ts = TestSet([Query("a", "first"), Query("b", "second")], {"a": {"d1": 1}})
    >>> len(ts), ts["b"].text, ts.judged_query_ids
    (2, 'second', ['a'])
    """

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        queries: Sequence[Query],
        qrels: Qrels | Mapping[str, Mapping[str, int]] | None = None,
        corpus: Mapping[str, str] | None = None,
        name: str | None = None,
        issues: Sequence[LoadIssue] = (),
        spans: SpanQrels | None = None,
        format: str | None = None,
    ) -> None:
        self.queries: list[Query] = list(queries)
        #: the format of the file it was read from (None when built in Python)
        self.format = format
        #: what reading the file found (unknown keys...); shown by evaluations and ``testset check``
        self.issues: tuple[LoadIssue, ...] = tuple(issues)
        by_id: dict[str, Query] = {}
        for q in self.queries:
            if not isinstance(q, Query):
                raise InvalidParameterError(_("queries must be Query objects, got {type}", type=type(q).__name__))
            if q.id in by_id:
                raise DuplicateEntryError(_("test set: query id {id!r} occurs twice", id=q.id))
            by_id[q.id] = q
        self._by_id = by_id
        if qrels is None:
            qrels = Qrels([], [], [])
        self.qrels: Qrels = qrels if isinstance(qrels, Qrels) else Qrels.from_dict(qrels)
        stray = sorted(set(self.qrels.queries) - set(by_id))
        if stray:
            more = _(" (and {n} more)", n=len(stray) - 3) if len(stray) > 3 else ""
            shown = Items(tuple(stray[:3]), quote=True)
            raise RankscopeError(ngettext("test set: judgments for {n} query id that is not among the queries: "
                                          "{ids}{more}",
                                          "test set: judgments for {n} query ids that are not among the queries: "
                                          "{ids}{more}",
                                          len(stray), ids=shown, more=more))
        self.corpus: dict[str, str] | None = dict(corpus) if corpus is not None else None
        self.name = name or "testset"
        self.spans: SpanQrels | None = _checked_spans(spans, by_id, self.corpus)

    # -- views ------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.queries)

    def __iter__(self) -> Iterator[Query]:
        return iter(self.queries)

    def __getitem__(self, query_id: str) -> Query:
        try:
            return self._by_id[query_id]
        except KeyError:
            raise KeyError(f"no query {query_id!r} in test set {self.name!r}") from None

    def __contains__(self, query_id: object) -> bool:
        return query_id in self._by_id

    @property
    def query_ids(self) -> list[str]:
        """Query ids in test-set order."""
        return [q.id for q in self.queries]

    @property
    def judged_query_ids(self) -> list[str]:
        """Ids of the queries that have at least one judgment, in test-set order."""
        judged = set(self.qrels.queries)
        return [q.id for q in self.queries if q.id in judged]

    @property
    def has_answers(self) -> bool:
        """True when at least one query carries a reference answer."""
        return any(q.answers for q in self.queries)

    def judgments(self) -> dict[str, dict[str, int]]:
        """``{query_id: {doc_id: grade}}`` (queries without judgments omitted)."""
        return self.qrels.to_dict()

    def subset(self, query_ids: Sequence[str]) -> TestSet:
        """The test set restricted to ``query_ids`` (in that order)."""
        keep = [self[q] for q in query_ids]
        wanted = set(query_ids)
        judg = {q: d for q, d in self.judgments().items() if q in wanted}
        spans = self.spans.subset(query_ids) if self.spans is not None else None
        return TestSet(keep, judg, self.corpus, self.name, self.issues, spans=spans, format=self.format)

    def __repr__(self) -> str:
        corpus = f", {len(self.corpus)} docs" if self.corpus is not None else ""
        spans = f", {len(self.spans)} judged spans" if self.spans is not None else ""
        issues = f", {len(self.issues)} load issue(s)" if self.issues else ""
        return (f"TestSet({self.name!r}, {len(self.queries)} queries, {len(self.qrels)} judgments{spans}{corpus}"
                f"{issues})")

    # -- building -----------------------------------------------------------------------
    @classmethod
    def from_annotations(
        cls,
        queries: Sequence[str | Query],
        relevant: Sequence[Sequence[str] | Mapping[str, int]] | None = None,
        grades: Sequence[Mapping[str, int] | None] | None = None,
        *,
        ids: Sequence[str] | None = None,
        answers: Sequence[str | Sequence[str] | None] | None = None,
        metadata: Sequence[Mapping[str, Any] | None] | None = None,
        corpus: Mapping[str, str] | None = None,
        name: str | None = None,
    ) -> TestSet:
        """Build from parallel lists: query texts, relevant ids (or ``{doc: grade}``), grades, answers.

        ``relevant[i]`` lists the relevant ids of query ``i`` (grade 1 unless
        ``grades[i]`` says otherwise) or maps ids to grades.  Query ids default
        to ``q1, q2, ...``.

        >>> ts = TestSet.from_annotations(["a?", "b?"], answers=["x", ["y", "z"]], ids=["A", "B"])
        >>> ts["B"].answers, len(ts.qrels)
        (('y', 'z'), 0)
        """
        n = len(queries)
        for label, seq in (("relevant", relevant), ("grades", grades), ("ids", ids), ("answers", answers),
                           ("metadata", metadata)):
            if seq is not None and len(seq) != n:
                raise InvalidParameterError(_("from_annotations: {label} has {n} entries for {queries} queries",
                                              label=label, n=len(seq), queries=n))
        built: list[Query] = []
        judg: dict[str, dict[str, int]] = {}
        for i, item in enumerate(queries):
            if isinstance(item, Query):
                q = item
            else:
                ans = answers[i] if answers is not None else None
                q = Query(
                    str(ids[i]) if ids is not None else f"q{i + 1}",
                    str(item),
                    answers=_answers_tuple(ans),
                    metadata=MappingProxyType(dict(metadata[i] or {})) if metadata is not None else _EMPTY,
                )
            built.append(q)
            rel = relevant[i] if relevant is not None else None
            g = grades[i] if grades is not None else None
            docs = _grades_of(rel, g, _("query {id!r}", id=q.id))
            if docs:
                judg[q.id] = docs
        return cls(built, judg, corpus, name)

    # -- files ----------------------------------------------------------------------------
    @classmethod
    def from_json(cls, path: str | Path, name: str | None = None, *, strict: bool = False) -> TestSet:
        """Read a JSON test set: a list of records (seed format included) or ``{"queries": [...]}``.

        Unknown record keys are reported (:class:`TestSetWarning`, kept in :attr:`issues`);
        ``strict=True`` makes them a :class:`~rankscope.errors.ParseError`.
        """
        from rankscope.io.testset import read_json

        return read_json(path, name, strict=strict)

    def to_json(self, path: str | Path, *, include_corpus: bool = True) -> None:
        """Write ``{"name", "queries": [records], "corpus"}`` (UTF-8, readable Chinese)."""
        from rankscope.io.testset import write_json

        write_json(self, path, include_corpus=include_corpus)

    @classmethod
    def from_jsonl(cls, path: str | Path, name: str | None = None, corpus: Mapping[str, str] | None = None, *,
                   strict: bool = False) -> TestSet:
        """Read one record per line (same record keys and ``strict`` as :meth:`from_json`)."""
        from rankscope.io.testset import read_jsonl

        return read_jsonl(path, name, corpus, strict=strict)

    def to_jsonl(self, path: str | Path) -> None:
        """Write one record per line (the corpus is not written)."""
        from rankscope.io.testset import write_jsonl

        write_jsonl(self, path)

    @classmethod
    def from_beir(cls, folder: str | Path, split: str = "test", name: str | None = None, *,
                  strict: bool = False) -> TestSet:
        """Read a BEIR folder: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/{split}.tsv``.

        Only the queries judged in the split are kept (as BEIR does); corpus
        text is ``title + " " + text`` (the title alone or the text alone when
        the other is empty).  Keys other than ``_id``, ``text``, ``metadata`` (and ``title`` in the
        corpus) are reported as in :meth:`from_json` (a query's are kept in its metadata).
        """
        from rankscope.io.testset import read_beir

        return read_beir(folder, split, name, strict=strict)

    def to_beir(self, folder: str | Path, split: str = "test") -> None:
        """Write a BEIR folder (``queries.jsonl``, ``qrels/{split}.tsv``, ``corpus.jsonl`` if any).

        Only judged queries can be read back (BEIR keeps the queries of the split's qrels).
        """
        from rankscope.io.testset import write_beir

        write_beir(self, folder, split)

    @classmethod
    def from_file(cls, path: str | Path, name: str | None = None, *, strict: bool = False,
                  split: str = "test", corpus: Mapping[str, str] | None = None) -> TestSet:
        """Read a test set from a ``.json`` / ``.jsonl`` file or a BEIR folder (``split``): rankscope's records,
        BEIR, a LlamaIndex retrieval dataset or a RAGAS test set, recognised by their fields (:attr:`format` says
        which; see :mod:`rankscope.io.testset`).  ``corpus`` replaces the file's own, and is where the
        reference contexts of a RAGAS or LlamaIndex RAG dataset are looked up to judge document ids."""
        from rankscope.io.testset import read_any

        return read_any(path, name, split=split, strict=strict, corpus=corpus)


def _checked_spans(spans: Any, queries: Mapping[str, Query], corpus: Mapping[str, str] | None) -> SpanQrels | None:
    """Span judgments of known queries, inside the corpus documents when there is a corpus."""
    if spans is None:
        return None
    if not isinstance(spans, SpanQrels):
        raise InvalidParameterError(_("spans must be SpanQrels, got {type}", type=type(spans).__name__))
    stray = sorted(set(spans.queries) - set(queries))
    if stray:
        raise RankscopeError(ngettext("test set: span judgments for {n} query id that is not among the queries, e.g. "
                                      "{id!r}",
                                      "test set: span judgments for {n} query ids that are not among the queries, "
                                      "e.g. {id!r}",
                                      len(stray), id=stray[0]))
    return spans.validate(corpus) if corpus is not None else spans


def _answers_tuple(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value else ()
    return tuple(str(a) for a in value if a is not None and str(a) != "")
