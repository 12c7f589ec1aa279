"""Turning uploaded files into test sets and runs.

Test sets: ``json`` / ``jsonl`` / ``beir`` (a zip of a BEIR folder) are read by
:class:`rankscope.data.testset.TestSet` (see ``docs/`` for the record keys: an object
with ``queries`` and an optional ``corpus`` ``{doc_id: text}``, or a list of query
records such as ``{"id": ..., "query": ..., "relevant": {doc: grade} | [doc, ...]}``);
``trec`` is a qrels file plus an optional queries file (``qid<TAB>text`` lines or JSONL).

Runs: ``trec`` (read by :func:`rankscope.io.read_run`), ``json`` (``{query:
{doc: score}}``) and ``ranked`` (``{query: [doc, ...]}``, best first).
Every problem raises :class:`UploadError` naming the uploaded file (never the server's temporary
copy) and the request field; sizes are limited while the files are read (:mod:`.uploads`).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from rankscope.data import Qrels, Run
from rankscope.errors import EmptyInputError, Items, ParseError, RankscopeError
from rankscope.i18n import Message, _
from rankscope.service.uploads import CHUNK, Counter, Renamed, extract_beir, spool

__all__ = ["ParsedTestSet", "Uploaded", "UploadError", "TESTSET_FORMATS", "RUN_FORMATS", "read_testset_upload",
           "read_run_upload", "named_errors"]

TESTSET_FORMATS = ("json", "jsonl", "beir", "trec")
RUN_FORMATS = ("trec", "json", "ranked")
MAX_DOC_CHARS = 100_000
"""Characters of a document text a test set keeps (snippets, the judging view). A longer text is cut at this
length, never silently: the test set counts its cut documents (``n_documents_cut``: API, test set page)."""


@dataclass
class ParsedTestSet:
    qrels: Qrels
    queries: list[tuple[str, str | None]]
    documents: list[tuple[str, str]] = field(default_factory=list)
    documents_cut: int = 0  # document texts longer than MAX_DOC_CHARS, cut at that length


def _pick(obj: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for k in keys:
        if k in obj:
            return obj[k]
    return None


def _from_testset(ts: Any) -> ParsedTestSet:
    """Adapt a :class:`rankscope.data.testset.TestSet` (the project's test set reader)."""
    queries = [(q.id, q.text or None) for q in ts.queries]
    texts = [(str(d), str(t)) for d, t in (ts.corpus or {}).items()]
    if len(ts.qrels) == 0:
        raise EmptyInputError(_("{name}: no relevance judgment in any query", name=ts.name))
    cut = sum(1 for __, t in texts if len(t) > MAX_DOC_CHARS)
    return ParsedTestSet(ts.qrels, queries, [(d, t[:MAX_DOC_CHARS]) for d, t in texts], cut)


def _queries_file(path: Path, source: str) -> dict[str, str]:
    data = path.read_bytes()
    if data.lstrip().startswith(b"{"):
        from rankscope.io.jsonfmt import load_json_lines

        return {str(_pick(r, ("_id", "id", "query_id", "qid"))): str(_pick(r, ("text", "query")) or "")
                for __, r in load_json_lines(path, source) if isinstance(r, dict)}
    out = {}
    for i, line in enumerate(data.decode("utf-8", "replace").split("\n"), start=1):
        if not line.strip():
            continue
        qid, sep, text = line.rstrip("\r").partition("\t")
        if not sep:
            qid, __, text = line.strip().partition(" ")
        if not qid:
            raise ParseError(_("expected 'query_id<TAB>text'"), source=source, line=i)
        out[qid.strip()] = text.strip()
    return out


@dataclass(frozen=True)
class Uploaded:
    """An uploaded file: its content, the name it was uploaded under, and the request field."""

    fh: BinaryIO
    filename: str
    field: str = "file"


class UploadError(RankscopeError):
    """A problem with an uploaded file; the message names the uploaded file, ``field`` the request field."""

    def __init__(self, field: str, message: Message | str) -> None:
        self.field = field
        super().__init__(message)


@contextmanager
def named_errors(names: dict[Path, str], field: str) -> Iterator[None]:
    """Re-raise the readers' errors with the uploaded file names in place of the temporary paths."""
    try:
        yield
    except UploadError:
        raise
    except RankscopeError as exc:
        raise UploadError(field, _("{said}", said=Renamed(exc, tuple(names.items())))) from None


def read_testset_upload(tmp: Path, counter: Counter, up: Uploaded, format: str, *, queries: Uploaded | None = None,
                        split: str = "test") -> ParsedTestSet:
    """Read an uploaded test set (JSON/JSONL/BEIR through :class:`TestSet`, or TREC qrels plus queries).

    ``tmp`` is a private folder (:func:`~rankscope.service.uploads.upload_dir`); every file is spooled there
    under the limits of ``counter``.
    """
    from rankscope.data.testset import TestSet

    if format not in TESTSET_FORMATS:
        formats = Items(TESTSET_FORMATS)
        raise UploadError("format", _("must be one of {choices}; got {value!r}", choices=formats, value=format))
    path = tmp / "file"
    names = {tmp / "beir": up.filename, path: up.filename}
    with named_errors(names, up.field):
        if format == "beir":
            with open(path, "wb") as out:
                shutil.copyfileobj(up.fh, out, CHUNK)  # a zip: its members are counted as they are extracted
            _nonempty(path, up)
            folder, prefix = extract_beir(path, tmp / "beir", split, counter, up.field, up.filename)
            names[folder] = f"{up.filename}/{prefix}".rstrip("/")
            if not (folder / "qrels" / f"{split}.tsv").exists():  # only this split's qrels are extracted
                raise ParseError(_("no qrels for split {split!r}", split=split), source=up.filename)
            try:
                ts = TestSet.from_beir(folder, split=split, name=Path(up.filename).stem)
            except FileNotFoundError as exc:  # the reader's own words (the qrels are checked above)
                raise ParseError(str(exc.strerror or exc),
                                 source=up.filename) from None
            parsed = _from_testset(ts)
        else:
            spool(up.fh, path, counter, up.field, up.filename)
            _nonempty(path, up)
            if format == "trec":
                from rankscope.io import read_qrels

                qrels = read_qrels(path, format="trec")
                texts: dict[str, str] = {}
                if queries is not None:
                    qpath = spool(queries.fh, tmp / "queries", counter, queries.field, queries.filename)
                    names[qpath] = queries.filename
                    with named_errors(names, queries.field):
                        texts = _queries_file(qpath, queries.filename)
                judged = list(dict.fromkeys(str(x) for x in qrels.query_column()))
                parsed = ParsedTestSet(qrels, [(q, texts.get(q)) for q in judged])
            else:
                stem = Path(up.filename).stem
                ts = TestSet.from_jsonl(path, name=stem) if format == "jsonl" else TestSet.from_json(path, name=stem)
                parsed = _from_testset(ts)
    counter.check_rows(up.field, len(parsed.qrels) + len(parsed.queries) + len(parsed.documents))
    return parsed


def read_run_upload(tmp: Path, counter: Counter, up: Uploaded, format: str, name: str) -> Run:
    """Read an uploaded run: ``trec`` (:func:`rankscope.io.read_run`), ``json`` or ``ranked``."""
    if format not in RUN_FORMATS:
        formats = Items(RUN_FORMATS)
        raise UploadError("format", _("must be one of {choices}; got {value!r}", choices=formats, value=format))
    path = spool(up.fh, tmp / "file", counter, up.field, up.filename)
    _nonempty(path, up)
    with named_errors({path: up.filename}, up.field):
        run = _parse_run(path, format, name, up.filename)
    counter.check_rows(up.field, len(run))
    return run


def _nonempty(path: Path, up: Uploaded) -> None:
    if path.stat().st_size == 0:
        raise UploadError(up.field, _("the uploaded file is empty"))


def _parse_run(path: Path, format: str, name: str, filename: str) -> Run:
    if format == "trec":
        from rankscope.io import read_run

        run = read_run(path, format="trec")
        run.name = name
        return run
    from rankscope.io.jsonfmt import load_json, stream_json_run

    streamed = stream_json_run(path)  # a clean object is read as a stream; anything else whole, as before
    shapes = ({"ranked"},) if format == "ranked" else ({"scores"}, {"ranked"})  # as Run.from_dict reads them
    if streamed is not None and set(streamed.shapes) in shapes:
        try:
            return streamed.run(name)
        except RankscopeError:
            pass  # read whole: the error then names the query and document
    obj = load_json(path, filename)
    if not isinstance(obj, dict) or not obj:
        raise ParseError(_("expected a non-empty object {scored} or {ranked}", scored="{query: {doc: score}}",
                           ranked="{query: [doc, ...]}"),
                         source=filename)
    if format == "ranked" and any(not isinstance(v, list) for v in obj.values()):
        raise ParseError(_("ranked format: every query must map to a list of doc ids"), source=filename)
    try:
        return Run.from_dict(obj, name)
    except (TypeError, AttributeError) as exc:
        raise ParseError(_("cannot read the run: {reason}", reason=exc), source=filename) from None
