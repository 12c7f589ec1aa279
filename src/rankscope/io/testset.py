"""Reading and writing :class:`~rankscope.data.testset.TestSet` files: JSON, JSONL, BEIR folders, and the test sets
of LlamaIndex and RAGAS.

Formats (recognised by their fields; the test set's ``format`` says which one was read, :data:`FORMATS`):

``json`` / ``jsonl``
    rankscope's records (below): a JSON list or ``{"name", "queries": [...], "corpus"}``, or one record a line.
``beir``
    a BEIR folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``).
``llamaindex``
    LlamaIndex's retrieval-evaluation dataset, as ``generate_question_context_pairs`` makes it and
    ``EmbeddingQAFinetuneDataset.save_json`` writes it: ``{"queries": {id: text}, "corpus": {node id: text},
    "relevant_docs": {query id: [node ids]}, "mode": "text"}``.  Query and node ids are kept.
``llamaindex-rag``
    LlamaIndex's ``LabelledRagDataset`` JSON: ``{"examples": [{"query", "reference_contexts",
    "reference_answer", "query_by", "reference_answer_by"}]}``.
``ragas``
    a RAGAS test set or evaluation dataset (0.2 and later: ``Testset.to_jsonl`` / ``to_list``,
    ``EvaluationDataset``), JSON list or JSONL of ``SingleTurnSample`` fields: ``user_input`` (the
    query), ``reference_context_ids`` (the relevant ids, kept as they are), ``reference_contexts``,
    ``reference`` (the reference answer); ``retrieved_contexts``, ``retrieved_context_ids``,
    ``response``, ``multi_responses``, ``rubrics``, ``synthesizer_name``, ``persona_name``,
    ``query_style``, ``query_length`` go to the query's metadata.
``ragas-0.1``
    a RAGAS 0.1 test set: ``question``, ``contexts`` (the contexts the question was made from),
    ``ground_truth``, ``evolution_type``, ``metadata``, ``episode_done``.

Reference contexts are texts, not ids.  With a corpus (``corpus=``, ``--corpus``), each context
judges the documents whose text equals it, else those that contain it (whitespace runs compared as
one space; :func:`match_contexts`);
a context found in no document is counted (a :class:`~rankscope.data.testset.TestSetWarning`,
kept in ``issues``), and so are contexts found only inside longer documents.  Without a corpus the
distinct contexts become the corpus, each with the id ``ctx-`` + the first 12 hex digits of the
SHA-256 of its text, and a warning says so.  A record's ``reference_context_ids`` win over its
contexts (a context beside its id fills the corpus).  RAGAS samples have no query id: queries are
``q1, q2, ...`` in file order, as for rankscope records without ``id``.

Record keys accepted on reading (the spellings people write; one field, several names):

========== ============================================================================================
field      keys
========== ============================================================================================
id         ``id``, ``query_id``, ``qid``, ``_id``, ``question_id``
text       ``query``, ``question``, ``text``, ``user_input``, ``query_text``, ``question_text``
relevant   ``relevant_docs``, ``relevant_ids``, ``relevant``, ``doc_ids``, ``relevant_doc_ids``,
           ``relevant_document_ids``, ``relevant_passage_ids``, ``relevant_chunk_ids``, ``positive_ids``,
           ``positive_doc_ids``, ``positives``, ``pos_ids``, ``gold_ids``, ``gold_doc_ids``, ``gold_docs``,
           ``ground_truth_ids``, ``context_ids``, ``reference_context_ids``
grades     ``relevance_scores``, ``grades``, ``qrels``, ``judgments``, ``relevance_grades``
answers    ``answers``, ``answer``, ``reference_answers``, ``reference_answer``, ``ground_truth``,
           ``ground_truths``, ``gold_answers``, ``gold_answer``
========== ============================================================================================

plus ``metadata`` (a mapping), ``tags`` and ``evidence`` — a list of judged spans
``{"doc_id", "start", "end"[, "grade"][, "text"]}`` (character offsets into the corpus document, end
exclusive) that becomes the test set's span judgments (:class:`~rankscope.data.spans.SpanQrels`;
files without it load as before).  Two names of one field in the same record are an
error.  **Any other key is reported**: a :class:`~rankscope.data.testset.TestSetWarning` naming the
key, how many records have it, the first record, and the closest known key; the key is kept in the
query's metadata but not used for scoring; the finding is kept in :attr:`TestSet.issues
<rankscope.data.testset.TestSet.issues>`.  With ``strict=True`` it is a
:class:`~rankscope.errors.ParseError`.  Null, empty or non-scalar ids (query ids, relevant ids,
grade keys, BEIR ``_id`` / ``query-id`` / ``corpus-id``) are a :class:`~rankscope.errors.ParseError`
with the file and the record (JSON, 0-based) or line (JSONL, BEIR).  ``lenient=True`` (what
``rankscope testset check`` uses) records them as issues of severity ``"error"`` and drops the bad
value instead, so that every problem of a file is listed at once.
"""

from __future__ import annotations

import difflib
import json
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from rankscope.data._places import Where, place_error
from rankscope.data.qrels import Qrels
from rankscope.errors import EmptyInputError, Items, Message, ParseError, RankscopeError
from rankscope.i18n import N_, _, gettext, ngettext

if TYPE_CHECKING:
    from rankscope.data.testset import LoadIssue, TestSet

__all__ = ["read_json", "write_json", "read_jsonl", "write_jsonl", "read_beir", "write_beir", "record_of",
           "parse_record", "read_corpus", "read_any", "RECORD_KEYS", "Reader", "FORMATS", "format_name",
           "match_contexts", "context_id"]

_ID = ("id", "query_id", "qid", "_id", "question_id")
_TEXT = ("query", "question", "text", "user_input", "query_text", "question_text")
_RELEVANT = ("relevant_docs", "relevant_ids", "relevant", "doc_ids", "relevant_doc_ids", "relevant_document_ids",
             "relevant_passage_ids", "relevant_chunk_ids", "positive_ids", "positive_doc_ids", "positives", "pos_ids",
             "gold_ids", "gold_doc_ids", "gold_docs", "ground_truth_ids", "context_ids", "reference_context_ids")
_GRADES = ("relevance_scores", "grades", "qrels", "judgments", "relevance_grades")
_ANSWERS = ("answers", "answer", "reference_answers", "reference_answer", "ground_truth", "ground_truths",
            "gold_answers", "gold_answer")
_OTHER = ("metadata", "tags", "evidence")
#: every key a test-set record may have, by field
RECORD_KEYS: dict[str, tuple[str, ...]] = {"id": _ID, "text": _TEXT, "relevant": _RELEVANT, "grades": _GRADES,
                                           "answers": _ANSWERS, "other": _OTHER}
_KNOWN = frozenset(k for keys in RECORD_KEYS.values() for k in keys)
_WRAPPER_KEYS = ("name", "queries", "corpus")
#: the formats read: code -> English name (message ``testset.format.<code>`` in other languages)
FORMATS: dict[str, str] = {
    "json": N_("rankscope JSON"), "jsonl": N_("rankscope JSONL"), "beir": N_("BEIR folder"),
    "llamaindex": N_("LlamaIndex retrieval dataset (EmbeddingQAFinetuneDataset)"),
    "llamaindex-rag": N_("LlamaIndex LabelledRagDataset"), "ragas": N_("RAGAS test set"),
    "ragas-0.1": N_("RAGAS 0.1 test set"),
}
_LLAMAINDEX_KEYS = ("queries", "corpus", "relevant_docs", "mode")
#: per format of records: (query text key, reference answer key, reference contexts key, other known keys kept in the
#: query's metadata)
_CONTEXT_FORMATS: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    "ragas": ("user_input", "reference", "reference_contexts",
              ("retrieved_contexts", "retrieved_context_ids", "response", "multi_responses", "rubric", "rubrics",
               "synthesizer_name", "persona_name", "query_style", "query_length")),
    "ragas-0.1": ("question", "ground_truth", "contexts", ("evolution_type", "metadata", "episode_done")),
    "llamaindex-rag": ("query", "reference_answer", "reference_contexts", ("query_by", "reference_answer_by")),
}
_CONTEXT_PREFIX = "ctx-"
_DOC_ID_KEYS = ("_id", "id", "doc_id", "docid", "pid")
_BEIR_QUERY_KEYS = ("_id", "text", "metadata")
_BEIR_CORPUS_KEYS = ("_id", "title", "text", "metadata")


def suggest(key: str, known: Any) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``known`` to ``key``, or ``""``.

    >>> suggest("relevant_doc_idz", _KNOWN)
    " (did you mean 'relevant_doc_ids'?)"
    """
    close = closest(key, known)
    return f" (did you mean {close!r}?)" if close else ""


def closest(key: str, known: Any) -> str | None:
    """The closest of ``known`` to ``key`` (difflib ratio at least 0.6), or ``None``."""
    close = difflib.get_close_matches(key.lower(), sorted(known), n=1, cutoff=0.6)
    return close[0] if close else None


class Reader:
    """The findings of reading one file: unknown keys (counted per key), and bad values.

    ``problem()`` raises :class:`ParseError` unless ``lenient``; ``unknown()`` counts a key, and
    :meth:`finish` turns the counts into :class:`LoadIssue` warnings (an error when ``strict``).
    """

    def __init__(self, source: str, *, strict: bool = False, lenient: bool = False) -> None:
        self.source, self.strict, self.lenient = source, strict, lenient
        self.issues: list[LoadIssue] = []
        self._unknown: dict[tuple[str, str], list[Any]] = {}  # (source, key) -> [first where, count, known, line]

    def problem(self, what: Message | str, where: str, field: str | None, line: int | None = None,
                source: str | None = None) -> None:
        """A value that cannot be used: raised, or kept when lenient."""
        from rankscope.data.testset import LoadIssue

        src = source or self.source
        if not self.lenient:
            raise place_error(what, src, where if line is None else None, line)
        self.issues.append(LoadIssue(src, where, field, what, severity="error"))

    def unknown(self, keys: Any, known: Any, where: str, line: int | None = None, source: str | None = None) -> None:
        for key in keys:
            if key not in known:
                slot = self._unknown.setdefault((source or self.source, str(key)), [where, 0, known, line])
                slot[1] += 1

    def finish(self) -> list[LoadIssue]:
        from rankscope.data.testset import LoadIssue, TestSetWarning

        for (src, key), (where, count, known, line) in self._unknown.items():
            records = ngettext("{n} record", "{n} records", count)
            close = closest(key, known)
            values = {"field": repr(key), "records": records, "first": Where(where), "close": repr(close)}
            if self.strict:
                raise ParseError(_("unknown key {field} in {records} (first: {first}) is not used for scoring (did you "
                                   "mean {close}?); rename it, or read without --strict to ignore it", **values)
                                 if close else
                                 _("unknown key {field} in {records} (first: {first}) is not used for scoring; rename "
                                   "it, or read without --strict to ignore it", **values), source=src, line=line)
            message = _("unknown key {field} in {records} (first: {first}) is not used for scoring (did you mean "
                        "{close}?)", **values) if close else \
                _("unknown key {field} in {records} (first: {first}) is not used for scoring", **values)
            issue = LoadIssue(src, where, key, message, count=count)
            self.issues.append(issue)
            warnings.warn(TestSetWarning(_("{source}: {said}", source=src, said=message)), stacklevel=4)
        self._unknown.clear()
        return self.issues


def _pick(record: Mapping[str, Any], keys: tuple[str, ...], where: str) -> tuple[str | None, Any]:
    """``(key, value)`` of the one key of ``keys`` present in ``record``; two different ones raise."""
    found = [k for k in keys if k in record]
    if not found:
        return None, None
    for other in found[1:]:
        if record[other] != record[found[0]]:
            raise RankscopeError(_("both {first!r} and {other!r} given ({where}); keep one of them", first=found[0],
                                   other=other, where=Where(where)))
    return found[0], record[found[0]]


def parse_record(record: Any, index: int, source: str, line: int | None = None,
                 reader: Reader | None = None, where: str | None = None) -> tuple[Any, dict[str, int]] | None:
    """One record -> ``(Query, {doc: grade})``; ``index`` (0-based) names the default id ``q{index+1}``.

    ``None`` when the record is unusable and ``reader`` is lenient (the problem is in ``reader.issues``).
    ``where`` names the record in messages (default ``line N`` or ``record N``).
    """
    from rankscope.data.testset import Query, _answers_tuple, _grades_of, check_id

    reader = reader or Reader(source)
    where = where or (f"line {line}" if line is not None else f"record {index}")

    def error(field: str | None, what: Message | str) -> None:
        reader.problem(what, where, field, line)

    if not isinstance(record, Mapping):
        error(None, _("expected an object, got {type}", type=type(record).__name__))
        return None
    try:
        __, text = _pick(record, _TEXT, where)
        id_key, qid_raw = _pick(record, _ID, where)
        rel_key, relevant = _pick(record, _RELEVANT, where)
        grade_key, grades = _pick(record, _GRADES, where)
        __, answers_raw = _pick(record, _ANSWERS, where)
    except RankscopeError as exc:
        error(None, exc.message)
        return None
    if text is None:
        keys = Items(_TEXT)
        error(None, _("no query text (keys tried: {keys})", keys=keys))
        return None
    if not isinstance(text, str):
        error(None, _("the query text must be a string, got {value}", value=repr(text)))
        return None
    if id_key is None:
        qid = f"q{index + 1}"
    else:
        try:
            qid = check_id(qid_raw, _("field {field}", field=repr(id_key)))
        except RankscopeError as exc:
            error(id_key, exc.message)
            return None
    reader.unknown(record.keys(), _KNOWN, where, line)
    meta = dict(record.get("metadata") or {}) if isinstance(record.get("metadata"), Mapping) else {}
    if "tags" in record:
        meta.setdefault("tags", record["tags"])
    for key in record:
        if key not in _KNOWN:
            meta.setdefault(str(key), record[key])
    if grades is not None and not isinstance(grades, Mapping):
        error(grade_key, _("{field} must map doc ids to grades", field=grade_key))
        grades = None
    try:
        docs = _grades_of(relevant, grades, _("query {id!r}", id=qid),
                          (rel_key or "relevant", grade_key or "grades"))
    except (RankscopeError, TypeError) as exc:  # a TypeError's text is Python's, shown as it is
        error(rel_key if rel_key and rel_key in str(exc) else grade_key,
              exc.message if isinstance(exc, RankscopeError) else _("{said}", said=str(exc)))
        docs = _grades_lenient(relevant, grades) if reader.lenient else {}
    answers = _answers_tuple(answers_raw) if isinstance(answers_raw, (str, list, tuple)) or answers_raw is None \
        else _answers_tuple([answers_raw])
    return Query(qid, text, answers=answers, metadata=MappingProxyType(meta)), docs


def _grades_lenient(relevant: Any, grades: Any) -> dict[str, int]:
    """The usable part of a record's judgments (lenient reading): bad ids and grades dropped."""
    out: dict[str, int] = {}
    items = relevant.items() if isinstance(relevant, Mapping) else [(d, 1) for d in (relevant or [])
                                                                    if not isinstance(relevant, (str, int))]
    for doc, grade in list(items) + list((grades or {}).items() if isinstance(grades, Mapping) else []):
        if isinstance(doc, (str, int)) and not isinstance(doc, bool) and str(doc).strip() \
                and isinstance(grade, int) and not isinstance(grade, bool):
            out[str(doc)] = grade
    return out


def record_of(query: Any, grades: Mapping[str, int]) -> dict[str, Any]:
    """The record written for one query (seed-compatible keys first)."""
    rec: dict[str, Any] = {"id": query.id, "query": query.text,
                           "relevant_docs": [d for d, g in grades.items() if g > 0]}
    if any(g != 1 for g in grades.values()):
        rec["relevance_scores"] = dict(grades)
    if query.answers:
        rec["answers"] = list(query.answers)
    if query.metadata:
        rec["metadata"] = dict(query.metadata)
    return rec


def _evidence(raw: list[Any], records: list[tuple[Any, dict[str, int]] | None], corpus: Mapping[str, str] | None,
              source: str, lines: list[int] | None = None) -> Any:
    """The span judgments of the records' ``evidence`` lists (None when there is none)."""
    if not any(isinstance(r, Mapping) and r.get("evidence") is not None for r in raw):
        return None
    from rankscope.data.span_build import evidence_spans

    keep = [i for i, rec in enumerate(records) if rec is not None]
    items = [(records[i][0].id, raw[i].get("evidence"), f"record {i}") for i in keep]  # type: ignore[index]
    return evidence_spans(items, corpus, source, None if lines is None else [lines[i] for i in keep])


def _build(records: list[tuple[Any, dict[str, int]] | None], corpus: Mapping[str, str] | None, name: str | None,
           source: str, reader: Reader, spans: Any = None, fmt: str | None = None) -> TestSet:
    from rankscope.data.testset import TestSet

    kept = [r for r in records if r is not None]
    if not kept and not reader.lenient:
        raise EmptyInputError(_("{source}: the test set holds no query", source=source))
    if reader.lenient:  # drop repeated ids so that every other finding can still be listed
        seen: set[str] = set()
        unique = []
        for q, docs in kept:
            if q.id in seen:
                reader.problem(_("query id {id!r} occurs twice", id=q.id), "", "id")
                continue
            seen.add(q.id)
            unique.append((q, docs))
        kept = unique
    qs, ds, gs = [], [], []
    for q, docs in kept:
        for d, g in docs.items():
            qs.append(q.id)
            ds.append(d)
            gs.append(g)
    issues = reader.finish()
    try:
        return TestSet([q for q, __ in kept], Qrels(qs, ds, gs), corpus, name, issues, spans=spans, format=fmt)
    except RankscopeError as exc:
        raise ParseError(_("{said}", said=exc.message), source=source) from None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(_("not UTF-8 text ({reason})", reason=exc.reason), source=str(path)) from None


def _check_corpus(corpus: Mapping[Any, Any], reader: Reader, source: str) -> dict[str, str]:
    from rankscope.data.testset import check_id

    out: dict[str, str] = {}
    for i, (doc, text) in enumerate(corpus.items()):
        try:
            doc_id = check_id(doc, _("corpus entry {i}", i=i))
        except RankscopeError as exc:
            reader.problem(exc.message, "corpus", "corpus", source=source)
            continue
        if not isinstance(text, str):
            kind = type(text).__name__
            reader.problem(_("corpus entry {id!r}: the text must be a string, got {type}",
                                                 id=doc_id, type=kind), "corpus", "corpus", source=source)
            continue
        out[doc_id] = text
    return out


def read_json(path: str | Path, name: str | None = None, *, strict: bool = False,
              lenient: bool = False, corpus: Mapping[str, str] | None = None) -> TestSet:
    """A JSON list of records, or an object with ``queries`` (and optional ``name``, ``corpus``); a LlamaIndex
    retrieval dataset or ``LabelledRagDataset``; a RAGAS test set (see the module documentation).  ``corpus``
    replaces the file's own."""
    path = Path(path)
    reader = Reader(str(path), strict=strict, lenient=lenient)
    try:
        data = json.loads(_read_text(path))
    except json.JSONDecodeError as exc:
        raise ParseError(_("invalid JSON: {reason}", reason=exc.msg), source=str(path), line=exc.lineno) from None
    if isinstance(data, Mapping) and isinstance(data.get("queries"), Mapping):
        return _read_llamaindex(data, path, reader, name, corpus)
    if isinstance(data, Mapping) and isinstance(data.get("examples"), list) and "queries" not in data:
        reader.unknown(data.keys(), ("examples",), "the top-level object")
        return _read_context_records(data["examples"], "llamaindex-rag", path, reader, name, corpus)
    own_corpus = None
    if isinstance(data, Mapping):
        if "queries" not in data:
            first = str(next(iter(data), ""))
            close = closest(first, ["queries"])
            if close:
                raise ParseError(_("expected a list of records or an object with a 'queries' list (did you mean "
                                   "{close!r}?)", close=close),
                                 source=str(path))
            raise ParseError(_("expected a list of records or an object with a 'queries' list"), source=str(path))
        reader.unknown(data.keys(), _WRAPPER_KEYS, "the top-level object")
        own_corpus = data.get("corpus")
        if own_corpus is not None and not isinstance(own_corpus, Mapping):
            raise ParseError(_("'corpus' must map doc ids to texts"), source=str(path))
        if own_corpus is not None:
            own_corpus = _check_corpus(own_corpus, reader, str(path))
        name = name or data.get("name")
        data = data["queries"]
    if not isinstance(data, list):
        raise ParseError(_("expected a list of records"), source=str(path))
    fmt = _sniff_records(data)
    if fmt is not None:
        return _read_context_records(data, fmt, path, reader, name, corpus if corpus is not None else own_corpus)
    corpus = corpus if corpus is not None else own_corpus
    records = [parse_record(r, i, str(path), reader=reader) for i, r in enumerate(data)]
    spans = _evidence(data, records, corpus, str(path))
    return _build(records, corpus, name or path.stem, str(path), reader, spans, "json")


def read_jsonl(path: str | Path, name: str | None = None, corpus: Mapping[str, str] | None = None, *,
               strict: bool = False, lenient: bool = False) -> TestSet:
    """One JSON record per line (rankscope's or RAGAS's); blank lines are skipped."""
    path = Path(path)
    reader = Reader(str(path), strict=strict, lenient=lenient)
    records: list[tuple[Any, dict[str, int]] | None] = []
    raw: list[Any] = []
    lines: list[int] = []
    fmt: str | None = None
    for line_no, rec in _json_lines(path):
        if not raw:
            fmt = _sniff_records([rec])
        if fmt is None:
            records.append(parse_record(rec, len(records), str(path), line_no, reader=reader))
        raw.append(rec)
        lines.append(line_no)
    if fmt is not None:
        return _read_context_records(raw, fmt, path, reader, name, corpus, lines)
    spans = _evidence(raw, records, corpus, str(path), lines)
    return _build(records, corpus, name or path.stem, str(path), reader, spans, "jsonl")


def _sniff_records(records: list[Any]) -> str | None:
    """``"ragas"``, ``"ragas-0.1"`` when the first record has the fields of one, else None (rankscope's records)."""
    first = next((r for r in records if isinstance(r, Mapping)), None)
    if first is None:
        return None
    keys = set(first)
    ragas_only = {"reference_contexts", "reference", "synthesizer_name", "retrieved_contexts", "response",
                  "retrieved_context_ids", "multi_responses"}
    if "user_input" in keys and keys & ragas_only:
        return "ragas"
    if {"question", "contexts"} <= keys and keys & {"evolution_type", "episode_done"}:
        return "ragas-0.1"
    return None


def _read_llamaindex(data: Mapping[str, Any], path: Path, reader: Reader, name: str | None,
                     given: Mapping[str, str] | None) -> TestSet:
    """``{"queries": {id: text}, "corpus": {id: text}, "relevant_docs": {id: [ids]}, "mode": "text"}``."""
    source = str(path)
    mode = data.get("mode")
    if mode not in (None, "text"):
        raise ParseError(_("a LlamaIndex dataset of mode {mode}: only text datasets (mode 'text') can be read",
                           mode=repr(mode)),
                         source=source)
    reader.unknown(data.keys(), _LLAMAINDEX_KEYS, "the top-level object")
    corpus, relevant = data.get("corpus"), data.get("relevant_docs") or {}
    if corpus is not None and not isinstance(corpus, Mapping):
        raise ParseError(_("'corpus' must map doc ids to texts"), source=source)
    if not isinstance(relevant, Mapping):
        kind = type(relevant).__name__
        raise ParseError(_("'relevant_docs' must map query ids to lists of node ids, got {type}", type=kind),
                         source=source)
    queries = data["queries"]
    for j, qid in enumerate(relevant):
        if qid not in queries:
            reader.problem(_("judgments for query {id!r}, which is not in 'queries'", id=str(qid)),
                           f"relevant_docs, entry {j}", "relevant_docs")
    records = [parse_record({"id": qid, "query": text, "relevant_docs": relevant.get(qid)}, i, source,
                            reader=reader, where=f"queries, entry {i}")
               for i, (qid, text) in enumerate(queries.items())]
    if given is None and corpus is not None:
        given = _check_corpus(corpus, reader, source)
    return _build(records, given, name or path.stem, source, reader, None, "llamaindex")


def _from_context_record(rec: Any, fmt: str) -> tuple[Any, Any]:
    """``(rankscope record, reference contexts or None)`` of a RAGAS / LlamaIndex RAG record."""
    if not isinstance(rec, Mapping):
        return rec, None
    text_key, answer_key, context_key, kept = _CONTEXT_FORMATS[fmt]
    out: dict[str, Any] = {}
    meta: dict[str, Any] = {}
    contexts = None
    for key, value in rec.items():
        if key == text_key:
            out["query"] = value
        elif key == answer_key:
            out["answers"] = value
        elif key == context_key:
            contexts = value
        elif fmt == "ragas" and key == "reference_context_ids":
            out[key] = value  # a relevant-ids key of rankscope's records too
        elif key in kept:
            meta[key] = value
        else:  # rankscope's own keys (id, metadata...) are read as usual; any other is reported
            out[key] = value
    if meta:
        own = out.get("metadata")
        out["metadata"] = {**meta, **own} if isinstance(own, Mapping) else meta
    return out, contexts


def _read_context_records(raw: list[Any], fmt: str, path: Path, reader: Reader, name: str | None,
                          corpus: Mapping[str, str] | None, lines: list[int] | None = None) -> TestSet:
    """Records whose judgments are reference contexts (texts) or their ids: RAGAS, LlamaIndex RAG datasets."""
    source = str(path)
    context_key = _CONTEXT_FORMATS[fmt][2]
    records: list[tuple[Any, dict[str, int]] | None] = []
    contexts: list[list[str] | None] = []
    for i, rec in enumerate(raw):
        line = lines[i] if lines is not None else None
        where = f"line {line}" if line is not None else f"record {i}"
        converted, texts = _from_context_record(rec, fmt)
        if fmt == "ragas" and isinstance(rec, Mapping) and isinstance(rec.get("user_input"), list):
            reader.problem(_("a multi-turn sample (user_input is a list of messages) has no single query to "
                             "retrieve for"), where, "user_input", line)
            records.append(None)
            contexts.append(None)
            continue
        if texts is not None and (not isinstance(texts, list) or not all(isinstance(t, str) for t in texts)):
            kind = type(texts).__name__
            reader.problem(_("{field} must be a list of texts, got {type}", field=context_key, type=kind), where,
                           context_key, line)
            texts = None
        records.append(parse_record(converted, i, source, line, reader=reader))
        contexts.append(texts)
    corpus = _judge_contexts(records, contexts, corpus, source, reader, lines)
    return _build(records, corpus, name or path.stem, source, reader, None, fmt)


def _normal(text: str) -> str:
    return " ".join(text.split())


def context_id(text: str) -> str:
    """The id a reference context gets when no corpus is given: ``ctx-`` + 12 hex digits of the SHA-256 of its text
    (whitespace runs as one space).

    >>> context_id("Paris is the capital of France."), context_id(" Paris is  the capital of France.")[:8]
    ('ctx-557be7eca214', 'ctx-557b')
    """
    import hashlib

    return _CONTEXT_PREFIX + hashlib.sha256(_normal(text).encode("utf-8")).hexdigest()[:12]


def match_contexts(texts: list[str], corpus: Mapping[str, str]) -> tuple[list[list[str]], list[bool]]:
    """``(ids of the documents each text is in, whether it equals one)``: the documents whose text equals the
    context, else those that contain it (whitespace runs compared as one space); ``[]`` when none does.

    Equal texts are found by one dictionary look-up; the others by one substring search each over the whole
    corpus joined (C speed), positions mapped back to documents with a binary search.

    >>> match_contexts(["b c", "x y", "a b"], {"d1": "a  b", "d2": "a b c d", "d3": "zzz"})
    ([['d2'], [], ['d1']], [False, False, True])
    """
    import numpy as np

    ids = list(corpus)
    normal = [_normal(t) for t in corpus.values()]
    exact: dict[str, list[str]] = {}
    for doc, text in zip(ids, normal):
        exact.setdefault(text, []).append(doc)
    joined = "\x00".join(normal)
    starts = np.cumsum([0] + [len(t) + 1 for t in normal[:-1]])
    out: list[list[str]] = []
    equal: list[bool] = []
    for text in texts:
        key = _normal(text)
        if not key:
            out.append([])
            equal.append(False)
            continue
        found = list(exact.get(key, []))
        equal.append(bool(found))
        if found:  # the documents it was cut from: no search
            out.append(found)
            continue
        pos = joined.find(key)
        while pos >= 0:
            doc = ids[int(np.searchsorted(starts, pos, side="right")) - 1]
            if doc not in found:
                found.append(doc)
            pos = joined.find(key, pos + 1)
        out.append(found)
    return out, equal


def _judge_contexts(records: list[tuple[Any, dict[str, int]] | None], contexts: list[list[str] | None],
                    corpus: Mapping[str, str] | None, source: str, reader: Reader,
                    lines: list[int] | None) -> dict[str, str] | None:
    """Judge each record's reference contexts (the records' judgments are filled in place); the corpus to keep."""
    from rankscope.data.testset import LoadIssue

    def where(i: int) -> str:
        return f"line {lines[i]}" if lines is not None else f"record {i}"

    def note(issue: LoadIssue) -> None:  # kept in the test set's issues and said now
        reader.issues.append(issue)
        warnings.warn(issue.warning(), stacklevel=5)

    todo = [i for i, (rec, texts) in enumerate(zip(records, contexts)) if rec is not None and texts]
    if corpus is None:
        built: dict[str, str] = {}
        for i in todo:
            rec, texts = records[i], contexts[i]
            assert rec is not None and texts is not None
            if rec[1]:  # ids given: the contexts beside them are their texts
                if len(texts) == len(rec[1]):
                    built.update((d, t) for d, t in zip(rec[1], texts) if d not in built)
                continue
            for text in texts:
                if _normal(text):
                    doc = context_id(text)
                    built.setdefault(doc, text)
                    rec[1].setdefault(doc, 1)
        made = sum(d.startswith(_CONTEXT_PREFIX) for d in built)
        if made:
            note(LoadIssue(source, "", "corpus", _("no corpus given: the corpus is the test set's distinct "
                                                   "reference contexts ({n}), with ids made from their text (ctx-...); "
                                                   "give the corpus the test set was made from to judge its document "
                                                   "ids", n=made), count=made))
        return built or None
    texts_all = [t for i in todo for t in contexts[i] or []]
    found, equal = match_contexts(texts_all, corpus)
    pos = 0
    unmatched: list[int] = []
    inside = 0
    for i in todo:
        rec, texts = records[i], contexts[i]
        assert rec is not None and texts is not None
        hits, same = found[pos:pos + len(texts)], equal[pos:pos + len(texts)]
        pos += len(texts)
        if rec[1]:  # ids given: they are the judgments
            continue
        for docs, is_equal in zip(hits, same):
            if not docs:
                unmatched.append(i)
            elif not is_equal:
                inside += 1
            for doc in docs:
                rec[1].setdefault(doc, 1)
    total = len(texts_all)
    if unmatched:
        first = where(unmatched[0])
        note(LoadIssue(source, "", "reference_contexts",
                       _("reference contexts in no corpus document: {n} of {total} (first: {first}); their queries "
                         "are judged on the others; give the corpus the test set was made from", n=len(unmatched),
                         total=total, first=Where(first)), count=len(unmatched)))
    if inside:
        note(LoadIssue(source, "", "reference_contexts",
                       _("reference contexts found only inside longer corpus documents: {n} of {total}; those "
                         "documents are judged relevant", n=inside, total=total), count=inside))
    return dict(corpus)


def read_corpus(path: str | Path) -> dict[str, str]:
    """A corpus file: JSONL (BEIR ``corpus.jsonl``: ``_id`` or ``id`` / ``doc_id``, ``text``, optional
    ``title``), JSON (``{id: text}`` or a list of such records) or TSV / CSV (``id``, ``text``
    columns with a header; or two columns without one).

    Null or empty ids, a missing text, and an id that occurs twice raise :class:`ParseError`
    with the line (record).
    """
    from rankscope.data.testset import check_id

    path = Path(path)
    suffix = path.suffix.lower()
    out: dict[str, str] = {}

    def add(obj: Any, where: str, line: int | None) -> None:
        def fail(what: Message | str) -> ParseError:  # after ``where`` (record 3) when there is no line
            return place_error(what, str(path), None if line else where, line)

        if not isinstance(obj, Mapping):
            raise fail(_("expected an object"))
        key = next((k for k in _DOC_ID_KEYS if k in obj), None)
        if key is None:
            keys = Items(_DOC_ID_KEYS)
            raise fail(_("no id (keys tried: {keys})", keys=keys))
        try:
            doc = check_id(obj[key], _("field {field}", field=repr(key)))
        except RankscopeError as exc:
            raise fail(exc.message) from None
        title = str(obj.get("title") or "").strip()
        text = obj.get("text", obj.get("contents", obj.get("content")))
        if not isinstance(text, str):
            keys = Items(("text", "contents", "content"))
            raise fail(_("no text (keys tried: {keys})", keys=keys))
        if doc in out:
            raise fail(_("document id {id!r} occurs twice", id=doc))
        out[doc] = f"{title} {text}" if title and text else (title or text)

    if suffix in (".jsonl", ".ndjson"):
        for line_no, obj in _json_lines(path):
            add(obj, f"line {line_no}", line_no)
    elif suffix == ".json":
        try:
            data = json.loads(_read_text(path))
        except json.JSONDecodeError as exc:
            raise ParseError(_("invalid JSON: {reason}", reason=exc.msg), source=str(path), line=exc.lineno) from None
        if isinstance(data, Mapping) and all(isinstance(v, str) for v in data.values()):
            for i, (doc, text) in enumerate(data.items()):
                add({"id": doc, "text": text}, f"entry {i}", None)
        elif isinstance(data, list):
            for i, obj in enumerate(data):
                add(obj, f"record {i}", None)
        else:
            mapping, record = "{id: text}", "{id, text}"
            raise ParseError(_("a JSON corpus is {mapping} or a list of {record} records", mapping=mapping,
                               record=record),
                             source=str(path))
    elif suffix in (".tsv", ".csv", ".txt"):
        import csv

        delimiter = "," if suffix == ".csv" else "\t"
        with open(path, encoding="utf-8", newline="") as fh:
            rows: Iterator[list[str]] = csv.reader(fh, delimiter=delimiter)
            header = next(rows, None)
            cols = [c.strip().lower() for c in header] if header else []
            has_header = any(c in cols for c in _DOC_ID_KEYS)
            if header and not has_header:
                rows = iter([header, *rows])
                cols = ["id", "text"]
            for line_no, row in enumerate(rows, start=2 if has_header else 1):
                if not row:
                    continue
                add(dict(zip(cols, row)), f"line {line_no}", line_no)
    else:
        raise ParseError(_("a corpus file is .jsonl, .json, .tsv or .csv"), source=str(path))
    if not out:
        raise EmptyInputError(_("{source}: the corpus holds no document", source=str(path)))
    return out


def read_any(path: str | Path, name: str | None = None, *, split: str = "test", strict: bool = False,
             lenient: bool = False, corpus: Mapping[str, str] | None = None) -> TestSet:
    """A ``.json`` / ``.jsonl`` file or a BEIR folder (see :meth:`TestSet.from_file`); ``corpus`` replaces the
    file's own."""
    p = Path(path)
    if p.is_dir():
        ts = read_beir(p, split, name, strict=strict, lenient=lenient)
        if corpus is None:
            return ts
        from rankscope.data.testset import TestSet

        return TestSet(ts.queries, ts.qrels, corpus, ts.name, ts.issues, spans=ts.spans, format=ts.format)
    if not p.exists():
        raise FileNotFoundError(2, "no such file", str(p))
    if p.suffix.lower() in (".jsonl", ".ndjson"):
        return read_jsonl(p, name, corpus, strict=strict, lenient=lenient)
    return read_json(p, name, strict=strict, lenient=lenient, corpus=corpus)


def format_name(fmt: str | None, lang: str = "en") -> str:
    """The name of a test-set format in ``lang`` (:data:`FORMATS`); ``""`` for None.

    >>> format_name("llamaindex"), format_name("ragas", "zh")
    ('LlamaIndex retrieval dataset (EmbeddingQAFinetuneDataset)', 'RAGAS 测试集')
    """
    return "" if fmt is None else gettext(FORMATS[fmt], lang)


def _records(ts: TestSet) -> list[dict[str, Any]]:
    judg = ts.judgments()
    out = [record_of(q, judg.get(q.id, {})) for q in ts.queries]
    if ts.spans is not None:  # span judgments travel as each item's "evidence"
        evidence: dict[str, list[dict[str, Any]]] = {}
        for r in ts.spans.to_records():
            evidence.setdefault(r.pop("query_id"), []).append(r)
        for rec in out:
            if rec["id"] in evidence:
                rec["evidence"] = evidence[rec["id"]]
    return out


def write_json(ts: TestSet, path: str | Path, include_corpus: bool = True) -> None:
    """Write ``{"name", "queries", "corpus"}``."""
    out: dict[str, Any] = {"name": ts.name, "queries": _records(ts)}
    if include_corpus and ts.corpus is not None:
        out["corpus"] = ts.corpus
    Path(path).write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def write_jsonl(ts: TestSet, path: str | Path) -> None:
    """Write one record per line."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in _records(ts))


def _json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each non-blank line (lines end at ``\\n`` only), read as a stream."""
    try:
        with open(path, encoding="utf-8", newline="\n") as fh:
            for line_no, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    yield line_no, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ParseError(_("invalid JSON: {reason}", reason=exc.msg), source=str(path),
                                     line=line_no) from None
    except UnicodeDecodeError as exc:
        raise ParseError(_("not UTF-8 text ({reason})", reason=exc.reason), source=str(path)) from None


def _jsonl_objects(path: Path, reader: Reader, known: tuple[str, ...]) -> list[tuple[int, str, dict[str, Any]]]:
    """``(line, checked _id, object)`` of a BEIR JSONL file; unknown keys counted in ``reader``."""
    from rankscope.data.testset import check_id

    out = []
    for line_no, obj in _json_lines(path):
        if not isinstance(obj, dict) or "_id" not in obj:
            raise ParseError(_("expected an object with an '_id'"), source=str(path), line=line_no)
        try:
            ident = check_id(obj["_id"], _("field {field}", field="'_id'"))
        except RankscopeError as exc:
            reader.problem(exc.message, f"line {line_no}", "_id", line_no, source=str(path))
            continue
        reader.unknown(obj.keys(), known, f"line {line_no}", line_no, source=str(path))
        out.append((line_no, ident, obj))
    return out


def _beir_qrels(path: Path, reader: Reader) -> Qrels:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    try:
        table = pacsv.read_csv(
            path,
            parse_options=pacsv.ParseOptions(delimiter="\t"),
            convert_options=pacsv.ConvertOptions(
                column_types={"query-id": pa.string(), "corpus-id": pa.string(), "score": pa.int64()}
            ),
        )
    except pa.ArrowInvalid as exc:
        raise ParseError(_("malformed BEIR qrels ({reason})", reason=str(exc)), source=str(path)) from None
    missing = {"query-id", "corpus-id", "score"} - set(table.column_names)
    if missing:
        raise ParseError(_("BEIR qrels need the header 'query-id corpus-id score', missing {missing}",
                           missing=sorted(missing)),
                         source=str(path),
                         line=1)
    keep = None
    for column in ("query-id", "corpus-id"):  # null or blank ids, vectorised; the line is row + 2
        col = table.column(column)
        blank = pc.fill_null(pc.equal(pc.utf8_trim_whitespace(col), ""), True).to_numpy(zero_copy_only=False)
        for row in np.flatnonzero(blank)[:20].tolist():
            reader.problem(_("empty {column}", column=column), f"line {row + 2}", column, row + 2, source=str(path))
        keep = ~blank if keep is None else keep & ~blank
    if keep is not None and not keep.all():
        table = table.filter(pa.array(keep))
    return Qrels(table.column("query-id"), table.column("corpus-id"), table.column("score"))


def read_beir(folder: str | Path, split: str = "test", name: str | None = None, *, strict: bool = False,
              lenient: bool = False) -> TestSet:
    """A BEIR folder; queries restricted to those judged in ``qrels/{split}.tsv``."""
    from rankscope.data.testset import Query, TestSet, _answers_tuple

    folder = Path(folder)
    reader = Reader(str(folder), strict=strict, lenient=lenient)
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if not qrels_path.exists():
        splits = sorted(p.stem for p in (folder / "qrels").glob("*.tsv")) if (folder / "qrels").is_dir() else []
        hint = f"; splits here: {', '.join(splits)}" if splits else ""
        raise FileNotFoundError(2, f"no qrels for split {split!r}{hint}", str(qrels_path))
    qrels = _beir_qrels(qrels_path, reader)
    judged = set(qrels.queries)
    queries = []
    for __, qid, obj in _jsonl_objects(folder / "queries.jsonl", reader, _BEIR_QUERY_KEYS):
        if qid in judged:
            nested = obj.get("metadata")
            meta = dict(nested) if isinstance(nested, Mapping) else {}
            meta.update({k: v for k, v in obj.items() if k not in ("_id", "text", "metadata")})
            answers = _answers_tuple(meta.pop("answers", None))
            queries.append(Query(qid, str(obj.get("text", "")), answers=answers, metadata=MappingProxyType(meta)))
    corpus: dict[str, str] | None = None
    corpus_path = folder / "corpus.jsonl"
    if corpus_path.exists():
        corpus = {}
        for __, doc, obj in _jsonl_objects(corpus_path, reader, _BEIR_CORPUS_KEYS):
            title, text = str(obj.get("title") or "").strip(), str(obj.get("text") or "")
            corpus[doc] = f"{title} {text}" if title and text else (title or text)
    issues = reader.finish()
    try:
        return TestSet(queries, qrels, corpus, name or folder.name, issues, format="beir")
    except RankscopeError as exc:
        raise ParseError(_("{said}", said=exc.message), source=str(folder)) from None


def write_beir(ts: TestSet, folder: str | Path, split: str = "test") -> None:
    """Write a BEIR folder: ``queries.jsonl`` (answers under ``metadata.answers``), ``qrels/{split}.tsv``
    and, when the test set has one, ``corpus.jsonl`` (the text in ``text``, an empty ``title``)."""
    folder = Path(folder)
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as fh:
        for q in ts.queries:
            meta = dict(q.metadata)
            if q.answers:
                meta["answers"] = list(q.answers)
            fh.write(json.dumps({"_id": q.id, "text": q.text, "metadata": meta}, ensure_ascii=False) + "\n")
    judg = ts.judgments()
    with open(folder / "qrels" / f"{split}.tsv", "w", encoding="utf-8") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        for q in ts.queries:
            fh.writelines(f"{q.id}\t{d}\t{g}\n" for d, g in judg.get(q.id, {}).items())
    if ts.corpus is not None:
        with open(folder / "corpus.jsonl", "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps({"_id": d, "title": "", "text": t}, ensure_ascii=False) + "\n"
                          for d, t in ts.corpus.items())
