"""A dense baseline on any OpenAI-compatible embeddings endpoint (``POST {base_url}/embeddings``).

OpenAI, vLLM (``vllm serve MODEL --task embed``), Ollama, llama.cpp's server, Hugging Face
text-embeddings-inference, DashScope and many gateways speak this API.  :class:`OpenAIEmbeddings` is
a model for :class:`~rankscope.retrieval.dense.DenseRetriever`: it embeds the corpus and the queries
through the endpoint, and the retriever scores by cosine similarity as with a local model::

    emb = OpenAIEmbeddings("https://api.openai.com/v1", "text-embedding-3-small", api_key_env="OPENAI_API_KEY")
    dense = DenseRetriever(corpus, emb)          # or: rankscope run openai --base-url ... --model ...

The client is the LLM judge's (:mod:`rankscope.llm_client`): the API key is read from the
environment variable named by ``api_key_env`` and sent only in the ``Authorization`` header; 429s
wait as ``Retry-After`` says, 408 / 5xx / timeouts are retried with exponential backoff, and
401 / 403 / 404 or an unreachable endpoint stop at once with what to check.  Texts go in batches
of ``batch_size``, ``concurrency`` requests at a time.  Models that were trained with instruction
prefixes (E5's ``"query: "`` / ``"passage: "``) get them from ``query_prefix`` / ``doc_prefix``: the
endpoint adds none.  Vectors are L2-normalised by the retriever.

Cache
    Every vector is stored (SQLite, ``<cache dir>/openai-embeddings.sqlite`` by default, beside the
    local models' embeddings: see :func:`~rankscope.retrieval.dense.default_cache_dir`) under the
    SHA-256 of the exact request that asks for that text alone: the endpoint URL, the model, the
    input (prefix included) and every other parameter sent (``encoding_format``, ``dimensions``,
    ``extra_body``), as canonical JSON (:func:`request_key`).  A changed endpoint, model, parameter
    or text is a new key; the same text in another corpus is not asked again.  Only vectors that
    arrived are stored, each batch committed as it arrives, so an interrupted corpus resumes where
    it stopped.  The API key is not part of the key and is not stored.

>>> request_key("http://127.0.0.1:8000/v1/embeddings", {"model": "m", "input": "hi", "encoding_format": "float"})[:16]
'f0cb3307ba641f1e'
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from rankscope._sqlite import open_cache
from rankscope.errors import InvalidParameterError, RankscopeError
from rankscope.i18n import _

__all__ = ["OpenAIEmbeddings", "EmbeddingCache", "request_key", "default_cache_file"]

CACHE_SCHEMA = 1


def request_key(url: str, body: Mapping[str, Any]) -> str:
    """The cache key of one embedding request: SHA-256 (hex) of the URL and the request body as canonical JSON
    (keys sorted, no spaces, UTF-8)."""
    text = json.dumps({"url": url, "body": body}, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def default_cache_file() -> Path:
    """``openai-embeddings.sqlite`` in the embeddings cache directory of the dense baseline."""
    from rankscope.retrieval.dense import default_cache_dir

    return default_cache_dir() / "openai-embeddings.sqlite"


class EmbeddingCache:
    """Vectors by request key in the SQLite file ``path`` (created with its folder); thread-safe.

    >>> import os, tempfile
    >>> cache = EmbeddingCache(os.path.join(tempfile.mkdtemp(), "e.sqlite"))
    >>> cache.put_many({"k1": np.array([0.5, 1.0], dtype=np.float32)})
    >>> cache.get_many(["k1", "k2"])["k1"].tolist(), len(cache)
    ([0.5, 1.0], 1)
    >>> cache.close()
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = open_cache(
            self.path, "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
            "CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, dim INTEGER NOT NULL, vector BLOB NOT NULL,"
            " created REAL NOT NULL) WITHOUT ROWID;", CACHE_SCHEMA,
            wrong_version=lambda found: _("{path}: embeddings cache schema {found}, this rankscope reads {reads}; use "
                                          "another cache file", path=str(self.path), found=found, reads=CACHE_SCHEMA),
            not_a_cache=lambda reason: _("{path}: not a rankscope embeddings cache ({reason})", path=str(self.path),
                                         reason=reason))

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors among ``keys`` (float32)."""
        out: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        with self._lock:
            for start in range(0, len(unique), 500):
                part = unique[start:start + 500]
                rows = self._db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * len(part))})",
                                        part).fetchall()
                out.update((k, np.frombuffer(v, dtype="<f4").copy()) for k, v in rows)
        return out

    def put_many(self, vectors: Mapping[str, np.ndarray]) -> None:
        """Store (or replace) vectors and commit at once."""
        now = time.time()
        rows = [(k, int(v.shape[0]), np.asarray(v, dtype="<f4").tobytes(), now) for k, v in vectors.items()]
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)
            self._db.commit()


def _client_class() -> Any:
    """:class:`~rankscope.llm_client.ChatClient` made to post embedding requests (httpx is imported here)."""
    from rankscope.llm_client import ChatClient, EndpointError

    class EmbeddingsClient(ChatClient):
        _not_a_reply = "not an embeddings response"

        @property
        def url(self) -> str:
            return f"{self.endpoint.base_url}/embeddings"

        def _fatal(self, status: int, detail: str, model: str) -> EndpointError:
            ep, url = self.endpoint, self.url
            if status in (401, 403):
                if ep.api_key_env:
                    return EndpointError(_("{url} refused the request (HTTP {status}): check the key in ${var}",
                                           url=url, status=status, var=ep.api_key_env))
                return EndpointError(_("{url} refused the request (HTTP {status}): check --api-key-env (no key was "
                                       "sent)", url=url, status=status))
            if detail:
                return EndpointError(_("HTTP {status} from {url}: {detail}: check --base-url (it ends before "
                                       "/embeddings, e.g. https://api.openai.com/v1) and --model {model!r}",
                                       status=status, url=url, detail=detail, model=model))
            return EndpointError(_("HTTP {status} from {url}: check --base-url (it ends before /embeddings, e.g. "
                                   "https://api.openai.com/v1) and --model {model!r}", status=status, url=url,
                                   model=model))

    return EmbeddingsClient


def _vectors(data: Any, n: int) -> list[np.ndarray]:
    """The ``n`` vectors of an embeddings response, in input order (``index``); floats or base64 little-endian
    float32.  Raises ValueError / KeyError / TypeError for a body that is not one (the client retries it)."""
    items = data["data"]
    if not isinstance(items, list) or len(items) != n:
        raise ValueError(f"{len(items) if isinstance(items, list) else 'no'} embeddings for {n} inputs")
    ordered = sorted(items, key=lambda item: int(item.get("index", 0))) if all("index" in i for i in items) else items
    out = []
    for item in ordered:
        vec = item["embedding"]
        arr = (np.frombuffer(base64.b64decode(vec), dtype="<f4") if isinstance(vec, str)
               else np.asarray(vec, dtype=np.float32))
        if arr.ndim != 1 or arr.size == 0 or not np.isfinite(arr).all():
            raise ValueError("an embedding is not a non-empty list of finite numbers")
        out.append(arr.astype(np.float32, copy=False))
    return out


class OpenAIEmbeddings:
    """Embeddings from an OpenAI-compatible endpoint, for :class:`~rankscope.retrieval.dense.DenseRetriever`.

    Parameters
    ----------
    base_url : the endpoint up to, not including, ``/embeddings`` (e.g. ``https://api.openai.com/v1``)
    model : the model name as the endpoint knows it
    api_key_env : the environment variable holding the API key (None: send no key, a local server)
    dimensions : ask for vectors of this size (models that can shorten them: OpenAI's text-embedding-3-*)
    query_prefix, doc_prefix : prepended to queries / documents before they are sent (E5: ``"query: "``,
        ``"passage: "``)
    batch_size : texts per request
    concurrency : requests in flight at once
    cache : the SQLite cache file (default :func:`default_cache_file`), or ``False`` for none
    extra_body : more request fields the endpoint takes (``{"input_type": "query"}``...), sent and keyed
    timeout, retries, backoff, max_wait : as for the LLM judge (:class:`~rankscope.llm_client.Endpoint`)
    transport : an httpx transport (tests)

    ``requests``, ``from_cache`` and ``tokens`` count what it did (texts from the cache, tokens the endpoint
    reported).
    """

    def __init__(self, base_url: str, model: str, *, api_key_env: str | None = None, dimensions: int | None = None,
                 query_prefix: str = "", doc_prefix: str = "", batch_size: int = 64, concurrency: int = 4,
                 cache: str | Path | bool = True, extra_body: Mapping[str, Any] | None = None,
                 timeout: float = 60.0, retries: int = 4, backoff: float = 1.0, max_wait: float = 300.0,
                 transport: Any = None) -> None:
        try:
            import httpx  # noqa: F401
        except ImportError:  # pragma: no cover - depends on the environment
            raise RankscopeError(_("{who} needs {package}: pip install 'rankscope[{extra}]'", who="OpenAIEmbeddings",
                                   package="httpx", extra="llm")) from None
        from rankscope.llm_client import Endpoint

        if not isinstance(model, str) or not model.strip():
            raise InvalidParameterError(_("model must name the endpoint's embedding model, got {value!r}", value=model))
        for name, value in (("batch_size", batch_size), ("concurrency", concurrency)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidParameterError(_("{name} must be a positive integer, got {value!r}", name=name,
                                              value=value))
        if dimensions is not None and (isinstance(dimensions, bool) or not isinstance(dimensions, int)
                                       or dimensions < 1):
            raise InvalidParameterError(_("{name} must be a positive integer, got {value!r}", name="dimensions",
                                          value=dimensions))
        base = base_url.rstrip("/") if isinstance(base_url, str) else base_url
        if isinstance(base, str) and base.endswith("/embeddings"):
            base = base[: -len("/embeddings")]
        self.endpoint = Endpoint(base, api_key_env=api_key_env, timeout=timeout, retries=retries, backoff=backoff,
                                 max_wait=max_wait)
        self.model, self.dimensions = model, dimensions
        self.query_prefix, self.doc_prefix = query_prefix, doc_prefix
        self.batch_size, self.concurrency = batch_size, concurrency
        self.params: dict[str, Any] = {"encoding_format": "float", **dict(extra_body or {})}
        if dimensions is not None:
            self.params["dimensions"] = dimensions
        self._client = _client_class()(self.endpoint, max_connections=concurrency, transport=transport)
        self.url: str = self._client.url
        self.cache: EmbeddingCache | None = None
        if cache is not False:
            self.cache = EmbeddingCache(default_cache_file() if cache is True else Path(cache))
        params = json.dumps(self.params, sort_keys=True, separators=(",", ":"))
        #: what identifies these embeddings (the dense retriever's cache and resume keys): no key, no secret
        self.identity = (f"openai-embeddings:{self.endpoint.base_url}|{model}|{params}|"
                         f"{query_prefix!r}|{doc_prefix!r}")
        self.requests = self.from_cache = self.tokens = 0
        self._count = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAIEmbeddings({self.endpoint.base_url!r}, {self.model!r})"

    def close(self) -> None:
        """Close the connections and the cache."""
        self._client.close()
        if self.cache is not None:
            self.cache.close()

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """``query_prefix + text`` embedded, one row per text."""
        return self._embed([self.query_prefix + t for t in texts])

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """``doc_prefix + text`` embedded, one row per text."""
        return self._embed([self.doc_prefix + t for t in texts])

    def _body(self, inputs: Any) -> dict[str, Any]:
        return {"model": self.model, "input": inputs, **self.params}

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions or 0), dtype=np.float32)
        keys = [request_key(self.url, self._body(t)) for t in texts]
        found = self.cache.get_many(keys) if self.cache is not None else {}
        todo = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in found))
        with self._count:
            self.from_cache += len(texts) - sum(k not in found for k in keys)
        if todo:
            batches = [todo[i:i + self.batch_size] for i in range(0, len(todo), self.batch_size)]
            if len(batches) == 1 or self.concurrency == 1:
                results = [self._ask(b) for b in batches]
            else:
                with ThreadPoolExecutor(min(self.concurrency, len(batches))) as pool:
                    results = list(pool.map(self._ask, batches))
            for batch, vectors in zip(batches, results):
                found.update((request_key(self.url, self._body(t)), v) for t, v in zip(batch, vectors))
        dims = {found[k].shape[0] for k in keys}
        if len(dims) != 1:
            raise RankscopeError(_("{url} returned vectors of different sizes ({dims}) for model {model!r}: a "
                                   "cache shared with another setting?", url=self.url, dims=sorted(dims),
                                   model=self.model))
        return np.stack([found[k] for k in keys])

    def _ask(self, batch: list[str]) -> list[np.ndarray]:
        """One request for ``batch``; its vectors stored in the cache as they arrive."""
        from rankscope.llm_client import ChatError, EndpointError

        def read(data: Any, attempt: int) -> list[np.ndarray]:
            vectors = _vectors(data, len(batch))
            usage = data.get("usage") or {}
            with self._count:
                self.requests += 1
                self.tokens += int(usage.get("prompt_tokens") or usage.get("total_tokens") or 0)
            return vectors

        try:
            vectors: list[np.ndarray] = self._client.post(self.url, self._body(batch), read, self.model)
        except ChatError as exc:
            error = RankscopeError(_("{url} could not embed {n} texts after {attempts} attempts: {error}",
                                     url=self.url, n=len(batch), attempts=exc.attempts, error=str(exc)))
            error.retryable = False  # type: ignore[attr-defined]  # the client retried what can be retried
            raise error from None
        except EndpointError as exc:
            exc.retryable = False  # type: ignore[attr-defined]  # a wrong URL, key or model: the same every time
            raise
        if self.cache is not None:
            self.cache.put_many({request_key(self.url, self._body(t)): v for t, v in zip(batch, vectors)})
        return vectors
