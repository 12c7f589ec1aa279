"""Versioned prompts of the LLM judge and the question generator, in English and Chinese.

The texts live in ``prompts.json`` beside this module: for each prompt a
``version``, optional request ``params`` (sent with every call, e.g.
``frequency_penalty``), an example reply (for token estimates) and, per
language, a ``system`` message, a ``user`` template with ``{query}`` /
``{passage}`` slots and a ``retry`` message sent after an unreadable reply.  A
prompt's :attr:`Prompt.id` (``graded-1/en``) and :attr:`Prompt.hash` (SHA-256 of
its texts and params) are stored with every label it produced (provenance); the
answer cache is keyed by the exact request, so a changed wording is never served
an old answer, even when nobody raised the version.

The judge prompts
    ``graded`` (the default) is rankscope's own: graded relevance 0–3 after
    UMBRELA (Upadhyay et al., 2024, after Thomas et al., 2024) — the grades'
    meanings, a silent weighing of the searcher's intent, how well the passage
    matches it and how trustworthy it is, then one grade as ``{"grade": n}``, in
    English and Chinese.  It is *not* UMBRELA's wording: UMBRELA's published
    agreement figures are not figures of this prompt.

    ``umbrela`` is the published UMBRELA prompt reproduced exactly: the text of
    ``src/umbrela/prompts/qrel_zeroshot_bing.txt`` of castorini/umbrela (commit
    16cba3eb), sent as its ``gpt_judge.py`` sends it — system message
    ``You are a helpful assistant.``, temperature 0, ``max_tokens`` 100, ``top_p``
    1, ``frequency_penalty`` 0.5, ``presence_penalty`` 0 — answered as
    ``##final score: n``.  English only (UMBRELA publishes no other).  Two things
    are rankscope's: an unreadable reply is asked again (UMBRELA records grade
    0; ``parse_retries=0`` turns re-asks off) and is a failure in the end, never a
    guessed 0.  (Labels whose provenance says ``umbrela-1`` were made by the
    prompt now called ``graded-1``.)

``synth`` asks for a question a passage answers, with a short answer taken from it.

>>> p = get_prompt("graded", "zh")
>>> p.id
'graded-1/zh'
>>> [m["role"] for m in p.messages(query="q", passage="d")]
['system', 'user']
>>> get_prompt("umbrela").messages(query="q", passage="d")[0]["content"]
'You are a helpful assistant.'
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from rankscope.choices import LANGS  # declared once, with the library and the service
from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import _

__all__ = ["JUDGE_PROMPTS", "LANGS", "PROMPTS", "Prompt", "get_prompt"]


@cache
def _data() -> dict[str, Any]:
    text = resources.files("rankscope.labels").joinpath("prompts.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


PROMPTS: tuple[str, ...] = ("graded", "umbrela", "synth")
#: the prompts that grade a passage (``judge --prompt``); the first is the default
JUDGE_PROMPTS: tuple[str, ...] = ("graded", "umbrela")
_SLOT = re.compile(r"\{(query|passage)\}")


@dataclass(frozen=True)
class Prompt:
    """One prompt in one language: ``name``, ``version``, ``lang``, its three texts, the request ``params`` it
    sends, the typical length of a reply in tokens and an example reply (for cost estimates)."""

    name: str
    version: str
    lang: str
    system: str
    user: str
    retry: str
    reply_tokens: int = 10
    params: dict[str, Any] = field(default_factory=dict, hash=False, compare=True)
    reply_example: str = ""

    @property
    def id(self) -> str:
        """``name-version/lang``: what provenance records."""
        return f"{self.name}-{self.version}/{self.lang}"

    @property
    def hash(self) -> str:
        """SHA-256 (hex) of the prompt's texts and params: what provenance records as ``prompt_hash``."""
        data = json.dumps({"system": self.system, "user": self.user, "retry": self.retry, "params": self.params},
                          sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(data.encode("utf-8")).hexdigest()

    def messages(self, *, query: str = "", passage: str = "") -> list[dict[str, str]]:
        """The chat messages for one item (the slots are filled in one pass, verbatim: braces in the texts, or a
        query that contains ``{passage}``, are safe).

        >>> get_prompt("graded", "en").messages(query="{passage}", passage="p")[1]["content"].count("Query: {passage}")
        1
        """
        values = {"query": query, "passage": passage}
        user = _SLOT.sub(lambda m: values[m.group(1)], self.user)
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]

    def retry_messages(self, messages: list[dict[str, str]], reply: str) -> list[dict[str, str]]:
        """``messages`` followed by the unreadable ``reply`` and the request to answer in the expected format."""
        return [*messages, {"role": "assistant", "content": reply}, {"role": "user", "content": self.retry}]


def get_prompt(name: str, lang: str = "en") -> Prompt:
    """The prompt ``name`` (``graded``, ``umbrela`` or ``synth``) in ``lang`` (``en`` or ``zh``; ``umbrela``: ``en``).

    >>> get_prompt("graded", "fr")
    Traceback (most recent call last):
    ...
    rankscope.errors.InvalidParameterError: lang must be one of en, zh, got 'fr'
    """
    if name not in PROMPTS:
        names = Items(PROMPTS)
        raise InvalidParameterError(_("prompt must be one of {choices}, got {value!r}", choices=names, value=name))
    if lang not in LANGS:
        langs = Items(LANGS)
        raise InvalidParameterError(_("lang must be one of {choices}, got {value!r}", choices=langs, value=lang))
    entry = _data()[name]
    if lang not in entry:
        raise InvalidParameterError(_("the {name} prompt is published in English only; give --lang en for the "
                                      "prompt (messages follow RANKSCOPE_LANG) or use --prompt graded, which has a "
                                      "{lang} version", name=name, lang=lang))
    texts = entry[lang]
    return Prompt(name, str(entry["version"]), lang, texts["system"], texts["user"], texts["retry"],
                  int(entry["reply_tokens"]), dict(entry.get("params", {})), str(entry.get("reply_example", "")))
