"""Reading the raw bytes of an input file (``.gz`` aware) and splitting text into lines.

Every reader goes through :func:`read_bytes` (a whole file) or :func:`open_inflated` (a stream)
so that a missing, unreadable or compressed file behaves the same in every format, and through
:func:`text_lines` so that line numbers in error messages mean the same thing everywhere: lines
are separated by ``\\n`` only, and a trailing ``\\r`` (Windows line ending) is whitespace.

Compressed data is inflated in bounded steps, layer after layer (a gzip file inside a gzip file
is read too), and every byte that any layer produces is counted against one limit: the
decompression limit (:func:`decompression_limit`, or the ``RANKSCOPE_MAX_DECOMPRESSED_MB``
environment variable; 4 GiB by default; 0 = no limit).  Past it the reader stops with a
:class:`~rankscope.errors.ParseError` naming the file and the limit, having held at most the limit
in memory: a few kilobytes of nested gzip ("a bomb inside a bomb") cannot make a program that reads
them use gigabytes.  At most :data:`MAX_LAYERS` layers are unpacked.
"""

from __future__ import annotations

import io
import os
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import BinaryIO

from rankscope.errors import ParseError
from rankscope.i18n import _

__all__ = ["read_bytes", "decode", "text_lines", "GZIP_MAGIC", "UTF8_BOM", "MAX_LAYERS", "DEFAULT_MAX_DECOMPRESSED",
           "decompression_limit", "max_decompressed", "inflate", "open_inflated", "Budget"]

GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
MAX_LAYERS = 3
"""Gzip layers unpacked at most (``x.gz`` is one layer, a gzip of ``x.gz`` two)."""
DEFAULT_MAX_DECOMPRESSED = 4 << 30
"""Decompressed bytes a reader accepts when neither :func:`decompression_limit` nor the environment says."""
ENV_LIMIT = "RANKSCOPE_MAX_DECOMPRESSED_MB"
CHUNK = 1 << 20  # the most bytes one inflation step produces
READ = 1 << 16  # compressed bytes fed at once

_UNSET = -1
_limit: ContextVar[int] = ContextVar("rankscope_max_decompressed", default=_UNSET)


def max_decompressed() -> int | None:
    """The decompression limit in force, in bytes (``None``: no limit).

    >>> with decompression_limit(1000):
    ...     max_decompressed()
    1000
    """
    value = _limit.get()
    if value != _UNSET:
        return value or None
    env = os.environ.get(ENV_LIMIT, "").strip()
    if env:
        try:
            mb = float(env)
        except ValueError:
            from rankscope.errors import InvalidParameterError

            raise InvalidParameterError(_("{name} must be a number of megabytes, got {value!r}", name=ENV_LIMIT,
                                          value=env)) from None
        return int(mb * (1 << 20)) if mb > 0 else None
    return DEFAULT_MAX_DECOMPRESSED


@contextmanager
def decompression_limit(max_bytes: int | None) -> Iterator[None]:
    """Read compressed files under ``max_bytes`` decompressed bytes (all layers together; ``None``: no limit) in
    this block — in this thread or task only, so that a server can give each request its own limit."""
    token = _limit.set(0 if max_bytes is None else max(int(max_bytes), 1))
    try:
        yield
    finally:
        _limit.reset(token)


class Budget:
    """Decompressed bytes of one file, counted against the limit in force (:func:`max_decompressed`)."""

    def __init__(self, source: str, limit: int | None = None) -> None:
        self.source = source
        self.limit = max_decompressed() if limit is None else limit
        self.used = 0

    def __call__(self, n: int) -> None:
        self.used += n
        if self.limit is not None and self.used > self.limit:
            raise ParseError(_("more than {limit} bytes once decompressed (the decompression limit; raise it with "
                               "{env})", limit=self.limit, env=ENV_LIMIT),
                             source=self.source)


def _peek(chunks: Iterable[bytes], n: int) -> tuple[bytes, Iterator[bytes]]:
    """The first ``n`` bytes of a stream of chunks (fewer at its end) and the whole stream again."""
    it = iter(chunks)
    head = b""
    pending: list[bytes] = []
    while len(head) < n:
        more = next(it, None)
        if more is None:
            break
        if more:
            pending.append(more)
            head += more[: n - len(head)]

    def again() -> Iterator[bytes]:
        yield from pending
        yield from it

    return head, again()


def _inflate_one(chunks: Iterable[bytes], source: str, count: Callable[[int], None]) -> Iterator[bytes]:
    """Gunzip one layer (several members allowed) in pieces of at most :data:`CHUNK` bytes, counting each piece
    before it is kept."""
    d = zlib.decompressobj(31)
    fed = False
    try:
        for chunk in chunks:
            data = chunk
            while data:
                fed = True
                piece = d.decompress(data, CHUNK)
                if piece:
                    count(len(piece))
                    yield piece
                if d.eof:
                    data = d.unused_data.lstrip(b"\0")  # the next member (or the zero padding some tools add)
                    d = zlib.decompressobj(31)
                    fed = False
                else:
                    data = d.unconsumed_tail
        tail = d.flush()
        if tail:
            count(len(tail))
            yield tail
    except zlib.error as exc:
        raise ParseError(_("corrupt gzip data ({reason})", reason=exc), source=source) from None
    if fed and not d.eof:
        raise ParseError(_("truncated gzip data"), source=source)


def inflate(chunks: Iterable[bytes], source: str, count: Callable[[int], None] | None = None,
            *, layers: int = MAX_LAYERS) -> tuple[Iterator[bytes], int]:
    """``(the bytes of chunks with every gzip layer removed, the number of layers)``, in bounded pieces.

    Every piece that any layer produces goes through ``count`` (default: a :class:`Budget` of the limit in force)
    before it is kept, so that the limit holds across layers.  More than ``layers`` layers is an error.

    >>> import gzip
    >>> data, n = inflate([gzip.compress(gzip.compress(b"q1 0 d1 1\\n"))], "x")
    >>> b"".join(data), n
    (b'q1 0 d1 1\\n', 2)
    >>> with decompression_limit(5):
    ...     b"".join(inflate([gzip.compress(b"0123456789")], "x.gz")[0])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rankscope.errors.ParseError: x.gz: more than 5 bytes once decompressed (the decompression limit; ...
    """
    counter = count or Budget(source)
    head, stream = _peek(chunks, 2)
    depth = 0
    while head == GZIP_MAGIC:
        if depth == layers:
            raise ParseError(_("gzip data compressed more than {n} times", n=layers), source=source)
        depth += 1
        head, stream = _peek(_inflate_one(stream, source, counter), 2)
    return stream, depth


def _read_chunks(fh: BinaryIO) -> Iterator[bytes]:
    while chunk := fh.read(READ):
        yield chunk


class _Inflated(io.RawIOBase):
    """A read-only binary stream of the pieces of :func:`inflate`."""

    def __init__(self, pieces: Iterator[bytes], raw: BinaryIO) -> None:
        self._pieces = pieces
        self._raw = raw
        self._buf = b""

    def readable(self) -> bool:
        return True

    def readinto(self, b: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._buf:
            nxt = next(self._pieces, None)
            if nxt is None:
                return 0
            self._buf = nxt
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


def _open_raw(p: Path) -> BinaryIO:
    try:
        if p.is_dir():
            raise ParseError(_("is a directory, expected a file"), source=str(p))
        return open(p, "rb")
    except FileNotFoundError:
        raise ParseError(_("no such file"), source=str(p)) from None
    except OSError as exc:
        reason = str(exc.strerror or exc)
        raise ParseError(_("cannot read file ({reason})", reason=reason), source=str(p)) from None


def open_inflated(path: str | Path, raw: BinaryIO | None = None) -> BinaryIO:
    """A binary stream of the file's bytes with every gzip layer removed, counted against the decompression limit
    (:func:`inflate`); a plain file is returned as it is (``raw``: the file already opened).

    >>> import gzip, os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "x.gz")
    >>> _ = open(p, "wb").write(gzip.compress(b"a\\nb\\n"))
    >>> with open_inflated(p) as fh:
    ...     fh.read()
    b'a\\nb\\n'
    """
    p = Path(path)
    fh = raw if raw is not None else _open_raw(p)
    try:
        head = fh.read(2)
        fh.seek(0)
    except OSError:
        return fh
    if head != GZIP_MAGIC:
        return fh
    pieces, __ = inflate(_read_chunks(fh), str(p))
    return io.BufferedReader(_Inflated(pieces, fh), CHUNK)  # type: ignore[return-value]


def read_bytes(path: str | Path) -> bytes:
    """Return the content of ``path``, gunzipped (every layer) when it starts with the gzip magic bytes, without a
    UTF-8 BOM.

    Raises :class:`~rankscope.errors.ParseError` naming the file when it cannot be read, or when it holds more
    than the decompression limit (:func:`decompression_limit`) once decompressed.

    >>> import gzip, os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "x.gz")
    >>> with gzip.open(p, "wb") as fh:
    ...     _ = fh.write(b"q1 0 d1 1\\n")
    >>> read_bytes(p)
    b'q1 0 d1 1\\n'
    """
    p = Path(path)
    with _open_raw(p) as fh:
        try:
            head = fh.read(2)
            if head != GZIP_MAGIC:
                data = head + fh.read()
            else:
                fh.seek(0)
                out = io.BytesIO()
                pieces, __ = inflate(_read_chunks(fh), str(p))
                for piece in pieces:
                    out.write(piece)
                data = out.getvalue()  # the buffer itself, not a copy
                del out
        except OSError as exc:
            reason = str(exc.strerror or exc)
            raise ParseError(_("cannot read file ({reason})", reason=reason), source=str(p)) from None
    return data[3:] if data[:3] == UTF8_BOM else data


def decode(data: bytes, source: str) -> str:
    """Decode UTF-8; a decoding error names the line of the bad byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ParseError(_("not UTF-8 text ({reason} at byte {byte})", reason=exc.reason, byte=exc.start),
                         source=source,
                         line=line) from None
    return text


def text_lines(text: str) -> list[str]:
    """Split ``text`` into lines on ``\\n`` (a final newline does not start a new line).

    >>> text_lines("a\\r\\nb\\n")
    ['a\\r', 'b']
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines
