"""Uploaded files on their way to the readers: spooled, decompressed and counted under limits.

A request body is limited by :class:`~rankscope.service.guards.BodyLimit`; what it
expands to is limited here, *while* it is written to disk:

* gzip data (recognised by its magic bytes, whatever the file name) is inflated in
  bounded steps, layer after layer (:func:`rankscope.io._source.inflate`: a gzip inside a gzip is
  inflated too, at most three layers), and every byte that any layer produces is counted, so a
  2 KB bomb inside a bomb never becomes more than the limit in memory or on disk;
* of a BEIR zip only the three files the reader needs are extracted
  (``queries.jsonl``, ``corpus.jsonl``, ``qrels/<split>.tsv``, each possibly ``.gz``),
  through the same count, never ``extractall``;
* every decompressed byte and every line of one upload (all its files together) is
  counted; past ``max_data_bytes`` or ``max_rows`` the upload stops with
  :class:`LimitExceeded` (413, naming the field and the limit).

Readers see plain files under neutral names in a private temporary folder;
:func:`display_error` puts the uploaded file's own name back into their messages.

>>> c = Counter(max_bytes=10, max_rows=2)
>>> c.add("file", b"a\\nb\\n")
>>> try:
...     c.add("file", b"c\\n")
... except LimitExceeded as exc:
...     print(exc.field, "-", exc)
file - more than 2 rows (the limit of one upload; raise it with `rankscope serve --max-rows`)
"""

from __future__ import annotations

import tempfile
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, BinaryIO

from rankscope.errors import ParseError
from rankscope.i18n import Message, _, say
from rankscope.io._source import inflate

__all__ = ["Counter", "LimitExceeded", "upload_dir", "spool", "extract_beir", "display_error", "Renamed", "CHUNK"]

CHUNK = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"


class LimitExceeded(Exception):
    """An upload holds more than a configured limit (HTTP 413); ``field`` names the form field; the problem is said in
    the page's language as rankscope's errors are."""

    def __init__(self, field: str, problem: Message | str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(str(problem))

    def text(self, lang: str = "en") -> str:
        return str(say(self.problem, lang))


@dataclass
class Counter:
    """Decompressed bytes and rows of one upload, checked as they are added."""

    max_bytes: int
    max_rows: int
    n_bytes: int = 0
    rows: int = 0

    def add(self, field: str, data: bytes) -> None:
        self.add_bytes(field, len(data))
        self.add_rows(field, data)

    def add_bytes(self, field: str, n: int) -> None:
        """Count ``n`` more bytes (of any decompression layer) and refuse the upload past the limit."""
        self.n_bytes += n
        if self.n_bytes > self.max_bytes:
            raise LimitExceeded(field, _("more than {limit} bytes once decompressed (the limit of one upload; "
                                         "raise it with `rankscope serve --max-data-mb`)", limit=self.max_bytes))

    def add_rows(self, field: str, data: bytes) -> None:
        self.rows += data.count(b"\n")
        self.check_rows(field, self.rows)

    def check_rows(self, field: str, rows: int) -> None:
        """Refuse ``rows`` over the limit (also used for records counted after parsing a JSON document)."""
        if rows > self.max_rows:
            raise LimitExceeded(field, _("more than {limit} rows (the limit of one upload; raise it with "
                                         "`rankscope serve --max-rows`)", limit=self.max_rows))


@contextmanager
def upload_dir() -> Iterator[Path]:
    """A private temporary folder, removed with everything in it."""
    with tempfile.TemporaryDirectory(prefix="rankscope-upload-") as tmp:
        yield Path(tmp)


def _chunks(fh: IO[bytes]) -> Iterator[bytes]:
    while chunk := fh.read(CHUNK):
        yield chunk


def _write(chunks: Iterable[bytes], dest: Path, counter: Counter, field: str, source: str) -> None:
    """Write the chunks to ``dest`` with every gzip layer removed; every byte of every layer is counted."""
    stream, layers = inflate(chunks, source, lambda n: counter.add_bytes(field, n))
    with open(dest, "wb") as out:
        for piece in stream:
            if layers:
                counter.add_rows(field, piece)  # its bytes were counted as they were inflated
            else:
                counter.add(field, piece)
            out.write(piece)


def spool(fh: BinaryIO, dest: Path, counter: Counter, field: str, source: str) -> Path:
    """Copy an uploaded file to ``dest``, gunzipped when it is gzip data, counting as it goes."""
    _write(_chunks(fh), dest, counter, field, source)
    return dest


BEIR_FILES = ("queries.jsonl", "corpus.jsonl")


def extract_beir(archive: Path, dest: Path, split: str, counter: Counter, field: str,
                 source: str) -> tuple[Path, str]:
    """Extract the BEIR files of a zip into ``dest``; returns the folder and the archive's prefix.

    The folder holding ``queries.jsonl`` (or ``queries.jsonl.gz``) is the BEIR folder; its
    ``corpus.jsonl`` and ``qrels/<split>.tsv`` (each optionally gzipped) are the only other members read.
    """
    try:
        zf = zipfile.ZipFile(archive)
    except zipfile.BadZipFile:
        raise ParseError(_("not a zip archive (a BEIR upload is a zip of corpus.jsonl, queries.jsonl, qrels/)"),
                         source=source) from None
    with zf:
        members = {i.filename: i for i in zf.infolist() if not i.is_dir()}
        tops = sorted((n for n in members if PurePosixPath(n).name in ("queries.jsonl", "queries.jsonl.gz")),
                      key=lambda n: (n.count("/"), n))
        if not tops:
            raise ParseError(_("the archive holds no queries.jsonl"), source=source)
        parent = str(PurePosixPath(tops[0]).parent)
        prefix = "" if parent == "." else parent + "/"
        (dest / "qrels").mkdir(parents=True, exist_ok=True)
        for rel in (*BEIR_FILES, f"qrels/{split}.tsv"):
            for name in (prefix + rel, prefix + rel + ".gz"):
                info = members.get(name)
                if info is None:
                    continue
                try:
                    with zf.open(info) as fh:
                        _write(_chunks(fh), dest / rel, counter, field, f"{source}/{name}")
                except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
                    raise ParseError(_("cannot read {name} from the archive ({reason})", name=name, reason=exc),
                                     source=source) from None
                break
    return dest, prefix


def display_error(exc: BaseException, names: dict[Path, str], lang: str = "en") -> str:
    """The message of ``exc`` in ``lang`` (a keyed error says itself in it) with each temporary path replaced by
    what the user uploaded.

    >>> display_error(ValueError("/tmp/x/file:2: bad"), {Path("/tmp/x/file"): "run.trec"})
    'run.trec:2: bad'
    """
    said = getattr(exc, "text", None)
    text = said(lang) if callable(said) else str(exc)
    for path, name in sorted(names.items(), key=lambda kv: -len(str(kv[0]))):
        text = text.replace(str(path), name)
    return text


@dataclass(frozen=True)
class Renamed:
    """A reader's error said in the reader's language with the uploaded file names in place of the temporary paths
    (:func:`display_error`): a value of a keyed error that names the upload."""

    error: BaseException
    names: tuple[tuple[Path, str], ...]

    def text(self, lang: str = "en") -> str:
        return display_error(self.error, dict(self.names), lang)

    def __str__(self) -> str:
        return self.text("en")

