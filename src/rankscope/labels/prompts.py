"""Versioned prompts of the LLM judge and the question generator, in English and Chinese.

The texts live in ``prompts.json`` beside this module: for each prompt a
``version`` and, per language, a ``system`` message, a ``user`` template with
``{query}`` / ``{passage}`` slots and a ``retry`` message sent after an
unreadable reply.  A prompt's :attr:`Prompt.id` (``umbrela-1/en``) is stored
with every label it produced (provenance) and is part of the cache key, so
changing a prompt's wording means raising its version: labels made by the old
wording are then neither reused nor mixed up with the new ones.

``umbrela`` asks for graded relevance 0–3 following the UMBRELA recipe
(Upadhyay et al., 2024, after Thomas et al., 2024): the grades' meanings, then
a silent weighing of the searcher's intent, how well the passage matches it and
how trustworthy it is, then one final grade.  ``synth`` asks for a question a
passage answers, with a short answer taken from it.

>>> p = get_prompt("umbrela", "zh")
>>> p.id
'umbrela-1/zh'
>>> [m["role"] for m in p.messages(query="q", passage="d")]
['system', 'user']
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from rankscope.choices import LANGS  # declared once, with the library and the service
from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import _

__all__ = ["LANGS", "PROMPTS", "Prompt", "get_prompt"]



@cache
def _data() -> dict[str, Any]:
    text = resources.files("rankscope.labels").joinpath("prompts.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


PROMPTS: tuple[str, ...] = ("umbrela", "synth")


@dataclass(frozen=True)
class Prompt:
    """One prompt in one language: ``name``, ``version``, ``lang``, its three texts and the typical length of
    a reply in tokens (for cost estimates)."""

    name: str
    version: str
    lang: str
    system: str
    user: str
    retry: str
    reply_tokens: int = 10

    @property
    def id(self) -> str:
        """``name-version/lang``: what provenance records and what the cache is keyed by."""
        return f"{self.name}-{self.version}/{self.lang}"

    def messages(self, *, query: str = "", passage: str = "") -> list[dict[str, str]]:
        """The chat messages for one item (the slots are filled verbatim: braces in the texts are safe).

        >>> get_prompt("umbrela", "en").messages(query="{x}", passage="p")[1]["content"].count("Query: {x}")
        1
        """
        user = self.user.replace("{query}", query).replace("{passage}", passage)
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]

    def retry_messages(self, messages: list[dict[str, str]], reply: str) -> list[dict[str, str]]:
        """``messages`` followed by the unreadable ``reply`` and the request to answer in the expected format."""
        return [*messages, {"role": "assistant", "content": reply}, {"role": "user", "content": self.retry}]


def get_prompt(name: str, lang: str = "en") -> Prompt:
    """The prompt ``name`` (``umbrela`` or ``synth``) in ``lang`` (``en`` or ``zh``).

    >>> get_prompt("umbrela", "fr")
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
    texts = entry[lang]
    return Prompt(name, str(entry["version"]), lang, texts["system"], texts["user"], texts["retry"],
                  int(entry["reply_tokens"]))
