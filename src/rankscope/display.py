"""How rankscope's values show in a notebook: IPython's display formatter registry, filled from outside the values.

:class:`~rankscope.engine.EvaluationResult`, :class:`~rankscope.comparison.Comparison`,
:class:`~rankscope.data.testset.TestSet` and :class:`~rankscope.gate.GateResult` know nothing of HTML; the package
facade calls :func:`register_ipython` when it is imported inside IPython (Jupyter, an IPython shell), which registers
:func:`html` for each type by name with the shell's ``text/html`` formatter — the types are not imported until one is
shown.  :func:`html` is also what a test or a page calls to get the same HTML.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["html", "register_ipython", "TYPES"]

#: (module, class name) of every value with a notebook display
TYPES: tuple[tuple[str, str], ...] = (
    ("rankscope.engine.result", "EvaluationResult"),
    ("rankscope.comparison", "Comparison"),
    ("rankscope.data.testset", "TestSet"),
    ("rankscope.gate", "GateResult"),
)


def html(obj: Any, lang: str | None = None) -> str:
    """The HTML a notebook shows for ``obj`` (in ``lang``, default the notebook's language)."""
    from rankscope.comparison import Comparison
    from rankscope.data.testset import TestSet
    from rankscope.engine.result import EvaluationResult
    from rankscope.gate import GateResult
    from rankscope.report import notebook

    if isinstance(obj, EvaluationResult):
        return notebook.html_result(obj, lang)
    if isinstance(obj, Comparison):
        return notebook.html_comparison(obj, lang)
    if isinstance(obj, TestSet):
        return notebook.html_testset(obj, lang)
    if isinstance(obj, GateResult):
        return notebook.html_gate(obj, lang)
    raise TypeError(f"no notebook display for {type(obj).__name__}")


def register_ipython(shell: Any = None) -> bool:
    """Register :func:`html` with the ``text/html`` formatter of ``shell`` (default: the running IPython shell, when
    IPython is imported and one runs); whether it was registered."""
    if shell is None:
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
    formatter = getattr(getattr(shell, "display_formatter", None), "formatters", {}).get("text/html")
    if formatter is None:
        return False
    for module, name in TYPES:
        formatter.for_type_by_name(module, name, html)
    return True
