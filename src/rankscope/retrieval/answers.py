"""Relevance from answer text: a chunk is relevant when it contains a reference answer.

For test sets that have reference answers but no relevant ids (the method of
older RAG write-ups).  Both the answer and the chunk text are normalised
first by :func:`normalize_text`:

1. Unicode NFKC (full-width letters, digits and ASCII punctuation such as
   ``，？！（）`` become their ASCII forms; the ideographic space becomes a space);
2. CJK punctuation that NFKC keeps (``。、“”‘’《》「」『』【】〔〕``) is mapped to ASCII;
3. case folding;
4. whitespace runs become one space, and a space next to a CJK character is
   removed (Chinese text is not space-separated, so ``北京 大学`` = ``北京大学``).

An answer is also stripped of leading and trailing punctuation, so that
``"Shakespeare."`` matches ``"... by Shakespeare, in 1600"``.  An answer that
is empty after normalisation matches nothing.

The judgments produced cover the retrieved chunks (grade 1 if the chunk
contains an answer, else 0) and, when ``corpus`` texts are given, every corpus
document that contains an answer — only then do recall-type metrics have the
right denominator.

>>> normalize_text("“北京 大学”成立于１８９８年。")
'"北京大学"成立于1898年.'
>>> contains_answer("《红楼梦》的作者是曹雪芹。", ["曹雪芹"])
True
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence

from rankscope.data.qrels import Qrels

__all__ = ["normalize_text", "normalize_answer", "contains_answer", "answer_qrels"]

_CJK_PUNCT = str.maketrans({
    "。": ".", "、": ",", "“": '"', "”": '"', "‘": "'", "’": "'", "《": "<", "》": ">", "〈": "<", "〉": ">",
    "「": '"', "」": '"', "『": '"', "』": '"', "【": "[", "】": "]", "〔": "(", "〕": ")", "…": "...",
    "—": "-", "–": "-",
})
_CJK = r"\u2e80-\u2fff\u3040-\u30ff\u3100-\u312f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_SPACE = re.compile(r"\s+")
_CJK_SPACE = re.compile(rf"(?<=[{_CJK}]) | (?=[{_CJK}])")
_EDGE_PUNCT = " \t\n.,;:!?\"'()[]<>-_/\\|~`*&^%$#@+=·"


def normalize_text(text: str) -> str:
    """NFKC, CJK punctuation to ASCII, case fold, one space per whitespace run, no space beside CJK."""
    s = unicodedata.normalize("NFKC", text).translate(_CJK_PUNCT).casefold()
    s = _SPACE.sub(" ", s).strip()
    return _CJK_SPACE.sub("", s)


def normalize_answer(answer: str) -> str:
    """:func:`normalize_text` plus leading/trailing punctuation removed.

    >>> normalize_answer("  Shakespeare. ")
    'shakespeare'
    """
    return normalize_text(answer).strip(_EDGE_PUNCT)


def contains_answer(text: str | None, answers: Iterable[str], *, normalized: bool = False) -> bool:
    """True when ``text`` contains at least one of ``answers`` after normalisation.

    ``normalized=True`` says both are already normalised (skips the work).
    """
    if not text:
        return False
    t = text if normalized else normalize_text(text)
    for a in answers:
        a = a if normalized else normalize_answer(a)
        if a and a in t:
            return True
    return False


def answer_qrels(
    answers: Mapping[str, Sequence[str]],
    retrieved: Mapping[str, Sequence[tuple[str, str | None]]],
    corpus: Mapping[str, str] | None = None,
) -> Qrels:
    """Judgments from answer containment.

    ``answers``: query id -> reference answers; ``retrieved``: query id ->
    ``[(chunk_id, text), ...]`` (text ``None`` = look it up in ``corpus``).
    Every retrieved chunk of a query with answers is judged (1 = contains an
    answer, 0 = does not); with ``corpus`` every corpus document containing an
    answer is judged relevant as well.

    >>> q = answer_qrels({"q1": ["Paris"]}, {"q1": [("c1", "Lyon is big"), ("c2", "PARIS, France")]})
    >>> q.to_dict()
    {'q1': {'c1': 0, 'c2': 1}}
    """
    norm_answers = {q: [a for a in map(normalize_answer, ans) if a] for q, ans in answers.items() if ans}
    grades: dict[tuple[str, str], int] = {}
    text_cache: dict[str, str] = {}

    def text_of(doc: str, text: str | None) -> str | None:
        if text is not None:
            return normalize_text(text)
        if corpus is None or doc not in corpus:
            return None
        if doc not in text_cache:
            text_cache[doc] = normalize_text(corpus[doc])
        return text_cache[doc]

    for qid, hits in retrieved.items():
        ans = norm_answers.get(qid)
        if not ans:
            continue
        for doc, text in hits:
            t = text_of(doc, text)
            grade = int(t is not None and any(a in t for a in ans))
            key = (qid, doc)
            grades[key] = max(grade, grades.get(key, 0))  # several chunks of one doc: the best
    if corpus:
        for key in _corpus_matches(norm_answers, corpus):
            grades[key] = 1
    return Qrels([q for q, _ in grades], [d for _, d in grades], list(grades.values()))


def _corpus_matches(norm_answers: Mapping[str, list[str]], corpus: Mapping[str, str]) -> list[tuple[str, str]]:
    """Every (query, corpus doc) whose doc text contains an answer (one vectorised scan per distinct answer)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    ids = np.asarray(list(corpus.keys()), dtype=object)
    texts = pa.array([normalize_text(t) for t in corpus.values()], type=pa.string())
    found: dict[str, np.ndarray] = {}
    out: list[tuple[str, str]] = []
    for qid, ans in norm_answers.items():
        hit = np.zeros(len(ids), dtype=bool)
        for a in ans:
            if a not in found:
                found[a] = pc.match_substring(texts, a).to_numpy(zero_copy_only=False)
            hit |= found[a]
        out.extend((qid, str(doc)) for doc in ids[hit].tolist())
    return out
