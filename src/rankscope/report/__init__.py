"""Reports of a comparison or of one run: terminal (rich), JSON, Markdown, LaTeX and self-contained HTML.

:func:`write_report` picks the format from the file extension; every format is
rendered from the same content dict (:func:`~rankscope.report.content.build_report`).
Heavy libraries (rich, jinja2, matplotlib) are imported only when a format needs them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankscope.errors import InvalidParameterError, Items
from rankscope.extras import FORMATS
from rankscope.i18n import _
from rankscope.report.content import REPORT_SCHEMA_VERSION, build_report

if TYPE_CHECKING:
    from rankscope.comparison import Comparison
    from rankscope.engine.result import EvaluationResult

__all__ = ["write_report", "render_report", "build_report", "REPORT_SCHEMA_VERSION", "FORMATS"]



def render_report(report: dict[str, Any], fmt: str) -> str:
    """Render a report dict as ``json``, ``markdown``, ``latex`` or ``html`` text."""
    if fmt == "json":
        from rankscope.report.json_report import render_json

        return render_json(report)
    if fmt == "markdown":
        from rankscope.report.markdown import render_markdown

        return render_markdown(report)
    if fmt == "latex":
        from rankscope.report.latex import render_latex

        return render_latex(report)
    if fmt == "html":
        from rankscope.report.html import render_html

        return render_html(report)
    raise InvalidParameterError(_("unknown report format {fmt!r}; known: json, markdown, latex, html", fmt=fmt))


def write_report(
    comparison: Comparison | EvaluationResult,
    path: str | Path,
    lang: str = "en",
    *,
    qrels: Any = None,
    runs: Any = None,
    scenario: str | None = None,
    kmax: int = 100,
) -> Path:
    """Write the report of a comparison, or of one run's :class:`~rankscope.engine.EvaluationResult`, to ``path``.

    The format follows the extension: ``.html`` (self-contained, with plots), ``.md``,
    ``.json`` (everything, with ``schema_version``), ``.tex`` (booktabs tables).  ``lang`` is
    ``en`` or ``zh``; ``scenario`` (``faq``, ``document_qa``, ...) adds its recommended metrics
    and benchmark figures.  Pass the ``qrels`` and ``runs`` the result was computed from (for one
    run: the run, or ``{name: run}``) to get exact first-relevant ranks and the metric@k curves
    (k = 1..``kmax``) of the HTML/JSON reports.  Returns the path written.
    """
    from rankscope.engine.result import EvaluationResult

    out = Path(path)
    fmt = FORMATS.get(out.suffix.lower())
    if fmt is None:
        raise InvalidParameterError(_("cannot tell the report format from {path!r}; use one of the "
                                             "extensions {extensions}", path=str(path),
                                             extensions=Items(tuple(FORMATS))))
    needs_curves = fmt in ("html", "json")
    if isinstance(comparison, EvaluationResult):
        from rankscope.report.run_render import render_run_report
        from rankscope.report.run_report import build_run_report

        run = _one_run(runs, comparison.run_name)
        rep = build_run_report(comparison, qrels=qrels, run=run, lang=lang, scenario=scenario, kmax=kmax,
                               curves=needs_curves)
        text = render_run_report(rep, fmt)
    elif hasattr(comparison, "pairs") and hasattr(comparison, "systems"):
        report = build_report(comparison, qrels=qrels, runs=runs, lang=lang, scenario=scenario, kmax=kmax,
                              curves=needs_curves)
        text = render_report(report, fmt)
    else:
        raise InvalidParameterError(_("write_report takes a Comparison (rankscope.compare) or an EvaluationResult "
                                      "(rankscope.evaluate), got {type}", type=type(comparison).__name__))
    if out.parent and not out.parent.exists():
        raise InvalidParameterError(_("cannot write the report: folder {folder!r} does not exist",
                                             folder=str(out.parent)))
    out.write_text(text, encoding="utf-8")
    return out


def _one_run(runs: Any, name: str) -> Any:
    """The run of a one-run report: ``runs`` itself, or its entry ``name`` in a dict / a one-item list."""
    if runs is None or not isinstance(runs, (dict, list, tuple)):
        return runs
    if isinstance(runs, dict):
        if name in runs:
            return runs[name]
        if len(runs) == 1:
            return next(iter(runs.values()))
        held = Items(tuple(map(str, runs)))
        raise InvalidParameterError(_("runs holds no run named {name!r} (it holds: {held})", name=name, held=held))
    if len(runs) == 1:
        return runs[0]
    raise InvalidParameterError(_("a one-run report takes one run, got {n}", n=len(runs)))
