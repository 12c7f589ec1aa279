"""Text tokenizers for lexical retrieval, in English and Chinese.

Two pipelines, chosen per text or set explicitly:

``"en"``
    lower-case, split on runs of letters/digits (Unicode aware, ``_`` and
    punctuation split words), drop English stop words
    (``stopwords/en.txt``), then Snowball-stem with PyStemmer.
``"zh"``
    segment with jieba (accurate mode, or search mode with ``zh_mode="search"``),
    drop punctuation and whitespace and the Chinese stop words
    (``stopwords/zh.txt``); Latin words inside Chinese text go through the
    English steps (lower-case, stop words, stemming), so ``"BM25"`` and
    ``"Retrieval"`` give the same tokens in both pipelines.
``"auto"`` (default)
    :func:`detect_language` decides per text: a text is Chinese when CJK
    ideographs make up at least ``0.3`` of its "words", counting each ideograph
    as one word and each run of other letters as one word (an ideograph carries
    about as much as a Latin word).  Texts without any ideograph are English
    without further work.

Stemming and stop-word removal can be switched off.  jieba and PyStemmer are
imported on first use (extra ``rankscope[bm25]``).

>>> tok = Tokenizer("en")
>>> tok("The runners were running quickly!")
['runner', 'run', 'quick']
>>> detect_language("雅芳河的发源地是哪里？"), detect_language("Where does the Avon rise?")
('zh', 'en')
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from importlib import resources
from typing import Any, Literal

from rankscope.errors import InvalidParameterError, RankscopeError
from rankscope.i18n import _

__all__ = ["Tokenizer", "detect_language", "load_stopwords", "make_tokenizer"]


# CJK Unified Ideographs, Extension A, Compatibility Ideographs, Extension B
_CJK = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df]")
_WORD = re.compile(r"[^\W_]+")
_LETTERS = re.compile(r"[^\W\d_]+")
CJK_THRESHOLD = 0.3


def detect_language(text: str, threshold: float = CJK_THRESHOLD) -> Literal["en", "zh"]:
    """Return ``"zh"`` if CJK ideographs are at least ``threshold`` of the text's words, else ``"en"``.

    Words are counted as: each CJK ideograph is one, each run of other letters
    (digits excluded) is one.  A text with no ideograph is ``"en"``; a text with
    ideographs and no other letters is ``"zh"``.

    >>> detect_language("什么是Transformer")
    'zh'
    >>> detect_language("a paper by 王 on boundary layers in supersonic flow")
    'en'
    """
    n_cjk = len(_CJK.findall(text))
    if n_cjk == 0:
        return "en"
    n_other = len(_LETTERS.findall(_CJK.sub(" ", text)))
    return "zh" if n_cjk / (n_cjk + n_other) >= threshold else "en"


@functools.cache
def load_stopwords(language: str) -> frozenset[str]:
    """The stop words shipped for ``language`` (``"en"`` or ``"zh"``), from ``stopwords/<language>.txt``.

    >>> "the" in load_stopwords("en"), "not" in load_stopwords("en")
    (True, False)
    """
    if language not in ("en", "zh"):
        raise InvalidParameterError(_("stop words exist for 'en' and 'zh', got {value!r}", value=language))
    text = resources.files("rankscope.retrieval").joinpath(f"stopwords/{language}.txt").read_text("utf-8")
    return frozenset(w.strip() for w in text.splitlines() if w.strip() and not w.startswith("#"))


@functools.cache
def _jieba() -> Any:
    try:
        import jieba
    except ImportError:  # pragma: no cover - depends on the environment
        raise RankscopeError(_("Chinese tokenization needs jieba: pip install 'rankscope[bm25]'")) from None
    import logging

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


@functools.cache
def _stemmer() -> Any:
    try:
        import Stemmer
    except ImportError:  # pragma: no cover - depends on the environment
        raise RankscopeError(_("English stemming needs PyStemmer: pip install 'rankscope[bm25]'")) from None
    return Stemmer.Stemmer("english")


class Tokenizer:
    """Callable text → tokens for one language setting (see the module docstring).

    Parameters
    ----------
    language:
        ``"auto"`` (per text), ``"en"`` or ``"zh"``.
    stem:
        Snowball-stem English words (default ``True``).
    stopwords:
        Remove the shipped stop words (default ``True``).
    zh_mode:
        ``"default"`` (jieba accurate mode) or ``"search"`` (jieba search mode:
        long words are also split into their shorter dictionary words, which
        raises recall of partial matches).

    >>> Tokenizer("zh")("Python的list和tuple有什么区别？")
    ['python', 'list', 'tupl', '有', '区别']
    >>> Tokenizer("en", stem=False, stopwords=False)("Boundary-layer flows")
    ['boundary', 'layer', 'flows']
    """

    def __init__(
        self,
        language: str = "auto",
        *,
        stem: bool = True,
        stopwords: bool = True,
        zh_mode: str = "default",
    ) -> None:
        if language not in ("auto", "en", "zh"):
            raise InvalidParameterError(_("tokenizer language must be 'auto', 'en' or 'zh', got {value!r}",
                                          value=language))
        if zh_mode not in ("default", "search"):
            raise InvalidParameterError(_("zh_mode must be 'default' or 'search', got {value!r}", value=zh_mode))
        self.language = language
        self.stem = stem
        self.stopwords = stopwords
        self.zh_mode = zh_mode
        self._stop = (load_stopwords("en") | load_stopwords("zh")) if stopwords else frozenset()

    def __repr__(self) -> str:
        return (
            f"Tokenizer({self.language!r}, stem={self.stem}, stopwords={self.stopwords}, zh_mode={self.zh_mode!r})"
        )

    def __call__(self, text: str) -> list[str]:
        if not isinstance(text, str):
            raise RankscopeError(_("tokenizer: expected a string, got {type}", type=type(text).__name__))
        language = detect_language(text) if self.language == "auto" else self.language
        if language == "zh":
            jieba = _jieba()
            pieces = jieba.lcut_for_search(text) if self.zh_mode == "search" else jieba.lcut(text)
            words = [w for piece in pieces for w in _WORD.findall(piece.lower())]
        else:
            words = _WORD.findall(text.lower())
        if self._stop:
            words = [w for w in words if w not in self._stop]
        if self.stem and words:
            # ideographs and digits pass through the Snowball stemmer unchanged
            words = _stemmer().stemWords(words)
        return words

    def tokenize_many(self, texts: Iterable[str]) -> list[list[str]]:
        """Tokenize every text (the stemmer caches the stems of repeated words)."""
        return [self(t) for t in texts]


def make_tokenizer(spec: str | Callable[[str], list[str]] | Tokenizer) -> Callable[[str], list[str]]:
    """Turn a tokenizer spec into a callable: ``"auto"``/``"en"``/``"zh"``, a :class:`Tokenizer` or any callable.

    >>> make_tokenizer("en")("Flows")
    ['flow']
    >>> make_tokenizer(str.split)("a b")
    ['a', 'b']
    """
    if isinstance(spec, str):
        return Tokenizer(spec)
    if callable(spec):
        return spec
    raise InvalidParameterError(_("tokenizer must be 'auto', 'en', 'zh' or a callable str -> list[str], got {type}",
                                  type=type(spec).__name__))
