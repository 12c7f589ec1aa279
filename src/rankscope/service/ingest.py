"""Turning uploaded files into test sets and runs.

Test sets: ``json`` / ``jsonl`` / ``beir`` (a zip of a BEIR folder) are read by
:class:`rankscope.data.testset.TestSet` (see ``docs/`` for the record keys: an object
with ``queries`` and an optional ``corpus`` ``{doc_id: text}``, or a list of query
records such as ``{"id": ..., "query": ..., "relevant": {doc: grade} | [doc, ...]}``);
``trec`` is a qrels file plus an optional queries file (``qid<TAB>text`` lines or JSONL).

Runs: ``trec`` (read by :func:`rankscope.io.read_run`), ``json`` (``{query:
{doc: score}}``) and ``ranked`` (``{query: [doc, ...]}``, best first).
Every problem raises a :class:`~rankscope.errors.RankscopeError` naming the file.
"""

from __future__ import annotations

import tempfile
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


def _pick(obj: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for k in keys:
        if k in obj:
            return obj[k]
    return None


def _from_testset(ts: Any) -> ParsedTestSet:
    """Adapt a :class:`rankscope.data.testset.TestSet` (the project's test set reader)."""
    queries = [(q.id, q.text or None) for q in ts.queries]
    docs = [(str(d), str(t)[:MAX_DOC_CHARS]) for d, t in (ts.corpus or {}).items()]
    if len(ts.qrels) == 0:
        raise EmptyInputError(f"{ts.name}: no relevance judgment in any query")
    return ParsedTestSet(ts.qrels, queries, docs)


def _beir(path: Path, split: str, filename: str) -> ParsedTestSet:
    from rankscope.data.testset import TestSet

    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise ParseError("not a zip archive (a BEIR upload is a zip of corpus.jsonl, queries.jsonl, qrels/)",
                         source=filename) from None
    with zf, tempfile.TemporaryDirectory(prefix="rankscope-beir-") as tmp:
        tops = [n for n in zf.namelist() if Path(n).name == "queries.jsonl"]
        if not tops:
            raise ParseError("the archive holds no queries.jsonl", source=filename)
        zf.extractall(tmp)  # zipfile drops absolute paths and '..' components
        folder = (Path(tmp) / tops[0]).parent
        try:
            return _from_testset(TestSet.from_beir(folder, split=split, name=Path(filename).stem))
        except FileNotFoundError as exc:
            raise ParseError(str(exc.strerror or exc), source=filename) from None


def _queries_file(path: Path, source: str) -> dict[str, str]:
    data = path.read_bytes()
    if data.lstrip().startswith(b"{"):
        from rankscope.io.jsonfmt import load_json_lines

        return {str(_pick(r, ("_id", "id", "query_id", "qid"))): str(_pick(r, ("text", "query")) or "")
                for _, r in load_json_lines(path, source) if isinstance(r, dict)}
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
    """Read an uploaded test set saved at ``path`` (JSON/JSONL/BEIR through :class:`TestSet`)."""
    from rankscope.data.testset import TestSet

    if format not in TESTSET_FORMATS:
        raise InvalidParameterError(f"format must be one of {', '.join(TESTSET_FORMATS)}; got {format!r}")
    if format == "beir":
        return _beir(path, split, filename)
    if format == "trec":
        from rankscope.io import read_qrels

        qrels = read_qrels(path)
        texts = _queries_file(queries_path, queries_filename) if queries_path is not None else {}
        judged = list(dict.fromkeys(str(x) for x in qrels.query_column()))
        return ParsedTestSet(qrels, [(q, texts.get(q)) for q in judged])
    named = path.with_name(Path(filename).name or path.name)  # error messages name the uploaded file
    path.rename(named)
    try:
        ts = TestSet.from_jsonl(named) if format == "jsonl" else TestSet.from_json(named)
    finally:
        named.rename(path)
    return _from_testset(ts)


def parse_run(path: Path, format: str, name: str, *, filename: str = "upload") -> Run:
    """Read an uploaded run saved at ``path``."""
    if format not in RUN_FORMATS:
        raise InvalidParameterError(f"format must be one of {', '.join(RUN_FORMATS)}; got {format!r}")
    if format == "trec":
        from rankscope.io import read_run

        run = read_run(path)
        run.name = name
        return run
    from rankscope.io.jsonfmt import load_json

    obj = load_json(path, filename)
    if not isinstance(obj, dict) or not obj:
        raise ParseError("expected a non-empty object {query: {doc: score}} or {query: [doc, ...]}", source=filename)
    if format == "ranked" and any(not isinstance(v, list) for v in obj.values()):
        raise ParseError("ranked format: every query must map to a list of doc ids", source=filename)
    try:
        return Run.from_dict(obj, name)
    except (TypeError, AttributeError) as exc:
        raise ParseError(f"cannot read the run: {exc}", source=filename) from None
