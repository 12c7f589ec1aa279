"""Saved evaluations and comparisons: JSON files that load back exactly.

``rankscope.save(result, "bm25-2026-05.json")`` (a result or a comparison) writes every field — per-query
values, query counts, policies, warnings, notices, ceilings, spans, pairs, the score
matrix — and :func:`load` (``rankscope.load``) reads them back: numbers are written as JSON floats
(``repr``), so they round-trip bit for bit.  The fields are written by the one serialiser of a result
(:func:`~rankscope.engine.result.result_to_json`) and of a comparison
(:func:`~rankscope.comparison.comparison_to_json`); this module adds the file around them.
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
>>> save(res, path)
>>> back = load(path)
>>> back == res, back["mrr"]
(True, 0.5)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rankscope._version import __version__
from rankscope.comparison import Comparison, comparison_from_json, comparison_to_json
from rankscope.engine.result import EvaluationResult, result_from_json, result_to_json
from rankscope.errors import InvalidParameterError, ParseError
from rankscope.i18n import _

__all__ = ["save", "load", "is_saved", "saved_runs", "SAVED_SCHEMA", "SAVED_SCHEMA_VERSION"]

SAVED_SCHEMA = "rankscope.saved"
SAVED_SCHEMA_VERSION = 1
_HEAD = f'{{"schema": "{SAVED_SCHEMA}"'.encode()


# -- files --------------------------------------------------------------------------------------------------------
def save(obj: Any, path: str | Path) -> None:
    """Write a :class:`~rankscope.engine.EvaluationResult` or a :class:`~rankscope.comparison.Comparison` to
    ``path`` (JSON; :func:`load` reads it back exactly)."""
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


def load(path: str | Path, kind: type | None = None) -> Any:
    """Read an :class:`~rankscope.engine.EvaluationResult` or a :class:`~rankscope.comparison.Comparison` saved with
    ``save``; the file's ``kind`` says which.  ``kind`` (``EvaluationResult`` or ``Comparison``): the type the file
    must hold, else an :class:`~rankscope.errors.InvalidParameterError`."""
    obj = _read(path)
    if kind is EvaluationResult and not isinstance(obj, EvaluationResult):
        raise InvalidParameterError(_("{path} holds a saved {type}, not an EvaluationResult", path=str(path),
                                      type=type(obj).__name__))
    if kind is Comparison and not isinstance(obj, Comparison):
        raise InvalidParameterError(_("{path} holds a saved {kind}, not a Comparison", path=path,
                                      kind=type(obj).__name__))
    return obj


def saved_runs(runs: Mapping[str, Any] | Sequence[Any]) -> Mapping[str, Any] | Sequence[Any]:
    """``runs`` of :func:`rankscope.compare` with every path of a saved evaluation replaced by the evaluation (last
    month's evaluation, compared without re-running it); a saved comparison there is an error."""

    def one(r: Any) -> Any:
        if isinstance(r, (str, Path)) and is_saved(r):
            saved = load(r)
            if not isinstance(saved, EvaluationResult):
                raise InvalidParameterError(_("{path} holds a saved comparison; compare takes runs or saved "
                                              "evaluations (rankscope.save(result, path))", path=r))
            return saved
        return r

    if isinstance(runs, Mapping):
        return {k: one(v) for k, v in runs.items()}
    if isinstance(runs, (str, bytes)):
        return runs
    try:
        return [one(r) for r in runs]
    except TypeError:  # not iterable: compare says what it takes
        return runs


def _read(path: str | Path) -> Any:
    source = str(path)
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ParseError(_("no such file"), source=source) from None
    except (OSError, ValueError) as exc:
        raise ParseError(_("not a saved rankscope evaluation ({reason})", reason=str(exc)), source=source) from None
    if not isinstance(doc, dict) or doc.get("schema") != SAVED_SCHEMA:
        raise ParseError(_('not a saved rankscope evaluation (no "schema": "rankscope.saved"); save one with '
                           "rankscope.save(result, path)"),
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
