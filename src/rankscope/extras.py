"""The optional parts of rankscope and what each needs: :func:`need` says which extra to install.

A core install (``pip install rankscope``) evaluates, compares and gates; reports, plots and DataFrames
need an extra.  :func:`need` imports the module or raises
:class:`~rankscope.errors.MissingExtraError` naming the extra in one line (exit code 2 on the command
line), and the commands check the extras a run will need before any work (:func:`need_for_reports`), so
that a CI job never prints results and then fails on an import.

>>> need("json")  # a module of the standard library is always there
<module 'json' ...>
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

from rankscope.errors import MissingExtraError
from rankscope.i18n import N_, _

__all__ = ["need", "need_for_reports", "EXTRAS", "FEATURES", "FORMATS"]

#: module -> the extra that installs it
EXTRAS: dict[str, str] = {"jinja2": "report", "matplotlib": "report", "pandas": "pandas"}
#: the features that need an extra, as an error names them
FEATURES: dict[str, str] = {"html_report": N_("the HTML report"), "plots": N_("plots"),
                            "dataframe": N_("a DataFrame"), "feature": N_("this feature")}
#: report file extension -> format (``rankscope.report.write_report``; HTML needs the ``report`` extra)
FORMATS: dict[str, str] = {".json": "json", ".md": "markdown", ".markdown": "markdown", ".tex": "latex",
                           ".html": "html", ".htm": "html"}


def need(module: str, what: str | None = None) -> ModuleType:
    """``module`` imported, or a :class:`~rankscope.errors.MissingExtraError` naming the extra that installs it
    (``what``: the feature that needs it, a key of :data:`FEATURES`: ``html_report``, ``plots`` ...)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        extra = EXTRAS.get(module.split(".")[0], module)
        feature = _(FEATURES[what or "feature"])
        raise MissingExtraError(_("{what} needs {module}: pip install 'rankscope[{extra}]'", what=feature,
                                  module=module, extra=extra)) from None


def need_for_reports(paths: Iterable[str | Path] | None) -> None:
    """Check, before any work, that every report of ``paths`` can be written: its format is known (by the
    extension) and the extras it needs are installed (HTML: jinja2 and matplotlib)."""
    from rankscope.errors import InvalidParameterError, Items

    for path in paths or ():
        fmt = FORMATS.get(Path(path).suffix.lower())
        if fmt is None:
            raise InvalidParameterError(_("cannot tell the report format from {path!r}; use one of the extensions "
                                          "{extensions}", path=str(path), extensions=Items(tuple(FORMATS))))
        if fmt == "html":
            need("jinja2", "html_report")
            need("matplotlib", "html_report")
