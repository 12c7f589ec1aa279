"""The LLM judge for one item: ``(query text, document text, settings) -> grade or failure``.

:func:`judge_one` is a plain function of its arguments (it holds no state
besides a per-process pool of HTTP clients), so a batch driver — the thread
pool of :mod:`rankscope.labels.batch`, or Ray actors — can map it over items.

One judgment
    The prompt (:mod:`rankscope.labels.prompts`, ``umbrela`` by default) is
    filled with the query and the document (cut at ``max_doc_chars``
    characters; the cut is reported), sent at temperature 0, and the reply read
    by :func:`rankscope.labels.parse.parse_grade`.  An unreadable reply is
    followed by the prompt's ``retry`` message, ``parse_retries`` times; then the
    item is a failure with the reason — a grade is never guessed.  HTTP failures
    are retried by the client (:mod:`rankscope.labels.client`) and end as a
    failure too.  A wrong URL, key or model stops everything
    (:class:`~rankscope.labels.client.EndpointError`).

Token estimate (``--dry-run``)
    Without the model's tokenizer, a text counts one token per CJK character
    plus one per four other characters — a rough figure (within about ±30% for
    current English and Chinese tokenizers), meant for a budget, not a bill.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from rankscope.errors import InvalidParameterError
from rankscope.i18n import _
from rankscope.labels.client import ChatClient, ChatError, Endpoint
from rankscope.labels.parse import ReplyError, parse_grade
from rankscope.labels.prompts import Prompt, get_prompt

__all__ = ["Answer", "JudgeSettings", "Judgment", "ask", "client_for", "estimate_tokens", "judge_one"]

T = TypeVar("T")
_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")


def estimate_tokens(text: str) -> int:
    """A rough token count: one per CJK character, one per four other characters (rounded up).

    >>> estimate_tokens("what is bm25?"), estimate_tokens("什么是检索")
    (4, 5)
    """
    cjk = len(_CJK.findall(text))
    return cjk + -(-(len(text) - cjk) // 4)


@dataclass(frozen=True)
class JudgeSettings:
    """How to judge: the endpoint, the model, the prompt and its language, and the limits.

    ``parse_retries``: unreadable replies answered with a retry message before the
    item fails; ``max_doc_chars``: documents are cut at this many characters;
    ``max_tokens``: a cap on the reply length sent to the endpoint (None: the
    endpoint's default; reasoning models need room to think).  The temperature
    is always 0.
    """

    endpoint: Endpoint
    model: str
    lang: str = "en"
    prompt_name: str = "umbrela"
    parse_retries: int = 2
    max_doc_chars: int = 8000
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model.strip():
            raise InvalidParameterError(_("model must be a non-empty name, got {value!r}", value=self.model))
        get_prompt(self.prompt_name, self.lang)  # validates both
        for name, low in (("parse_retries", 0), ("max_doc_chars", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise InvalidParameterError(_("{name} must be an integer >= {low}, got {value!r}", name=name, low=low,
                                              value=v))
        if self.max_tokens is not None and (not isinstance(self.max_tokens, int) or self.max_tokens < 1):
            raise InvalidParameterError(_("{name} must be a positive integer, got {value!r}", name="max_tokens",
                                          value=self.max_tokens))

    @property
    def prompt(self) -> Prompt:
        """The prompt in the chosen language."""
        return get_prompt(self.prompt_name, self.lang)

    def cut(self, text: str) -> tuple[str, bool]:
        """``text`` cut at ``max_doc_chars`` and whether it was cut."""
        return (text[: self.max_doc_chars], True) if len(text) > self.max_doc_chars else (text, False)


@dataclass(frozen=True)
class Answer(Generic[T]):
    """The parsed value of a reply (None on failure), the error, the last reply text, the calls made
    (HTTP attempts included) and the tokens used."""

    value: T | None
    error: str | None
    reply: str | None
    calls: int
    tokens_in: int
    tokens_out: int


@dataclass(frozen=True)
class Judgment:
    """One judged item: ``grade`` (None on failure) or ``error``; the reply, tokens, calls, and whether the
    document was cut."""

    grade: int | None
    error: str | None
    reply: str | None
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    truncated: bool = False


_CLIENTS: dict[tuple[Endpoint, int], ChatClient] = {}
_CLIENTS_LOCK = threading.Lock()


def client_for(endpoint: Endpoint, max_connections: int = 8) -> ChatClient:
    """The process's shared client for ``endpoint`` and connection bound (created on first use)."""
    with _CLIENTS_LOCK:
        client = _CLIENTS.get((endpoint, max_connections))
        if client is None:
            client = _CLIENTS[endpoint, max_connections] = ChatClient(endpoint, max_connections=max_connections)
        return client


def ask(client: ChatClient, model: str, prompt: Prompt, messages: list[dict[str, str]],
        parse: Callable[[str], T], *, parse_retries: int = 2, max_tokens: int | None = None) -> Answer[T]:
    """Send ``messages``, read the reply with ``parse``; re-ask with the prompt's retry message after an
    unreadable reply, ``parse_retries`` times.  Never raises for one item's failure (only
    :class:`~rankscope.labels.client.EndpointError`)."""
    calls = tokens_in = tokens_out = 0
    reply: str | None = None
    error = "no attempt"
    msgs = messages
    for __ in range(parse_retries + 1):
        try:
            r = client.chat(model, msgs, temperature=0.0, max_tokens=max_tokens)
        except ChatError as exc:
            return Answer(None, f"{exc.kind}: {exc}", reply, calls + exc.attempts, tokens_in, tokens_out)
        calls += r.attempts
        tokens_in += r.tokens_in
        tokens_out += r.tokens_out
        reply = r.text
        try:
            return Answer(parse(r.text), None, reply, calls, tokens_in, tokens_out)
        except ReplyError as exc:
            error = f"unreadable reply: {exc}"
            msgs = prompt.retry_messages(messages, r.text)
    return Answer(None, error, reply, calls, tokens_in, tokens_out)


def judge_one(query: str, doc: str, settings: JudgeSettings, *, client: ChatClient | None = None) -> Judgment:
    """Judge how well ``doc`` answers ``query`` (grade 0–3), or say why it could not be judged.

    ``client`` defaults to the process's shared client for ``settings.endpoint``.
    """
    prompt = settings.prompt
    text, truncated = settings.cut(doc)
    ans = ask(client or client_for(settings.endpoint), settings.model, prompt,
              prompt.messages(query=query, passage=text), parse_grade,
              parse_retries=settings.parse_retries, max_tokens=settings.max_tokens)
    return Judgment(ans.value, ans.error, ans.reply, ans.calls, ans.tokens_in, ans.tokens_out, truncated)


def prompt_tokens(prompt: Prompt, query: str, doc: str) -> int:
    """Estimated input tokens of one call (system + user message)."""
    return sum(estimate_tokens(m["content"]) for m in prompt.messages(query=query, passage=doc))
