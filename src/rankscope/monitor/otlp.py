"""Retrieval events from OpenTelemetry traces (OTLP/HTTP, protobuf or JSON), OpenInference conventions.

An application instrumented with OpenInference (``openinference-instrumentation-langchain``,
``-llama-index`` ...) emits one span per retriever call, of kind ``RETRIEVER``
(``openinference.span.kind``), with

* ``input.value``: the query (text, or JSON holding it under ``query`` / ``input`` / ``question``
  when ``input.mime_type`` is ``application/json``);
* ``retrieval.documents.N.document.id`` / ``.score`` / ``.content`` / ``.metadata`` for the N-th
  document in rank order.  LangChain's instrumentation sends no id and no score: the id is then
  read from the document's metadata (``id``, ``doc_id``, ``document_id``, ``_id``, ``source``, the
  first present), else made from a hash of the document's text (``text:`` and 16 hex digits;
  counted in :attr:`Decoded.hashed_ids`), and the score from ``metadata.score`` if any;
* the retriever version: ``retriever_version`` or ``retriever`` in the span's ``metadata``
  attribute (JSON), else the resource's ``service.version``, else ``default``.

The event's time is the span's start, its latency the span's duration.  Spans of other kinds are
ignored (counted in :attr:`Decoded.ignored`); a retriever span without a query is rejected
(``span_without_query``), a body that is not an OTLP trace export is rejected whole
(``malformed_otlp``).

The OTLP/JSON encoding writes trace and span ids in hex (protobuf's JSON mapping would read them as
base64): they are converted before parsing.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rankscope.i18n import _
from rankscope.monitor.events import MAX_TEXT_CHARS, EventRejected, Rejection, RetrievalEvent, make_event

__all__ = ["Decoded", "decode_otlp", "RETRIEVER_KIND"]

RETRIEVER_KIND = "RETRIEVER"
_DOC = "retrieval.documents."
_ID_KEYS = ("id", "doc_id", "document_id", "_id", "source")
_QUERY_KEYS = ("query", "input", "question", "text")


@dataclass
class Decoded:
    """What one OTLP body held: the retriever events, the rejected spans, the spans of other kinds (ignored) and
    the documents whose id was made from their text."""

    events: list[RetrievalEvent] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    ignored: int = 0
    hashed_ids: int = 0
    #: the first resource's ``rankscope.monitor`` attribute, else its ``service.name`` (None: neither)
    service: str | None = None


def _malformed(reason: object) -> EventRejected:
    return EventRejected("malformed_otlp", _("not an OTLP trace export ({reason})", reason=str(reason)))


def _hex_ids(obj: Any) -> Any:
    """OTLP/JSON's hex trace/span ids as the base64 that protobuf's JSON mapping reads."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if k in ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id") \
                    and isinstance(v, str):
                with contextlib.suppress(ValueError):  # not hex: already base64 (protobuf's own JSON)
                    v = base64.b64encode(bytes.fromhex(v)).decode()
            out[k] = _hex_ids(v)
        return out
    if isinstance(obj, list):
        return [_hex_ids(v) for v in obj]
    return obj


def _request(body: bytes, content_type: str) -> Any:
    from google.protobuf import json_format
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    req = ExportTraceServiceRequest()
    if "json" in content_type.lower():
        try:
            data = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            raise _malformed(exc) from None
        if not isinstance(data, dict):
            raise _malformed("the body is not a JSON object")
        try:
            json_format.ParseDict(_hex_ids(data), req, ignore_unknown_fields=True)
        except (json_format.ParseError, ValueError, TypeError, RecursionError) as exc:
            raise _malformed(exc) from None
        return req
    try:
        req.ParseFromString(body)
    except (DecodeError, ValueError, RecursionError) as exc:
        raise _malformed(exc) from None
    return req


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in v.kvlist_value.values}
    if kind == "bytes_value":
        return bytes(v.bytes_value).hex()
    return getattr(v, kind)


def _attrs(kvs: Iterable[Any]) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in kvs}


def _json_obj(text: Any) -> dict[str, Any]:
    if isinstance(text, Mapping):
        return dict(text)
    if not isinstance(text, str):
        return {}
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return {}
    return obj if isinstance(obj, dict) else {}


def _query(attrs: Mapping[str, Any]) -> Any:
    value = attrs.get("input.value")
    if isinstance(value, str) and (str(attrs.get("input.mime_type", "")).endswith("json")
                                   or value.lstrip().startswith("{")):
        obj = _json_obj(value)
        for k in _QUERY_KEYS:
            if isinstance(obj.get(k), str):
                return obj[k]
        strings = [v for v in obj.values() if isinstance(v, str)]
        if len(strings) == 1:
            return strings[0]
        return None if obj else value
    return value


def _documents(attrs: Mapping[str, Any]) -> tuple[list[dict[str, Any]], int]:
    by_index: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if not key.startswith(_DOC):
            continue
        index, _, rest = key[len(_DOC):].partition(".")
        if not index.isdigit() or not rest.startswith("document."):
            continue
        by_index.setdefault(int(index), {})[rest[len("document."):]] = value
    hits: list[dict[str, Any]] = []
    hashed = 0
    for i in sorted(by_index):
        doc = by_index[i]
        meta = _json_obj(doc.get("metadata"))
        doc_id = doc.get("id")
        if doc_id is None or doc_id == "":
            doc_id = next((meta[k] for k in _ID_KEYS if isinstance(meta.get(k), (str, int))
                           and not isinstance(meta.get(k), bool) and str(meta[k]).strip()), None)
        content = doc.get("content")
        if doc_id is None and isinstance(content, str):
            doc_id = "text:" + hashlib.sha1(content.encode("utf-8", "surrogatepass"), usedforsecurity=False
                                            ).hexdigest()[:16]
            hashed += 1
        score = doc.get("score", meta.get("score"))
        hit: dict[str, Any] = {"id": doc_id}
        if score is not None:
            hit["score"] = score
        if content is not None:
            hit["text"] = content
        hits.append(hit)
    return hits, hashed


def _version(attrs: Mapping[str, Any], resource: Mapping[str, Any]) -> str:
    meta = _json_obj(attrs.get("metadata"))
    for k in ("retriever_version", "retriever"):
        if isinstance(meta.get(k), (str, int)) and not isinstance(meta.get(k), bool) and str(meta[k]).strip():
            return str(meta[k])
    v = resource.get("service.version")
    return str(v) if isinstance(v, (str, int)) and str(v).strip() else "default"


def decode_otlp(body: bytes, content_type: str = "application/x-protobuf", *,
                max_text: int = MAX_TEXT_CHARS) -> Decoded:
    """The retriever events of an OTLP/HTTP trace export (see the module docstring).

    A body that is not a trace export raises :class:`~rankscope.monitor.events.EventRejected`
    (``malformed_otlp``); a bad span is rejected alone (:attr:`Decoded.rejected`).
    """
    req = _request(body, content_type)
    out = Decoded()
    n = 0
    for rs in req.resource_spans:
        resource = _attrs(rs.resource.attributes)
        if out.service is None:
            name = resource.get("rankscope.monitor") or resource.get("service.name")
            out.service = str(name) if name else None
        for ss in rs.scope_spans:
            for span in ss.spans:
                n += 1
                attrs = _attrs(span.attributes)
                if str(attrs.get("openinference.span.kind", "")).upper() != RETRIEVER_KIND:
                    out.ignored += 1
                    continue
                where = f"span {n} ({span.span_id.hex() or 'no id'})"
                query = _query(attrs)
                if not isinstance(query, str) or not query.strip():
                    exc = EventRejected("span_without_query", _("a retriever span without a query (input.value)"))
                    out.rejected.append(Rejection(where, exc.reason, str(exc)))
                    continue
                hits, hashed = _documents(attrs)
                start, end = span.start_time_unix_nano, span.end_time_unix_nano
                try:
                    ev = make_event(query=query, results=hits, time=start / 1e9 if start else None,
                                    latency_ms=(end - start) / 1e6 if start and end >= start else None,
                                    retriever=_version(attrs, resource), source="otlp", max_text=max_text)
                except EventRejected as exc:
                    out.rejected.append(Rejection(where, exc.reason, str(exc)))
                    continue
                out.hashed_ids += hashed
                out.events.append(ev)
    return out
