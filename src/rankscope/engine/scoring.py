"""The one caller of metric kernels: :func:`score`.

Every front end — :class:`~rankscope.engine.Evaluator` (and through it
:func:`~rankscope.evaluate`, :func:`~rankscope.compare`, the report's metric@k
curves, the service's jobs) and the ``rankscope trec_eval`` drop-in — turns a
run into a :class:`~rankscope.measures.kernel_input.KernelInput` with
:func:`~rankscope.engine.prepare.prepare` and hands it here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rankscope.errors import InvalidParameterError
from rankscope.i18n import _
from rankscope.measures.base import Measure
from rankscope.measures.kernel_input import KernelInput

__all__ = ["score"]


def score(data: KernelInput, measures: Sequence[Measure]) -> np.ndarray:
    """The ``(queries, measures)`` matrix of per-query values of ``measures`` on ``data``.

    Each distinct measure is computed once.  A kernel declared ``judged_view``
    reads ``data`` (the judged rows); the others read its complete view, built
    once.  A measure whose ``judged_only`` parameter is set (ir_measures'
    ``P(judged_only=True)@5``) reads the condensed view instead: unjudged documents
    removed before ranking (:meth:`~rankscope.measures.kernel_input.KernelInput.condensed_view`).
    The matrix is float64, or of objects when a string-valued measure
    (``relstring``) is asked for.

    >>> from rankscope import Qrels, Run
    >>> from rankscope.engine.prepare import QrelsIndex, prepare
    >>> from rankscope.measures import parse_metric
    >>> p, _ = prepare(QrelsIndex(Qrels.from_dict({"q": {"a": 1}})), Run.from_ranked_lists({"q": ["x", "a"]}))
    >>> score(p.data, [parse_metric("mrr"), parse_metric("P@1")]).tolist()
    [[0.5, 0.0]]
    """
    text = any(m.spec.text for m in measures)
    out = np.empty((data.n, len(measures)), dtype=object if text else np.float64)
    column: dict[Measure, int] = {}
    complete: KernelInput | None = None
    condensed: KernelInput | None = None
    for j, m in enumerate(measures):
        if m in column:
            out[:, j] = out[:, column[m]]
            continue
        spec = m.spec
        if "judged_only" in spec.param_index and m.param("judged_only"):
            condensed = condensed or data.condensed_view()
            view = condensed
        elif spec.judged_view:
            view = data
        else:
            complete = complete or data.complete_view()
            view = complete
        values = np.asarray(spec.kernel(view, m), dtype=object if spec.text else np.float64)
        if values.shape != (data.n,):
            raise InvalidParameterError(_("metric {metric} returned shape {shape}, expected ({n},)", metric=str(m),
                                          shape=values.shape, n=data.n))
        out[:, j] = values
        column[m] = j
    return out
