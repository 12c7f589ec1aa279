"""Turning uploaded files into test sets and runs.

Test sets: ``json`` (an object with ``queries`` [and ``documents``], or a list of
query objects), ``jsonl`` (one query object a line), ``beir`` (a zip holding
``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``) and ``trec`` (a
qrels file plus an optional queries file: ``qid<TAB>text`` lines or JSONL).
A query object is ``{"id": ..., "text": ..., "relevant": {doc: grade} | [doc, ...]}``
(``query_id``/``_id``, ``query`` and ``qrels`` are accepted spellings).

Runs: ``trec`` (read by :func:`rankscope.io.read_run`), ``json`` (``{query:
{doc: score}}``) and ``ranked`` (``{query: [doc, ...]}``, best first).
Every problem raises a :class:`~rankscope.errors.RankscopeError` naming the file.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rankscope.data import Qrels, Run
from rankscope.errors import EmptyInputError, InvalidParameterError, ParseError

__all__ = ["ParsedTestSet", "TESTSET_FORMATS", "RUN_FORMATS", "parse_testset", "parse_run"]

TESTSET_FORMATS = ("json", "jsonl", "beir", "trec")
RUN_FORMATS = ("trec", "json", "ranked")
MAX_DOC_CHARS = 4000


@dataclass
class ParsedTestSet:
    qrels: Qrels
    queries: list[tuple[str, str | None]]
    documents: list[tuple[str, str]] = field(default_factory=list)


def _json(data: bytes, source: str) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ParseError(f"not UTF-8 text ({exc.reason})", source=source) from None
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg}", source=source, line=exc.lineno) from None


def _jsonl(data: bytes, source: str) -> list[Any]:
    out = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"not UTF-8 text ({exc.reason})", source=source) from None
    for i, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ParseError(f"invalid JSON: {exc.msg}", source=source, line=i) from None
    return out


def _pick(obj: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for k in keys:
        if k in obj:
            return obj[k]
    return None


def _query_records(records: list[Any], source: str) -> ParsedTestSet:
    qs: list[str] = []
    ds: list[str] = []
    gs: list[int] = []
    queries: list[tuple[str, str | None]] = []
    for i, rec in enumerate(records, start=1):
        if not isinstance(rec, dict):
            raise ParseError(f"query {i}: expected an object, got {type(rec).__name__}", source=source)
        qid = _pick(rec, ("id", "query_id", "qid", "_id"))
        if qid is None or isinstance(qid, (dict, list)):
            raise ParseError(f"query {i}: missing 'id'", source=source)
        text = _pick(rec, ("text", "query", "question"))
        rel = _pick(rec, ("relevant", "qrels", "relevant_docs", "relevance"))
        if isinstance(rel, list):
            rel = {str(d): 1 for d in rel}
        if rel is None:
            rel = {}
        if not isinstance(rel, dict):
            raise ParseError(f"query {qid!r}: 'relevant' must be a list of doc ids or {{doc: grade}}", source=source)
        for d, g in rel.items():
            if isinstance(g, bool) or not isinstance(g, (int, float)) or int(g) != g:
                raise ParseError(f"query {qid!r}: grade of {d!r} must be an integer, got {g!r}", source=source)
            qs.append(str(qid))
            ds.append(str(d))
            gs.append(int(g))
        queries.append((str(qid), None if text is None else str(text)))
    if not queries:
        raise EmptyInputError(f"{source}: no query")
    if not qs:
        raise EmptyInputError(f"{source}: no relevance judgment in any query")
    return ParsedTestSet(Qrels.from_arrays(qs, ds, gs), queries)


def _documents(obj: Any, source: str) -> list[tuple[str, str]]:
    if obj is None:
        return []
    if isinstance(obj, dict):
        items = [{"id": k, "text": v} for k, v in obj.items()]
    elif isinstance(obj, list):
        items = obj
    else:
        raise ParseError("'documents' must be a list of {id, text} or a {id: text} object", source=source)
    out = []
    for rec in items:
        if not isinstance(rec, dict):
            raise ParseError("every document must be an object with 'id' and 'text'", source=source)
        did = _pick(rec, ("id", "doc_id", "_id", "docid"))
        if did is None:
            raise ParseError("a document has no 'id'", source=source)
        text = rec.get("text")
        title = rec.get("title")
        full = " ".join(str(x) for x in (title, text) if x)
        out.append((str(did), full[:MAX_DOC_CHARS]))
    return out


def _beir(path: Path, split: str) -> ParsedTestSet:
    source = path.name
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise ParseError("not a zip archive (a BEIR upload is a zip of corpus.jsonl, queries.jsonl, qrels/)",
                         source=source) from None
    with zf:
        names = {Path(n).name if "/qrels/" not in f"/{n}" else "qrels/" + Path(n).name: n for n in zf.namelist()}
        want = f"qrels/{split}.tsv"
        for need in ("queries.jsonl", want):
            if need not in names:
                raise ParseError(f"the archive holds no {need}", source=source)
        queries_raw = _jsonl(zf.read(names["queries.jsonl"]), f"{source}:queries.jsonl")
        corpus_raw = _jsonl(zf.read(names["corpus.jsonl"]), f"{source}:corpus.jsonl") if "corpus.jsonl" in names else []
        qrels = _qrels_tsv(zf.read(names[want]).decode("utf-8", "replace"), f"{source}:{want}")
    texts = {str(q.get("_id")): q.get("text") for q in queries_raw if isinstance(q, dict)}
    judged = list(dict.fromkeys(str(x) for x in qrels.query_column()))
    queries = [(q, texts.get(q)) for q in judged]
    return ParsedTestSet(qrels, queries, _documents(corpus_raw, source))


def _qrels_tsv(text: str, source: str) -> Qrels:
    qs, ds, gs = [], [], []
    for i, line in enumerate(text.split("\n"), start=1):
        parts = line.strip().split("\t") if "\t" in line else line.split()
        if not parts or not parts[0] or (i == 1 and parts[0] in ("query-id", "query_id", "qid")):
            continue
        if len(parts) == 4:  # TREC qrels
            parts = [parts[0], parts[2], parts[3]]
        if len(parts) != 3:
            raise ParseError(f"expected 'query-id, corpus-id, score' columns, got {len(parts)}", source=source, line=i)
        try:
            g = int(parts[2])
        except ValueError:
            raise ParseError(f"grade must be an integer, got {parts[2]!r}", source=source, line=i) from None
        qs.append(parts[0])
        ds.append(parts[1])
        gs.append(g)
    if not qs:
        raise EmptyInputError(f"{source}: no judgment")
    return Qrels.from_arrays(qs, ds, gs)


def _queries_file(path: Path, source: str) -> dict[str, str]:
    data = path.read_bytes()
    if data.lstrip().startswith(b"{"):
        return {str(_pick(r, ("_id", "id", "query_id", "qid"))): str(_pick(r, ("text", "query")) or "")
                for r in _jsonl(data, source) if isinstance(r, dict)}
    out = {}
    for i, line in enumerate(data.decode("utf-8", "replace").split("\n"), start=1):
        if not line.strip():
            continue
        qid, sep, text = line.rstrip("\r").partition("\t")
        if not sep:
            qid, _, text = line.strip().partition(" ")
        if not qid:
            raise ParseError("expected 'query_id<TAB>text'", source=source, line=i)
        out[qid.strip()] = text.strip()
    return out


def parse_testset(path: Path, format: str, *, filename: str = "upload", queries_path: Path | None = None,
                  queries_filename: str = "queries", split: str = "test") -> ParsedTestSet:
    """Read an uploaded test set saved at ``path``."""
    if format not in TESTSET_FORMATS:
        raise InvalidParameterError(f"format must be one of {', '.join(TESTSET_FORMATS)}; got {format!r}")
    if format == "beir":
        return _beir(path, split)
    if format == "trec":
        from rankscope.io import read_qrels

        qrels = read_qrels(path)
        texts = _queries_file(queries_path, queries_filename) if queries_path is not None else {}
        judged = list(dict.fromkeys(str(x) for x in qrels.query_column()))
        return ParsedTestSet(qrels, [(q, texts.get(q)) for q in judged])
    raw = path.read_bytes()
    if format == "jsonl":
        return _query_records(_jsonl(raw, filename), filename)
    obj = _json(raw, filename)
    if isinstance(obj, list):
        return _query_records(obj, filename)
    if not isinstance(obj, dict) or "queries" not in obj:
        raise ParseError("expected an object with 'queries' (and optionally 'documents') or a list of queries",
                         source=filename)
    parsed = _query_records(obj["queries"], filename)
    parsed.documents = _documents(_pick(obj, ("documents", "corpus", "docs")), filename)
    return parsed


def parse_run(path: Path, format: str, name: str, *, filename: str = "upload") -> Run:
    """Read an uploaded run saved at ``path``."""
    if format not in RUN_FORMATS:
        raise InvalidParameterError(f"format must be one of {', '.join(RUN_FORMATS)}; got {format!r}")
    if format == "trec":
        from rankscope.io import read_run

        run = read_run(path)
        run.name = name
        return run
    obj = _json(path.read_bytes(), filename)
    if not isinstance(obj, dict) or not obj:
        raise ParseError("expected a non-empty object {query: {doc: score}} or {query: [doc, ...]}", source=filename)
    if format == "ranked" and any(not isinstance(v, list) for v in obj.values()):
        raise ParseError("ranked format: every query must map to a list of doc ids", source=filename)
    try:
        return Run.from_dict(obj, name)
    except (TypeError, AttributeError) as exc:
        raise ParseError(f"cannot read the run: {exc}", source=filename) from None
