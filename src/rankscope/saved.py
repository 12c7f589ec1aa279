"""Saved evaluations and comparisons: JSON files that load back exactly.

``result.save("bm25-2026-05.json")`` / ``comparison.save(...)`` write every field — per-query
values, query counts, policies, warnings, notices, ceilings, spans, pairs, the score
matrix — and :func:`load` (also ``EvaluationResult.load``, ``Comparison.load``) reads
them back: numbers are written as JSON floats (``repr``), so they round-trip bit for bit.
A saved evaluation is a result like any other: ``rankscope.compare`` and ``rankscope
compare`` accept it in place of a run, so last month's evaluation can be compared with
today's run without re-running it (the run is then scored with the saved evaluation's
metrics and policies, and must be scored against the same judgments).

The file is a JSON object ``{"schema": "rankscope.saved", "schema_version": 1, "kind":
"evaluation" | "comparison", "rankscope_version": ..., "data": {...}}``.

>>> import os, tempfile
>>> from rankscope import Qrels, Run, evaluate
>>> res = evaluate(Qrels.from_dict({"q1": {"d1": 1}}), Run.from_ranked_lists({"q1": ["d0", "d1"]}, "bm25"), ["mrr"])
>>> path = os.path.join(tempfile.mkdtemp(), "bm25.json")
>>> res.save(path)
>>> back = load(path)
>>> back == res, back["mrr"]
(True, 0.5)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import numpy as np

from rankscope.errors import InvalidParameterError, ParseError
from rankscope.i18n import _

__all__ = ["save", "load", "is_saved", "SAVED_SCHEMA", "SAVED_SCHEMA_VERSION"]

SAVED_SCHEMA = "rankscope.saved"
SAVED_SCHEMA_VERSION = 1
_HEAD = f'{{"schema": "{SAVED_SCHEMA}"'.encode()


# -- values -------------------------------------------------------------------------------------------------------
def _ids_out(ids: np.ndarray) -> dict[str, Any]:
    return {"ids": [str(q) for q in ids.tolist()], "dtype": "object" if ids.dtype == object else ids.dtype.str}


def _ids_in(data: dict[str, Any]) -> np.ndarray:
    return np.asarray(data["ids"], dtype=object if data["dtype"] == "object" else np.dtype(data["dtype"]))


def _matrix_in(rows: list[Any], shape: list[int]) -> np.ndarray:
    return np.asarray(rows, dtype=np.float64).reshape(shape)


def _scores_out(p: Any) -> dict[str, Any] | None:
    if p is None:
        return None
    return {"query_ids": _ids_out(p.query_ids), "metrics": list(p.metrics), "values": p.values.tolist(),
            "shape": list(p.values.shape), "measures": None if p.measures is None else [str(m) for m in p.measures]}


def _scores_in(d: dict[str, Any] | None) -> Any:
    from rankscope.engine.result import PerQueryScores

    if d is None:
        return None
    measures = None if d["measures"] is None else _measures_in(d["measures"])
    return PerQueryScores(_ids_in(d["query_ids"]), tuple(d["metrics"]), _matrix_in(d["values"], d["shape"]), measures)


def _measures_in(names: list[str]) -> tuple[Any, ...]:
    from rankscope.measures.parse import parse_metric

    return tuple(parse_metric(n) for n in names)


def _counts_in(d: dict[str, Any]) -> Any:
    from rankscope.engine.prepare import PolicyCounts

    known = {f.name for f in fields(PolicyCounts)}
    return PolicyCounts(**{k: v for k, v in d.items() if k in known})


def _policies_in(d: dict[str, Any]) -> Any:
    from rankscope.engine.policies import Policies

    return Policies(**d)


def _notices_in(items: list[dict[str, Any]]) -> tuple[Any, ...]:
    from rankscope.data.notices import InputNotice

    return tuple(InputNotice.from_dict(n) for n in items)


def _warnings_in(items: list[dict[str, Any]]) -> tuple[Any, ...]:
    from rankscope.interpret.coverage import DataWarning

    known = {f.name for f in fields(DataWarning)}
    return tuple(DataWarning(**{k: v for k, v in w.items() if k in known}) for w in items)


def _pair_out(p: Any) -> dict[str, Any]:
    return {f.name: list(v) if isinstance(v := getattr(p, f.name), tuple) else v for f in fields(p)}


def _pair_in(d: dict[str, Any]) -> Any:
    from rankscope.comparison import PairResult

    ci = d.get("diff_ci")
    return PairResult(**{**d, "diff_ci": None if ci is None else (float(ci[0]), float(ci[1]))})


def _plain(value: Any, field: str) -> Any:
    """The value of ``field`` as JSON can hold it (str, numbers, lists, dicts, None)."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        kind = type(value).__name__
        raise InvalidParameterError(_("cannot save the field {field!r}: a {type} has no JSON form", field=field,
                                      type=kind)) from None


def _judged_out(j: Any) -> dict[str, Any] | None:
    if j is None:
        return None
    return {**j.to_dict(), "shares": [None if v != v else float(v) for v in j.per_query.tolist()]}


def _judged_in(d: dict[str, Any] | None) -> Any:
    from dataclasses import replace

    from rankscope.engine.judged import JudgedAtK

    if d is None:
        return None
    shares = np.asarray([np.nan if v is None else v for v in d.get("shares") or []], dtype=float)
    return replace(JudgedAtK.from_dict(d), per_query=shares)


# -- EvaluationResult ---------------------------------------------------------------------------------------------
_RESULT_OUT: dict[str, Callable[[Any], Any]] = {
    "labels": list,
    "measures": lambda ms: [str(m) for m in ms],
    "per_query": _scores_out,
    "diagnostics": _scores_out,
    "queries": asdict,
    "policies": lambda p: p.to_dict(),
    "notices": lambda ns: [n.to_dict() for n in ns],
    "judged": _judged_out,
    "ceilings": dict,
}
_RESULT_IN: dict[str, Callable[[Any], Any]] = {
    "labels": tuple,
    "measures": _measures_in,
    "per_query": _scores_in,
    "diagnostics": _scores_in,
    "queries": _counts_in,
    "policies": _policies_in,
    "notices": _notices_in,
    "judged": _judged_in,
}


def result_to_json(result: Any) -> dict[str, Any]:
    """Every field of an :class:`~rankscope.engine.EvaluationResult` as JSON-ready data."""
    return {f.name: _RESULT_OUT.get(f.name, lambda v, n=f.name: _plain(v, n))(getattr(result, f.name))
            for f in fields(result)}


def result_from_json(data: dict[str, Any]) -> Any:
    """The :class:`~rankscope.engine.EvaluationResult` :func:`result_to_json` wrote."""
    from rankscope.engine.result import EvaluationResult

    known = {f.name for f in fields(EvaluationResult)}
    return EvaluationResult(**{k: _RESULT_IN.get(k, lambda v: v)(v) for k, v in data.items() if k in known})


# -- Comparison ---------------------------------------------------------------------------------------------------
_COMPARISON_OUT: dict[str, Callable[[Any], Any]] = {
    "systems": list,
    "labels": list,
    "measures": lambda ms: [str(m) for m in ms],
    "results": lambda rs: {name: result_to_json(r) for name, r in rs.items()},
    "mean_ci": lambda d: {s: {m: None if ci is None else list(ci) for m, ci in v.items()} for s, v in d.items()},
    "pairs": lambda ps: [_pair_out(p) for p in ps],
    "query_ids": _ids_out,
    "scores": lambda a: {"values": a.tolist(), "shape": list(a.shape)},
    "warnings": lambda ws: [{f.name: getattr(w, f.name) for f in fields(w)} for w in ws],
    "no_relevant": lambda n: None if n is None else list(n),
}
_COMPARISON_IN: dict[str, Callable[[Any], Any]] = {
    "systems": tuple,
    "labels": tuple,
    "measures": _measures_in,
    "results": lambda d: {name: result_from_json(r) for name, r in d.items()},
    "mean_ci": lambda d: {s: {m: None if ci is None else (float(ci[0]), float(ci[1])) for m, ci in v.items()}
                          for s, v in d.items()},
    "pairs": lambda ps: tuple(_pair_in(p) for p in ps),
    "query_ids": _ids_in,
    "scores": lambda d: _matrix_in(d["values"], d["shape"]),
    "warnings": _warnings_in,
    "no_relevant": lambda n: None if n is None else tuple(n),
}


def comparison_to_json(comparison: Any) -> dict[str, Any]:
    """Every field of a :class:`~rankscope.comparison.Comparison` as JSON-ready data."""
    return {f.name: _COMPARISON_OUT.get(f.name, lambda v, n=f.name: _plain(v, n))(
        getattr(comparison, f.name)) for f in fields(comparison)}


def comparison_from_json(data: dict[str, Any]) -> Any:
    """The :class:`~rankscope.comparison.Comparison` :func:`comparison_to_json` wrote."""
    from rankscope.comparison import Comparison

    known = {f.name for f in fields(Comparison)}
    return Comparison(**{k: _COMPARISON_IN.get(k, lambda v: v)(v) for k, v in data.items() if k in known})


# -- files --------------------------------------------------------------------------------------------------------
def save(obj: Any, path: str | Path) -> None:
    """Write a :class:`~rankscope.engine.EvaluationResult` or a :class:`~rankscope.comparison.Comparison` to
    ``path`` (JSON; :func:`load` reads it back exactly)."""
    from rankscope import __version__
    from rankscope.comparison import Comparison
    from rankscope.engine.result import EvaluationResult

    if isinstance(obj, EvaluationResult):
        kind, data = "evaluation", result_to_json(obj)
    elif isinstance(obj, Comparison):
        kind, data = "comparison", comparison_to_json(obj)
    else:
        raise InvalidParameterError(_("save takes an EvaluationResult or a Comparison, got {type}",
                                      type=type(obj).__name__))
    doc = {"schema": SAVED_SCHEMA, "schema_version": SAVED_SCHEMA_VERSION, "kind": kind,
           "rankscope_version": __version__, "data": data}
    out = Path(path)
    if not out.parent.exists():
        raise InvalidParameterError(_("cannot save to {path!r}: folder {folder!r} does not exist", path=str(out),
                                      folder=str(out.parent)))
    out.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")


def is_saved(path: str | Path) -> bool:
    """Whether ``path`` is a file :func:`save` wrote (it starts with the saved-file schema)."""
    p = Path(path)
    if not p.is_file():
        return False
    with open(p, "rb") as fh:
        return fh.read(len(_HEAD)) == _HEAD


def load(path: str | Path) -> Any:
    """Read an :class:`~rankscope.engine.EvaluationResult` or a :class:`~rankscope.comparison.Comparison` saved with
    ``save``; the file's ``kind`` says which."""
    source = str(path)
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ParseError(_("no such file"), source=source) from None
    except (OSError, ValueError) as exc:
        raise ParseError(_("not a saved rankscope evaluation ({reason})", reason=str(exc)), source=source) from None
    if not isinstance(doc, dict) or doc.get("schema") != SAVED_SCHEMA:
        raise ParseError(_('not a saved rankscope evaluation (no "schema": "rankscope.saved"); save one with '
                           "result.save(path) or comparison.save(path)"),
                         source=source)
    version = doc.get("schema_version")
    if version != SAVED_SCHEMA_VERSION:
        raise ParseError(_("saved with schema version {version}; this rankscope reads version {expected}",
                           version=version, expected=SAVED_SCHEMA_VERSION),
                         source=source)
    try:
        if doc["kind"] == "evaluation":
            return result_from_json(doc["data"])
        if doc["kind"] == "comparison":
            return comparison_from_json(doc["data"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ParseError(_("damaged saved file ({type}: {reason})", type=type(exc).__name__, reason=str(exc)),
                         source=source) from None
    raise ParseError(_("unknown kind {kind!r} (expected evaluation or comparison)", kind=doc.get("kind")),
                     source=source)
