"""Units of text length: characters, or tokens of a named tokenizer (with their character offsets).

Span judgments and chunkings are stored in characters.  To measure in tokens
(what a reader model pays for), every document is tokenised once and a character
range ``[start, end)`` becomes the range of tokens that overlap it.  A tokenizer is
named by a string:

``"chars"``
    characters (no tokenisation; the default everywhere);
``"words"``
    each CJK ideograph is a token, each run of letters/digits is a token, each other
    non-space character is a token (a language-neutral word count, no dependency);
``"jieba"``
    jieba's word segmentation (Chinese; extra ``rankscope[bm25]``), whitespace dropped;
``"hf:NAME"``
    a Hugging Face tokenizer (a local folder or a cached model name; ``transformers``),
    e.g. ``"hf:intfloat/multilingual-e5-small"``: its sub-word tokens, special tokens left out;
``"tiktoken:ENCODING"``
    an OpenAI encoding such as ``cl100k_base`` (``tiktoken``; the encoding file must be cached).

>>> token_offsets("RAG 检索 works!", "words")
([0, 4, 5, 7, 12], [3, 5, 6, 12, 13])
>>> idx = TokenIndex({"d": "RAG 检索 works!"}, "words")
>>> idx.convert(np.array([0]), np.array([2]), np.array([9]))
(array([0]), array([4]))
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import _

__all__ = ["UNIT_NAMES", "check_unit", "token_offsets", "TokenIndex"]

UNIT_NAMES = ("chars", "words", "jieba", "hf:NAME", "tiktoken:ENCODING")
_WORDS = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\W_]+|[^\s\w]|_", re.UNICODE)


def check_unit(unit: str) -> str:
    """``unit`` if it names a unit (see the module doc), else an error listing the names.

    >>> check_unit("hf:bert-base-uncased")
    'hf:bert-base-uncased'
    """
    if not isinstance(unit, str) or not (unit in ("chars", "words", "jieba") or
                                         (unit.startswith(("hf:", "tiktoken:")) and len(unit.split(":", 1)[1]))):
        names = Items(UNIT_NAMES)
        raise InvalidParameterError(_("unknown unit {unit!r}; use one of {names}", unit=unit, names=names))
    return unit


@functools.cache
def _tokenizer(unit: str) -> Callable[[str], tuple[list[int], list[int]]]:
    if unit == "words":
        def words(text: str) -> tuple[list[int], list[int]]:
            found = [(m.start(), m.end()) for m in _WORDS.finditer(text)]
            return [s for s, __ in found], [e for __, e in found]
        return words
    if unit == "jieba":
        try:
            import jieba
        except ImportError:
            raise InvalidParameterError(_("unit {unit!r} needs {package}: {install}", unit="jieba", package="jieba",
                                          install="pip install 'rankscope[bm25]'")) from None
        jieba.setLogLevel(60)

        def seg(text: str) -> tuple[list[int], list[int]]:
            found = [(s, e) for w, s, e in jieba.tokenize(text) if w.strip()]
            return [s for s, __ in found], [e for __, e in found]
        return seg
    if unit.startswith("hf:"):
        try:
            from transformers import AutoTokenizer
        except ImportError:
            raise InvalidParameterError(_("unit {unit!r} needs {package}: {install}", unit=unit,
                                          package="transformers", install="pip install transformers")) from None
        try:
            tok = AutoTokenizer.from_pretrained(unit[3:])
        except (OSError, ValueError) as exc:
            raise InvalidParameterError(_("cannot load tokenizer {name!r} ({reason})", name=unit[3:],
                                          reason=str(exc))) from None

        def hf(text: str) -> tuple[list[int], list[int]]:
            enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
            found = [(s, e) for s, e in enc["offset_mapping"] if e > s]
            return [s for s, __ in found], [e for __, e in found]
        return hf
    if unit.startswith("tiktoken:"):
        try:
            import tiktoken
        except ImportError:
            raise InvalidParameterError(_("unit {unit!r} needs {package}: {install}", unit=unit, package="tiktoken",
                                          install="pip install tiktoken")) from None
        name = unit.split(":", 1)[1]
        try:
            enc = tiktoken.get_encoding(name)
        except Exception as exc:  # tiktoken raises several types (missing file, network)
            raise InvalidParameterError(_("cannot load tiktoken encoding {name!r} ({reason})", name=name,
                                          reason=str(exc))) from None

        def tk(text: str) -> tuple[list[int], list[int]]:
            ids = enc.encode(text, disallowed_special=())
            starts: list[int] = []
            ends: list[int] = []
            data = text.encode("utf-8")
            pos = 0
            char = 0
            for piece in enc.decode_tokens_bytes(ids):  # byte pieces -> character offsets
                nxt = pos + len(piece)
                c_end = len(data[:nxt].decode("utf-8", errors="ignore"))
                if c_end > char:
                    starts.append(char)
                    ends.append(c_end)
                    char = c_end
                pos = nxt
            return starts, ends
        return tk
    check_unit(unit)
    raise AssertionError("unreachable")  # pragma: no cover


def token_offsets(text: str, unit: str) -> tuple[list[int], list[int]]:
    """Character ``(starts, ends)`` of the tokens of ``text`` (``unit`` not ``"chars"``)."""
    return _tokenizer(check_unit(unit))(text)


class TokenIndex:
    """The tokens of every document of a corpus, to turn character ranges into token ranges.

    Documents are tokenised once, on first need.  A character range ``[start, end)``
    becomes the tokens that overlap it: ``[first token ending after start, first token
    starting at or after end)`` — exact when ranges fall on token boundaries (chunks of a
    token splitter), and for any range never loses a token it touches.
    """

    def __init__(self, corpus: Mapping[str, str], unit: str, doc_ids: Sequence[str] | None = None) -> None:
        self.unit = check_unit(unit)
        self.corpus = corpus
        self.doc_ids = list(doc_ids) if doc_ids is not None else list(corpus)
        missing = [d for d in self.doc_ids if d not in corpus]
        if missing:
            raise InvalidParameterError(_("token units need the text of every document; {n} missing, e.g. {id!r}",
                                          n=len(missing), id=missing[0]))
        starts: list[np.ndarray] = []
        ends: list[np.ndarray] = []
        counts = np.zeros(len(self.doc_ids), dtype=np.int64)
        width = 1 + max((len(corpus[d]) for d in self.doc_ids), default=0)
        for i, d in enumerate(self.doc_ids):  # one tokenizer call per document (done once)
            s, e = token_offsets(corpus[d], unit)
            counts[i] = len(s)
            starts.append(np.asarray(s, dtype=np.int64) + i * width)
            ends.append(np.asarray(e, dtype=np.int64) + i * width)
        self.width = width
        self.first = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.starts = np.concatenate(starts) if starts else np.empty(0, dtype=np.int64)
        self.ends = np.concatenate(ends) if ends else np.empty(0, dtype=np.int64)

    def convert(self, doc: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Token ``(start, end)`` within the document of character ranges (``doc`` indexes :attr:`doc_ids`)."""
        doc = np.asarray(doc, dtype=np.int64)
        base = doc * self.width
        t0 = np.searchsorted(self.ends, base + np.asarray(start), side="right")
        t1 = np.searchsorted(self.starts, base + np.asarray(end), side="left")
        return t0 - self.first[doc], np.maximum(t1, t0) - self.first[doc]

