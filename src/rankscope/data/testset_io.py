"""Reading and writing :class:`~rankscope.data.testset.TestSet` files: JSON, JSONL, BEIR folders.

Record keys accepted on reading (first match wins): id — ``id``, ``query_id``,
``qid``, ``_id``; text — ``query``, ``question``, ``text``; relevant ids —
``relevant_docs``, ``relevant_ids``, ``relevant``, ``doc_ids``; grades —
``relevance_scores``, ``grades``, ``qrels``; answers — ``answers``, ``answer``,
``reference_answers``, ``reference_answer``; everything under ``metadata`` (and a
top-level ``tags``) becomes the query's metadata; ``evidence`` — a list of judged
spans ``{"doc_id", "start", "end"[, "grade"][, "text"]}`` (character offsets into
the corpus document, end exclusive) — becomes the test set's span judgments
(:class:`~rankscope.data.spans.SpanQrels`; files without it load as before).  A malformed record raises
:class:`~rankscope.errors.ParseError` with file and line (JSONL) or record index (JSON).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from rankscope.data.qrels import Qrels
from rankscope.errors import EmptyInputError, ParseError, RankscopeError

if TYPE_CHECKING:
    from rankscope.data.testset import TestSet

__all__ = ["read_json", "write_json", "read_jsonl", "write_jsonl", "read_beir", "write_beir", "record_of",
           "parse_record"]

_ID = ("id", "query_id", "qid", "_id")
_TEXT = ("query", "question", "text")
_RELEVANT = ("relevant_docs", "relevant_ids", "relevant", "doc_ids")
_GRADES = ("relevance_scores", "grades", "qrels")
_ANSWERS = ("answers", "answer", "reference_answers", "reference_answer")


def _pick(record: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if key in record:
            return record[key]
    return None


def parse_record(record: Any, index: int, source: str, line: int | None = None) -> tuple[Any, dict[str, int]]:
    """One record -> ``(Query, {doc: grade})``; ``index`` (0-based) names the default id ``q{index+1}``."""
    from rankscope.data.testset import Query, _answers_tuple, _grades_of

    label = "" if line is not None else f"record {index}: "

    def error(message: str) -> ParseError:
        return ParseError(f"{label}{message}", source=source, line=line)

    if not isinstance(record, Mapping):
        raise error(f"expected an object, got {type(record).__name__}")
    text = _pick(record, _TEXT)
    if text is None:
        raise error(f"no query text (keys tried: {', '.join(_TEXT)})")
    if not isinstance(text, str):
        raise error(f"the query text must be a string, got {text!r}")
    qid = _pick(record, _ID)
    qid = f"q{index + 1}" if qid is None else str(qid)
    meta = dict(record.get("metadata") or {})
    if "tags" in record:
        meta.setdefault("tags", record["tags"])
    grades = _pick(record, _GRADES)
    relevant = _pick(record, _RELEVANT)
    if grades is not None and not isinstance(grades, Mapping):
        raise error("relevance_scores must map doc ids to grades")
    try:
        docs = _grades_of(relevant, grades, f"query {qid!r}")
        answers = _answers_tuple(_pick(record, _ANSWERS))
    except (RankscopeError, TypeError) as exc:
        raise error(str(exc)) from None
    return Query(qid, text, answers=answers, metadata=MappingProxyType(meta)), docs


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


def _evidence(raw: list[Any], records: list[tuple[Any, dict[str, int]]], corpus: Mapping[str, str] | None,
              source: str, lines: list[int] | None = None) -> Any:
    """The span judgments of the records' ``evidence`` lists (None when there is none)."""
    if not any(isinstance(r, Mapping) and r.get("evidence") is not None for r in raw):
        return None
    from rankscope.data.span_build import evidence_spans

    items = [(q.id, r.get("evidence"), f"record {i}") for i, (r, (q, _)) in enumerate(zip(raw, records))]
    return evidence_spans(items, corpus, source, lines)


def _build(records: list[tuple[Any, dict[str, int]]], corpus: Mapping[str, str] | None, name: str | None,
           source: str, spans: Any = None) -> TestSet:
    from rankscope.data.testset import TestSet

    if not records:
        raise EmptyInputError(f"{source}: the test set holds no query")
    qs, ds, gs = [], [], []
    for q, docs in records:
        for d, g in docs.items():
            qs.append(q.id)
            ds.append(d)
            gs.append(g)
    try:
        return TestSet([q for q, _ in records], Qrels(qs, ds, gs), corpus, name, spans=spans)
    except RankscopeError as exc:
        raise ParseError(str(exc), source=source) from None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"not UTF-8 text ({exc.reason})", source=str(path)) from None


def read_json(path: str | Path, name: str | None = None) -> TestSet:
    """A JSON list of records, or an object with ``queries`` (and optional ``name``, ``corpus``)."""
    path = Path(path)
    try:
        data = json.loads(_read_text(path))
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg}", source=str(path), line=exc.lineno) from None
    corpus = None
    if isinstance(data, Mapping):
        if "queries" not in data:
            raise ParseError("expected a list of records or an object with a 'queries' list", source=str(path))
        corpus = data.get("corpus")
        if corpus is not None and not isinstance(corpus, Mapping):
            raise ParseError("'corpus' must map doc ids to texts", source=str(path))
        name = name or data.get("name")
        data = data["queries"]
    if not isinstance(data, list):
        raise ParseError("expected a list of records", source=str(path))
    records = [parse_record(r, i, str(path)) for i, r in enumerate(data)]
    spans = _evidence(data, records, corpus, str(path))
    return _build(records, corpus, name or path.stem, str(path), spans)


def read_jsonl(path: str | Path, name: str | None = None, corpus: Mapping[str, str] | None = None) -> TestSet:
    """One JSON record per line; blank lines are skipped."""
    path = Path(path)
    records: list[tuple[Any, dict[str, int]]] = []
    raw, lines = [], []
    for line_no, rec in _json_lines(path):
        records.append(parse_record(rec, len(records), str(path), line_no))
        raw.append(rec)
        lines.append(line_no)
    spans = _evidence(raw, records, corpus, str(path), lines)
    return _build(records, corpus, name or path.stem, str(path), spans)


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
                    raise ParseError(f"invalid JSON: {exc.msg}", source=str(path), line=line_no) from None
    except UnicodeDecodeError as exc:
        raise ParseError(f"not UTF-8 text ({exc.reason})", source=str(path)) from None


def _jsonl_objects(path: Path) -> list[tuple[int, dict[str, Any]]]:
    out = []
    for line_no, obj in _json_lines(path):
        if not isinstance(obj, dict) or "_id" not in obj:
            raise ParseError("expected an object with an '_id'", source=str(path), line=line_no)
        out.append((line_no, obj))
    return out


def _beir_qrels(path: Path) -> Qrels:
    import pyarrow as pa
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
        raise ParseError(f"malformed BEIR qrels ({exc})", source=str(path)) from None
    missing = {"query-id", "corpus-id", "score"} - set(table.column_names)
    if missing:
        raise ParseError(f"BEIR qrels need the header 'query-id corpus-id score', missing {sorted(missing)}",
                         source=str(path), line=1)
    return Qrels(table.column("query-id"), table.column("corpus-id"), table.column("score"))


def read_beir(folder: str | Path, split: str = "test", name: str | None = None) -> TestSet:
    """A BEIR folder; queries restricted to those judged in ``qrels/{split}.tsv``."""
    from rankscope.data.testset import Query, TestSet, _answers_tuple

    folder = Path(folder)
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if not qrels_path.exists():
        splits = sorted(p.stem for p in (folder / "qrels").glob("*.tsv")) if (folder / "qrels").is_dir() else []
        hint = f"; splits here: {', '.join(splits)}" if splits else ""
        raise FileNotFoundError(2, f"no qrels for split {split!r}{hint}", str(qrels_path))
    qrels = _beir_qrels(qrels_path)
    judged = set(qrels.queries)
    queries = []
    for _, obj in _jsonl_objects(folder / "queries.jsonl"):
        qid = str(obj["_id"])
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
        for _, obj in _jsonl_objects(corpus_path):
            title, text = str(obj.get("title") or "").strip(), str(obj.get("text") or "")
            corpus[str(obj["_id"])] = f"{title} {text}" if title and text else (title or text)
    try:
        return TestSet(queries, qrels, corpus, name or folder.name)
    except RankscopeError as exc:
        raise ParseError(str(exc), source=str(folder)) from None


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
