"""Query and document texts for the judge and the question generator: ``{id: text}`` from a file.

Accepted (by name and content):

* a BEIR JSONL file (``.jsonl`` or ``.jsonl.gz``), one ``{"_id", "text", "title"}`` object a
  line; a document's text is ``title + " " + text`` (as BEIR and
  :meth:`~rankscope.data.testset.TestSet.from_beir` read it);
* a BEIR folder: its ``queries.jsonl`` or ``corpus.jsonl`` (every query, not only one split's);
* a rankscope test set (``.json``, or ``.jsonl`` whose records have no ``_id``): its queries,
  or its corpus;
* a two-column TSV ``id<TAB>text`` without header (MS MARCO ``collection.tsv``, TREC topics).

A malformed line raises :class:`~rankscope.errors.ParseError` with file and line; an
id given twice too.

>>> import os, tempfile
>>> p = os.path.join(tempfile.mkdtemp(), "corpus.jsonl")
>>> _ = open(p, "w").write('{"_id": "d1", "title": "BM25", "text": "a ranking function"}\\n')
>>> read_texts(p, "corpus")
{'d1': 'BM25 a ranking function'}
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Literal

from rankscope.errors import ParseError, RankscopeError
from rankscope.i18n import _

__all__ = ["read_texts"]

Kind = Literal["queries", "corpus"]


def _open(path: Path) -> IO[str]:
    if path.suffix == ".gz":  # every gzip layer, counted against the decompression limit (rankscope.io._source)
        import io

        from rankscope.io._source import open_inflated

        with open(path, "rb") as raw:
            if raw.read(2) != b"\x1f\x8b":
                raise gzip.BadGzipFile(f"Not a gzipped file ({path.name})")
        return io.TextIOWrapper(open_inflated(path), encoding="utf-8", newline="\n")
    return open(path, encoding="utf-8", newline="\n")


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        with _open(path) as fh:
            for line_no, line in enumerate(fh, start=1):
                if line.strip():
                    yield line_no, line
    except UnicodeDecodeError as exc:
        raise ParseError(_("not UTF-8 text ({reason})", reason=exc.reason), source=str(path)) from None
    except (gzip.BadGzipFile, EOFError) as exc:
        raise ParseError(_("not a gzip file ({reason})", reason=str(exc)), source=str(path)) from None


def _first_record(path: Path) -> Any:
    for line_no, line in _lines(path):
        try:
            return json.loads(line)
        except json.JSONDecodeError as exc:
            raise ParseError(_("invalid JSON: {reason}", reason=exc.msg), source=str(path), line=line_no) from None
    raise RankscopeError(_("{path}: the file is empty", path=str(path)))


def _add(out: dict[str, str], key: str, text: str, path: Path, line: int | None) -> None:
    if key in out:
        raise ParseError(_("id {id!r} occurs twice", id=key), source=str(path), line=line)
    out[key] = text


def _beir_jsonl(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line_no, line in _lines(path):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ParseError(_("invalid JSON: {reason}", reason=exc.msg), source=str(path), line=line_no) from None
        if not isinstance(obj, dict) or "_id" not in obj:
            raise ParseError(_("expected an object with an '_id'"), source=str(path), line=line_no)
        title, text = str(obj.get("title") or "").strip(), str(obj.get("text") or "")
        _add(out, str(obj["_id"]), f"{title} {text}" if title and text else (title or text), path, line_no)
    return out


def _tsv(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line_no, line in _lines(path):
        key, sep, text = line.rstrip("\r\n").partition("\t")
        if not sep:
            raise ParseError(_("expected 'id<TAB>text'"), source=str(path), line=line_no)
        _add(out, key.strip(), text, path, line_no)
    return out


def _testset(path: Path, kind: Kind) -> dict[str, str]:
    from rankscope.data.testset import TestSet

    ts = TestSet.from_file(path)
    if kind == "queries":
        return {q.id: q.text for q in ts.queries}
    if ts.corpus is None:
        raise RankscopeError(_("{path}: this test set has no corpus; give the documents with --corpus (a BEIR "
                               "corpus.jsonl or a test set with a 'corpus')", path=str(path)))
    return dict(ts.corpus)


def read_texts(path: str | Path, kind: Kind) -> dict[str, str]:
    """``{id: text}`` of the queries or the documents in ``path`` (see the module docstring)."""
    p = Path(path)
    if p.is_dir():
        name = "queries.jsonl" if kind == "queries" else "corpus.jsonl"
        inner = p / name
        if not inner.exists() and (p / (name + ".gz")).exists():
            inner = p / (name + ".gz")
        if not inner.exists():
            raise FileNotFoundError(2, f"no {name} in the BEIR folder", str(inner))
        return _beir_jsonl(inner)
    if not p.exists():
        raise FileNotFoundError(2, "no such file", str(p))
    suffixes = [s.lower() for s in p.suffixes]
    if suffixes[-1:] == [".gz"]:
        suffixes = suffixes[:-1]
    last = suffixes[-1] if suffixes else ""
    if last in (".tsv", ".txt"):
        return _tsv(p)
    if last in (".jsonl", ".ndjson"):
        first = _first_record(p)
        if isinstance(first, dict) and "_id" in first:
            return _beir_jsonl(p)
        if p.suffix == ".gz":
            raise ParseError(_("a gzipped file must be BEIR JSONL (objects with '_id')"), source=str(p), line=1)
    return _testset(p, kind)
