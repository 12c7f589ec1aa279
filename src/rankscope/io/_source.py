"""Reading the raw bytes of an input file (``.gz`` aware) and splitting text into lines.

Every reader goes through :func:`read_bytes` so that a missing, unreadable or
compressed file behaves the same in every format, and through :func:`text_lines`
so that line numbers in error messages mean the same thing everywhere: lines
are separated by ``\\n`` only, and a trailing ``\\r`` (Windows line ending) is
whitespace.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from rankscope.errors import ParseError
from rankscope.i18n import _

__all__ = ["read_bytes", "decode", "text_lines", "GZIP_MAGIC"]

GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"


def read_bytes(path: str | Path) -> bytes:
    """Return the content of ``path``, gunzipped when it starts with the gzip magic bytes, without a UTF-8 BOM.

    Raises :class:`~rankscope.errors.ParseError` naming the file when it cannot be read.

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "x.gz")
    >>> with gzip.open(p, "wb") as fh:
    ...     _ = fh.write(b"q1 0 d1 1\\n")
    >>> read_bytes(p)
    b'q1 0 d1 1\\n'
    """
    p = Path(path)
    try:
        if p.is_dir():
            raise ParseError(_("is a directory, expected a file"), source=str(p))
        with open(p, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise ParseError(_("no such file"), source=str(p)) from None
    except OSError as exc:
        reason = str(exc.strerror or exc)
        raise ParseError(_("cannot read file ({reason})", reason=reason), source=str(p)) from None
    if data[:2] == GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise ParseError(_("corrupt gzip data ({reason})", reason=str(exc)), source=str(p)) from None
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
