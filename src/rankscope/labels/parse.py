"""Reading an LLM's reply: lenient about the form, strict about the content; never a guess.

:func:`parse_grade` accepts, in this order of precedence,

1. JSON objects ``{"grade": n}`` / ``{"relevance": n}`` / ``{"score": n}`` anywhere in
   the reply (also inside a Markdown code fence or after some reasoning);
2. a final line ``score: n`` (also ``final score``, ``##final score: n``, ``grade``,
   ``relevance``, ``rating``, ``category``, ``final relevance score``; ``评分``, ``分数``,
   ``等级``, ``得分``, ``评级``, ``相关性``, ``相关度`` and their compounds such as
   ``最终评分``, ``相关性等级``, ``相关度评分``; ``:``, ``：`` or ``=``; Markdown bold allowed);
3. a bare integer (the whole reply).

``<think>…</think>`` blocks of reasoning models are removed first.  ``n`` must
be an integer (``2``, ``2.0`` or ``"2"``) between the scale's bounds.  Every
grade the reply states — each JSON grade and each line of the form of 2, wherever
it stands — must be the same: grades that disagree (``{"grade": 2}`` then
``score: 3``) make the reply unreadable, as do an out-of-range grade, a fraction
or no grade at all; :class:`ReplyError` is raised — the caller retries and
finally records a failure.

>>> parse_grade('{"grade": 2}'), parse_grade('Reasoning...\\n##final score: 3'), parse_grade(" 1. ")
(2, 3, 1)
>>> parse_grade("```json\\n{\\"relevance\\": \\"0\\"}\\n```")
0
>>> parse_grade("It is somewhat relevant.")
Traceback (most recent call last):
...
rankscope.labels.parse.ReplyError: no grade found in the reply
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["ReplyError", "parse_grade", "parse_question", "strip_reasoning"]

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_OBJECT = re.compile(r"\{[^{}]*\}")
_GRADE_KEYS = ("grade", "relevance", "score")
_EN_KEY = r"(?:(?:final|overall)\s+)?(?:relevance\s+)?(?:score|grade|relevance|rating|category)"
_ZH_KEY = r"(?:(?:最终|最后)的?)?(?:(?:相关性|相关度|相关)(?:评分|分数|等级|得分|评级)?|评分|分数|等级|得分|评级)"
_LINE = re.compile(
    rf"^[\s#*>_-]*(?:{_EN_KEY}|{_ZH_KEY})\s*[*_]*\s*[:：=]\s*[*_]*\s*"
    r"(?P<n>-?\d+(?:\.\d+)?)\s*[*_]*\s*[.。]?\s*$",
    re.IGNORECASE,
)
_BARE = re.compile(r"^[*_\s]*(?P<n>-?\d+(?:\.\d+)?)[*_\s]*[.。]?\s*$")


class ReplyError(ValueError):
    """A reply that does not hold what was asked for (the reason is the message)."""


def strip_reasoning(text: str) -> str:
    """The reply without ``<think>…</think>`` blocks; a block left open means the reply was cut short.

    >>> strip_reasoning("<think>hmm</think> 2")
    ' 2'
    """
    out = _THINK.sub("", text)
    if re.search(r"<think>", out, re.IGNORECASE):
        raise ReplyError("the reply ends inside its reasoning (<think> block not closed)")
    return out


def _integer(value: Any, low: int, high: int) -> int:
    if isinstance(value, bool):
        raise ReplyError(f"grade {value!r} is not an integer")
    if isinstance(value, str):
        value = value.strip()
        if not re.fullmatch(r"-?\d+(?:\.0+)?", value):
            raise ReplyError(f"grade {value!r} is not an integer")
        value = float(value)
    if isinstance(value, float):
        if not value.is_integer():
            raise ReplyError(f"grade {value!r} is not an integer")
        value = int(value)
    if not isinstance(value, int):
        raise ReplyError(f"grade {value!r} is not an integer")
    if not low <= value <= high:
        raise ReplyError(f"grade {value} is outside {low}–{high}")
    return value


def _json_objects(text: str) -> list[dict[str, Any]]:
    out = []
    for m in _OBJECT.finditer(text):
        try:
            obj = json.loads(m.group(0))
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def parse_grade(text: str | None, low: int = 0, high: int = 3) -> int:
    """The grade in an LLM reply (see the module docstring), or :class:`ReplyError`.

    >>> parse_grade('{"grade": 2} and later {"grade": 3}')
    Traceback (most recent call last):
    ...
    rankscope.labels.parse.ReplyError: the reply gives different grades: 2, 3
    >>> parse_grade("score: 4")
    Traceback (most recent call last):
    ...
    rankscope.labels.parse.ReplyError: grade 4 is outside 0–3
    """
    if text is None or not text.strip():
        raise ReplyError("empty reply")
    body = strip_reasoning(text)
    found = [obj[key] for obj in _json_objects(body) for key in _GRADE_KEYS if key in obj]
    lines = [line for line in body.splitlines() if line.strip()]
    stated = [m.group("n") for m in map(_LINE.match, lines) if m is not None]
    if found:
        grades = [_integer(v, low, high) for v in [*found, *stated]]
        if len(set(grades)) > 1:
            raise ReplyError(f"the reply gives different grades: {', '.join(map(str, grades))}")
        return grades[0]
    if not lines:
        raise ReplyError("empty reply")
    m = _LINE.match(lines[-1]) or (_BARE.match(body.strip()) if len(lines) == 1 else None)
    if m is None:
        raise ReplyError("no grade found in the reply")
    grades = [_integer(n, low, high) for n in stated] or [_integer(m.group("n"), low, high)]
    if len(set(grades)) > 1:
        raise ReplyError(f"the reply gives different grades: {', '.join(map(str, grades))}")
    return grades[-1]


def parse_question(text: str | None) -> tuple[str, str]:
    """``(question, answer)`` from a generator reply ``{"question": ..., "answer": ...}``.

    Both must be non-empty strings; the last such object in the reply counts.

    >>> parse_question('Sure! {"question": "Who wrote Hamlet?", "answer": "Shakespeare"}')
    ('Who wrote Hamlet?', 'Shakespeare')
    >>> parse_question('{"question": ""}')
    Traceback (most recent call last):
    ...
    rankscope.labels.parse.ReplyError: no {"question": ..., "answer": ...} object in the reply
    """
    if text is None or not text.strip():
        raise ReplyError("empty reply")
    body = strip_reasoning(text)
    for obj in reversed(_json_objects(body)):
        q, a = obj.get("question"), obj.get("answer")
        if isinstance(q, str) and isinstance(a, (str, int, float)) and not isinstance(a, bool):
            q, a = q.strip(), str(a).strip()
            if q and a:
                return q, a
    raise ReplyError('no {"question": ..., "answer": ...} object in the reply')
