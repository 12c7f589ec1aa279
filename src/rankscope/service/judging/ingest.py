"""A judging task from uploads: the pool ``rankscope pool`` wrote, the texts it needs, optional pre-labels.

* **Pool**: JSON Lines, one ``{"query_id", "doc_id", "best_rank", "runs"}`` record a line
  (:func:`rankscope.labels.pool.read_pool_records`; only the two ids are required).
* **Texts**: from a test set stored in the service (its queries and documents), or uploaded
  files read by :func:`rankscope.labels.read_texts` (a BEIR ``queries.jsonl`` / ``corpus.jsonl``,
  a rankscope test set with a corpus, ``id<TAB>text`` lines; gzip allowed).  Every query and
  document of the pool needs a non-empty text, or the upload is refused naming how many lack one.
  A document longer than :data:`MAX_DOC_CHARS` is cut there (counted; the judging view says so).
* **Pre-labels**: a qrels file (``rankscope judge`` output) with its optional provenance sidecar
  (:func:`rankscope.labels.read_labels`; without a sidecar its labels count as a model's).  Labels
  of pairs outside the pool are counted and left out.  Every provenance column is kept (the raw
  reply, time, endpoint, prompt hash, tokens and cache hit too) and given back by the export.
* **Order**: items are grouped by query (in pool order); within a query ``shuffled`` orders the
  documents by a hash of (query, doc), so that the rank a system gave them does not show,
  ``pool`` keeps the pool's order (best rank first).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rankscope.errors import Items, Message, ParseError, RankscopeError
from rankscope.i18n import N_, _
from rankscope.service.ingest import MAX_DOC_CHARS, Uploaded, UploadError, named_errors
from rankscope.service.uploads import Counter, spool

__all__ = ["MAX_DOC_CHARS", "ORDERS", "ParsedTask", "read_pool_upload", "read_texts_upload", "read_prelabels_upload",
           "build_task"]

ORDERS = ("shuffled", "pool")


@dataclass
class ParsedTask:
    """What :func:`build_task` makes of the uploads: rows for :func:`rankscope.service.store.create_task`."""

    queries: list[tuple[str, str]]
    docs: list[tuple[str, str, int]]
    items: list[dict[str, Any]]
    info: dict[str, Any] = field(default_factory=dict)


def _nonempty(path: Path, up: Uploaded) -> None:
    if path.stat().st_size == 0:
        raise UploadError(up.field, _("the uploaded file is empty"))


def read_pool_upload(tmp: Path, counter: Counter, up: Uploaded) -> list[dict[str, Any]]:
    """The records of an uploaded pool file (errors name the uploaded file and line)."""
    from rankscope.labels.pool import read_pool_records

    path = spool(up.fh, tmp / "pool.jsonl", counter, up.field, up.filename)
    _nonempty(path, up)
    with named_errors({path: up.filename}, up.field):
        return read_pool_records(path)


def _suffix(filename: str) -> str:
    """The uploaded name's suffixes without ``.gz`` (the spooled copy is inflated), for the texts reader."""
    parts = [s for s in Path(filename).suffixes if re.fullmatch(r"\.[A-Za-z0-9]{1,10}", s)]
    if parts and parts[-1].lower() == ".gz":
        parts = parts[:-1]
    return "".join(parts[-2:])


def read_texts_upload(tmp: Path, counter: Counter, up: Uploaded, kinds: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """``{kind: {id: text}}`` of an uploaded texts file, for each of ``kinds`` (``queries``, ``corpus``): a
    test set or BEIR-like file may hold both."""
    from rankscope.labels.texts import read_texts

    path = spool(up.fh, tmp / f"{'-'.join(kinds)}{_suffix(up.filename)}", counter, up.field, up.filename)
    _nonempty(path, up)
    out = {}
    with named_errors({path: up.filename}, up.field):
        for kind in kinds:
            try:
                out[kind] = read_texts(path, "queries" if kind == "queries" else "corpus")
            except OSError as exc:
                raise ParseError(str(exc.strerror or exc),
                                 source=up.filename) from None
    return out


def read_prelabels_upload(tmp: Path, counter: Counter, labels: Uploaded, provenance: Uploaded | None) -> Any:
    """:class:`~rankscope.labels.Labels` of an uploaded qrels file and its optional provenance sidecar."""
    from rankscope.labels.provenance import read_labels, sidecar_path

    qpath = spool(labels.fh, tmp / "labels.qrels", counter, labels.field, labels.filename)
    _nonempty(qpath, labels)
    names = {qpath: labels.filename}
    side = sidecar_path(qpath)
    if provenance is not None:
        spool(provenance.fh, side, counter, provenance.field, provenance.filename)
        names[side] = provenance.filename
    try:
        return read_labels(qpath, source="model")
    except RankscopeError as exc:
        blame = provenance if provenance is not None and getattr(exc, "source", None) == str(side) else labels
        with named_errors(names, blame.field):
            raise


def _order(records: list[dict[str, Any]], order: str) -> list[dict[str, Any]]:
    by_query: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        by_query.setdefault(rec["query_id"], []).append(rec)
    out: list[dict[str, Any]] = []
    for qid, recs in by_query.items():
        if order == "shuffled":
            recs = sorted(recs, key=lambda r: hashlib.sha256(f"{qid}\x00{r['doc_id']}".encode()).digest())
        out.extend(recs)
    return out


#: what of the pool has no text, said in an error
_WHAT = {"queries": N_("queries"), "documents": N_("documents")}


def _missing(field: str, what: str, ids: list[str], total: int, source: str | Message) -> UploadError:
    """``field``: n of the pool's ``what`` (``queries``, ``documents``) have no text in ``source``."""
    sample = Items(tuple(ids[:5]), quote=True)
    return UploadError(field, _("{n} of {total} {what} of the pool have no text in {source} (e.g. {sample})",
                                n=len(ids), total=total, what=_(_WHAT[what]), source=source,
                                sample=sample))


#: provenance columns an item stores in columns of its own; every other one goes to its ``prelabel_receipt``
_ITEM_COLUMNS = ("query_id", "doc_id", "grade", "source", "model", "prompt", "error")


def _receipt(row: dict[str, Any]) -> dict[str, Any] | None:
    """The non-null provenance of a pre-label beyond the item's own columns (reply, time, endpoint, tokens ...).

    >>> _receipt({"query_id": "q", "doc_id": "d", "grade": 1, "reply": "1", "tokens_in": 5, "cached": None})
    {'reply': '1', 'tokens_in': 5}
    """
    out = {k: v for k, v in row.items() if k not in _ITEM_COLUMNS and v is not None}
    return out or None


def build_task(records: list[dict[str, Any]], query_texts: dict[str, str], doc_texts: dict[str, str], *,
               texts_field: tuple[str, str], texts_source: str | Message, prelabels: Any = None,
               order: str = "shuffled",
               max_doc_chars: int = MAX_DOC_CHARS) -> ParsedTask:
    """Items, texts and counts of a judging task (see the module docstring).

    ``texts_field`` names the request fields of the query and document texts (for the errors),
    ``texts_source`` says where they came from (``test set 3 'toy'``, ``queries.jsonl``; a
    :class:`~rankscope.i18n.Message` is said in the reader's language in the errors).

    >>> recs = [{"query_id": "q1", "doc_id": "d1", "best_rank": 1, "runs": {"bm25": 1}}]
    >>> task = build_task(recs, {"q1": "what"}, {"d1": "x" * 12}, texts_field=("queries", "corpus"),
    ...                   texts_source="files", max_doc_chars=10)
    >>> task.docs, task.info["docs_cut"]
    ([('d1', 'xxxxxxxxxx', 12)], 1)
    """
    if order not in ORDERS:
        orders = Items(ORDERS)
        raise UploadError("order", _("must be one of {choices}; got {value!r}", choices=orders, value=order))
    qids = list(dict.fromkeys(r["query_id"] for r in records))
    dids = list(dict.fromkeys(r["doc_id"] for r in records))
    no_q = [q for q in qids if not (query_texts.get(q) or "").strip()]
    if no_q:
        raise _missing(texts_field[0], "queries", no_q, len(qids), texts_source)
    no_d = [d for d in dids if not (doc_texts.get(d) or "").strip()]
    if no_d:
        raise _missing(texts_field[1], "documents", no_d, len(dids), texts_source)
    docs = [(d, doc_texts[d][:max_doc_chars], len(doc_texts[d])) for d in dids]
    pre: dict[tuple[str, str], dict[str, Any]] = {}
    outside = 0
    if prelabels is not None:
        pairs = {(r["query_id"], r["doc_id"]) for r in records}
        for row in prelabels.table.to_pylist():
            key = (row["query_id"], row["doc_id"])
            if key in pairs:
                pre[key] = row
            else:
                outside += 1
    items = []
    for pos, rec in enumerate(_order(records, order)):
        p = pre.get((rec["query_id"], rec["doc_id"]))
        items.append({
            "position": pos, "query_id": rec["query_id"], "doc_id": rec["doc_id"], "best_rank": rec["best_rank"],
            "runs": rec["runs"] or None, "prelabel": p["grade"] if p else None,
            "prelabel_source": p["source"] if p else None, "prelabel_model": (p["model"] or None) if p else None,
            "prelabel_prompt": (p["prompt"] or None) if p else None, "prelabel_error": p["error"] if p else None,
            "prelabel_receipt": _receipt(p) if p else None})
    info = {"texts": str(texts_source), "order": order, "max_doc_chars": max_doc_chars,
            "docs_cut": sum(1 for __, t, n in docs if n > len(t)),
            "prelabels": len(pre), "prelabels_failed": sum(1 for p in pre.values() if p["grade"] is None),
            "prelabels_outside_pool": outside,
            "prelabel_models": sorted({f"{p['model']} / {p['prompt']}" for p in pre.values()
                                       if p["source"] == "model" and p["model"]}),
            "runs": sorted({run for r in records for run in r["runs"]})}
    return ParsedTask([(q, query_texts[q]) for q in qids], docs, items, info)
