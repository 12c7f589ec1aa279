"""Format detection and the public readers / writers: :func:`read_qrels`, :func:`read_run`, ``write_*``.

Formats: ``trec``, ``json``, ``jsonl``, ``csv``, ``tsv``, ``parquet``, ``arrow``
(IPC / Feather) and ``beir`` (qrels only).  Without ``format=``, the format
comes from the file name (``.gz`` ignored): ``.trec .run .qrels`` -> trec,
``.json``, ``.jsonl``/``.ndjson``, ``.csv``, ``.tsv``, ``.parquet``/``.pq``,
``.arrow``/``.feather``/``.ipc``; a folder is a BEIR dataset.  Any other name is
recognised by its content: Parquet and Arrow magic bytes, ``{``/``[`` for JSON
(one object per line: JSON Lines), a header line naming known columns for
CSV/TSV, else TREC.
"""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rankscope.data import Qrels, Run
from rankscope.errors import InvalidParameterError, Items, ParseError
from rankscope.i18n import _, pgettext
from rankscope.io import jsonfmt, tabular, trec
from rankscope.io._source import GZIP_MAGIC, open_inflated
from rankscope.io.tables import DOC, GRADE, QUERY, RANK, SCORE

__all__ = ["FORMATS", "QRELS_FORMATS", "RUN_FORMATS", "detect_format", "read_qrels", "read_run",
           "write_qrels", "write_run"]

_QRELS_READERS: dict[str, Callable[..., Qrels]] = {
    "trec": trec.read_trec_qrels,
    "json": jsonfmt.read_json_qrels,
    "jsonl": jsonfmt.read_jsonl_qrels,
    "csv": tabular.read_csv_qrels,
    "tsv": lambda path, **kw: tabular.read_csv_qrels(path, delimiter=kw.pop("delimiter", "\t"), **kw),
    "parquet": tabular.read_parquet_qrels,
    "arrow": tabular.read_arrow_qrels,
    "beir": tabular.read_beir_qrels,
}
_RUN_READERS: dict[str, Callable[..., Run]] = {
    "trec": trec.read_trec_run,
    "json": jsonfmt.read_json_run,
    "jsonl": jsonfmt.read_jsonl_run,
    "csv": tabular.read_csv_run,
    "tsv": lambda path, **kw: tabular.read_csv_run(path, delimiter=kw.pop("delimiter", "\t"), **kw),
    "parquet": tabular.read_parquet_run,
    "arrow": tabular.read_arrow_run,
}
#: the options each reader takes (besides the path)
_OPTIONS: dict[str, dict[str, set[str]]] = {
    "qrels": {"tsv": {"header"}, "csv": {"delimiter", "header"}, "beir": {"split"}, "trec": {"fast"}},
    "run": {"tsv": {"header", "name", "duplicates", "columns"},
            "csv": {"delimiter", "header", "name", "duplicates", "columns"},
            "trec": {"fast", "name", "duplicates", "columns"}},
}
_WRITERS: dict[str, Callable[..., None]] = {
    "json": jsonfmt.write_json,
    "jsonl": jsonfmt.write_jsonl,
    "csv": tabular.write_csv,
    "tsv": lambda obj, path: tabular.write_csv(obj, path, delimiter="\t"),
    "parquet": tabular.write_parquet,
    "arrow": tabular.write_arrow,
}

QRELS_FORMATS = tuple(_QRELS_READERS)
RUN_FORMATS = tuple(_RUN_READERS)
FORMATS = QRELS_FORMATS

_SUFFIXES = {
    ".trec": "trec", ".run": "trec", ".qrels": "trec", ".qrel": "trec",
    ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl",
    ".csv": "csv", ".tsv": "tsv",
    ".parquet": "parquet", ".pq": "parquet",
    ".arrow": "arrow", ".feather": "arrow", ".ipc": "arrow",
}  # fmt: skip
_HEADER_WORDS = {c.lower() for c in QUERY + DOC + GRADE + SCORE + RANK}


#: the kinds of file, said in an error
_KIND = {"qrels": pgettext("kind of file", "qrels"), "run": pgettext("kind of file", "run")}


def detect_format(path: str | Path) -> str:
    """The format of ``path``: from its name, else from its first bytes (see module doc).

    >>> detect_format("runs/bm25.jsonl.gz"), detect_format("qrels/test.tsv")
    ('jsonl', 'tsv')
    """
    p = Path(path)
    if p.is_dir():
        return "beir"
    name = p.name.lower().removesuffix(".gz")
    suffix = Path(name).suffix
    if suffix in _SUFFIXES:
        return _SUFFIXES[suffix]
    return _sniff(_head(p))


def _head(p: Path, size: int = 1 << 16) -> bytes:
    try:
        with open(p, "rb") as fh:
            head = fh.read(size)
        if head[:2] == GZIP_MAGIC:
            with open_inflated(p) as fh:
                head = fh.read(size)
    except FileNotFoundError:
        raise ParseError(_("no such file"), source=str(p)) from None
    except (OSError, EOFError) as exc:
        raise ParseError(_("cannot read file ({reason})", reason=str(exc)), source=str(p)) from None
    return head


def _sniff(head: bytes) -> str:
    if head[:4] == b"PAR1":
        return "parquet"
    if head[:6] == b"ARROW1" or head[:4] == b"\xff\xff\xff\xff":
        return "arrow"
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if text[:1] == b"[":
        return "json"
    if text[:1] == b"{":
        try:
            first = json.loads(text.split(b"\n", 1)[0])
        except ValueError:
            return "json"
        # a record has scalar values; a {query: {doc: value}} document has objects or lists
        nested = isinstance(first, dict) and any(isinstance(v, (dict, list)) for v in first.values())
        return "json" if nested else "jsonl"
    first_line = text.split(b"\n", 1)[0].decode("utf-8", "replace").rstrip("\r")
    for delim, fmt in (("\t", "tsv"), (",", "csv")):
        if delim in first_line and any(c.strip().strip('"').lower() in _HEADER_WORDS for c in first_line.split(delim)):
            return fmt
    if "," in first_line and len(first_line.split(",")) == 3 and len(first_line.split()) < 4:
        return "csv"
    if "\t" in first_line and len(first_line.split("\t")) == 3:  # MS MARCO's qid<TAB>docid<TAB>rank, or a score
        return "tsv"
    return "trec"


def _first_data_line(p: Path) -> bytes:
    """The first data line of a text file (blank and ``#`` lines skipped), from its first 64 KiB."""
    for raw in _head(p).lstrip(b"\xef\xbb\xbf").split(b"\n")[:1000]:
        if raw.strip() and not raw.lstrip().startswith(b"#"):
            return raw
    return b""


def _check(kind: str, fmt: str | None, path: str | Path, options: dict[str, Any]) -> str:
    readers = _QRELS_READERS if kind == "qrels" else _RUN_READERS
    if fmt is None:
        fmt = detect_format(path)
        if fmt not in readers:
            raise ParseError(_("is a folder; a run must be a file"), source=str(path))
    fmt = fmt.lower()
    if fmt not in readers:
        choices = Items(tuple(readers))
        raise InvalidParameterError(_("unknown {kind} format {format}; choose one of: {choices}",
                                      kind=_KIND[kind], format=repr(fmt), choices=choices))
    allowed = _OPTIONS[kind].get(fmt, {"name", "duplicates"} if kind == "run" else set())
    unknown = sorted(set(options) - allowed)
    if unknown:
        names, ok = Items(tuple(unknown)), Items(tuple(sorted(allowed))) if allowed else _("none")
        raise InvalidParameterError(_("option(s) {options} not supported for {format} {kind}; supported: "
                                      "{supported}", options=names, format=fmt, kind=_KIND[kind],
                                      supported=ok))
    return fmt


def read_qrels(path: str | Path, format: str | None = None, **options: Any) -> Qrels:
    """Read qrels from ``path`` (any format of :data:`QRELS_FORMATS`; auto-detected when ``format`` is None).

    Options: ``split=`` (beir), ``delimiter=``/``header=`` (csv/tsv), ``fast=`` (trec).
    """
    fmt = _check("qrels", format, path, options)
    return _QRELS_READERS[fmt](path, **options)


def read_run(path: str | Path, format: str | None = None, **options: Any) -> Run:
    """Read a run from ``path`` (any format of :data:`RUN_FORMATS`; auto-detected when ``format`` is None).

    Options: ``name=`` (default: the TREC tag, else the file name), ``duplicates="error"|"keep_best"``,
    ``delimiter=``/``header=`` (csv/tsv), ``fast=`` (trec), ``columns=`` (a header-less file's column
    names, e.g. ``"qid,docid,rank"``).  A header-less 3-column file (tabs, commas or spaces) is
    ``qid, docid, value``: its third column is read as a rank when it holds 1..n (or 0..n-1)
    increasing down the file in every query (the run then keeps a notice, ``run.notices``), as a
    score when it decreases or is not integer, and any other order asks for ``columns=``.
    TREC 6-column runs are read as trec_eval reads them (the score column ranks).
    """
    fmt = _check("run", format, path, options)
    if fmt == "trec" and not Path(path).is_dir():
        first = _first_data_line(Path(path))
        if len(first.split()) == 3:  # not a TREC run: a header-less qid, docid, rank|score file
            options.pop("fast", None)
            delimiter = "\t" if b"\t" in first else " "
            return tabular.read_csv_run(path, delimiter=delimiter, header=False, **options)
        if options.pop("columns", None) is not None:
            raise InvalidParameterError(_("{path}: columns= is for 3-column runs (qid, docid, rank|score); a "
                                          "6-column TREC run is read as trec_eval reads it (score column)",
                                          path=str(path)))
    return _RUN_READERS[fmt](path, **options)


def _writer_format(path: str | Path, format: str | None) -> str:
    if format is None:
        name = Path(path).name.lower().removesuffix(".gz")
        format = _SUFFIXES.get(Path(name).suffix, "trec")
    fmt = format.lower()
    choices = ("trec", *_WRITERS)
    if fmt not in choices:
        listed = Items(choices)
        raise InvalidParameterError(_("unknown output format {format!r}; choose one of: {choices}", format=fmt,
                                      choices=listed))
    return fmt


def write_qrels(qrels: Qrels, path: str | Path, format: str | None = None) -> None:
    """Write ``qrels`` to ``path`` as trec, json, jsonl, csv, tsv, parquet or arrow (default: from the suffix).

    A path ending in ``.gz`` is gzip-compressed.
    """
    fmt = _writer_format(path, format)
    _gzipped(path, lambda p: trec.write_trec_qrels(qrels, p) if fmt == "trec" else _WRITERS[fmt](qrels, p))


def write_run(run: Run, path: str | Path, format: str | None = None, *, tag: str | None = None) -> None:
    """Write ``run`` to ``path`` as trec (``tag`` = run name), json, jsonl, csv, tsv, parquet or arrow.

    A path ending in ``.gz`` is gzip-compressed.
    """
    fmt = _writer_format(path, format)
    _gzipped(path, lambda p: trec.write_trec_run(run, p, tag) if fmt == "trec" else _WRITERS[fmt](run, p))


def _gzipped(path: str | Path, write: Callable[[Path], None]) -> None:
    p = Path(path)
    if p.suffix.lower() != ".gz":
        write(p)
        return
    tmp = p.with_name(p.name + ".tmp")
    try:
        write(tmp)
        with open(tmp, "rb") as src, gzip.open(p, "wb") as dst:
            shutil.copyfileobj(src, dst)
    finally:
        tmp.unlink(missing_ok=True)

