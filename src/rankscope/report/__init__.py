"""Reports of a comparison: terminal (rich), JSON, Markdown, LaTeX and self-contained HTML.

:func:`write_report` picks the format from the file extension; every format is
rendered from the same content dict (:func:`~rankscope.report.content.build_report`).
Heavy libraries (rich, jinja2, matplotlib) are imported only when a format needs them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankscope.errors import InvalidParameterError
from rankscope.report.content import REPORT_SCHEMA_VERSION, build_report

if TYPE_CHECKING:
    from rankscope.comparison import Comparison

__all__ = ["write_report", "render_report", "build_report", "REPORT_SCHEMA_VERSION", "FORMATS"]

FORMATS: dict[str, str] = {".json": "json", ".md": "markdown", ".markdown": "markdown", ".tex": "latex",
                           ".html": "html", ".htm": "html"}


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
    raise InvalidParameterError(f"unknown report format {fmt!r}; known: json, markdown, latex, html")


def write_report(
    comparison: Comparison,
    path: str | Path,
    lang: str = "en",
    *,
    qrels: Any = None,
    runs: Any = None,
    scenario: str | None = None,
    kmax: int = 100,
) -> Path:
    """Write the report of ``comparison`` to ``path``; the format follows the extension.

    ``.html`` (self-contained, with plots), ``.md``, ``.json`` (everything, with
    ``schema_version``), ``.tex`` (booktabs tables).  ``lang`` is ``en`` or ``zh``.
    Pass the ``qrels`` and ``runs`` the comparison was computed from to get exact
    first-relevant ranks and the metric@k curves (k = 1..``kmax``) of the HTML/JSON reports.
    Returns the path written.
    """
    out = Path(path)
    fmt = FORMATS.get(out.suffix.lower())
    if fmt is None:
        raise InvalidParameterError(
            f"cannot tell the report format from {str(path)!r}; use one of the extensions {', '.join(FORMATS)}"
        )
    needs_curves = fmt in ("html", "json")
    report = build_report(comparison, qrels=qrels, runs=runs, lang=lang, scenario=scenario, kmax=kmax,
                          curves=needs_curves)
    text = render_report(report, fmt)
    if out.parent and not out.parent.exists():
        raise InvalidParameterError(f"cannot write the report: folder {str(out.parent)!r} does not exist")
    out.write_text(text, encoding="utf-8")
    return out
