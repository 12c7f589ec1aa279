"""The report's plots, drawn with matplotlib (imported lazily) as figures and as SVG text.

Each ``*_figure`` function takes the report dict of :func:`~rankscope.report.content.build_report`
(or of :func:`~rankscope.report.run_report.build_run_report`) and returns a matplotlib
``Figure`` on its own Agg canvas (no pyplot, so a notebook shows it once and no backend is
switched), or ``None`` when the data for that plot is absent; ``*_svg`` returns the same
figure as an SVG document (``str``).  ``rankscope.plot(result)`` and ``rankscope.plot(comparison)`` return
these figures.  Text stays text in the SVG (``svg.fonttype = none``) and the output is
deterministic (fixed hash salt, no date metadata).  Axis labels follow the report language;
layout uses a CJK font (WenQuanYi Micro Hei / Noto CJK) when one is installed, and the browser
draws the glyphs, since text stays text.
"""

from __future__ import annotations

import functools
import io
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from rankscope.i18n import _, gettext, pgettext

__all__ = ["curves_svg", "distribution_svg", "differences_svg", "first_rank_svg", "context_recall_svg", "all_plots",
           "FIGURES"]

_COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac")
_MAX_DOTS = 400  # above this many queries the distribution plot shows boxes and means only


@contextmanager
def _style() -> Iterator[None]:
    """The plots' matplotlib settings (text stays text in SVG, fixed hash salt, CJK font fallback)."""
    from rankscope.extras import need

    matplotlib = need("matplotlib", "plots")

    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "rankscope", "font.size": 9,
                                "font.sans-serif": _sans_fonts(),
                                "axes.spines.top": False, "axes.spines.right": False}):
        yield


@contextmanager
def _figure(width: float, height: float, ncols: int = 1) -> Iterator[tuple[Any, Any]]:
    """A new figure and its row of axes, drawn in the plots' style."""
    with _style():
        yield _new_figure(width, height, ncols)


def _new_figure(width: float, height: float, ncols: int = 1) -> tuple[Any, Any]:
    """A figure on its own Agg canvas (no pyplot: nothing is shown twice in a notebook, no backend is switched) that a
    notebook shows as an image (:func:`_shown_figure`)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = _shown_figure()(figsize=(width, height))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, ncols, squeeze=False)
    return fig, axes[0]


@functools.cache
def _shown_figure() -> type:
    """matplotlib's ``Figure`` that shows itself as a PNG in a notebook.

    Jupyter draws a ``Figure`` only once matplotlib-inline's formatter is registered, which happens when pyplot is
    imported (or ``%matplotlib inline`` is typed): the plots never import pyplot, so without this a kernel printed
    ``<Figure size 400x320 with 1 Axes>``.  When the formatter is registered it is used (it is found by type first),
    otherwise ``_repr_png_``: one image either way.
    """
    from matplotlib.figure import Figure

    class ShownFigure(Figure):  # type: ignore[misc]
        def _repr_png_(self) -> bytes:
            buf = io.BytesIO()
            self.savefig(buf, format="png", bbox_inches="tight")
            return buf.getvalue()

    ShownFigure.__module__, ShownFigure.__qualname__ = __name__, "ShownFigure"
    return ShownFigure


def __getattr__(name: str) -> Any:
    """``ShownFigure`` (made on first use: matplotlib is imported lazily), so that a figure can be pickled."""
    if name == "ShownFigure":
        return _shown_figure()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_CJK_FONTS = ("WenQuanYi Micro Hei", "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC")


def _sans_fonts() -> list[str]:
    """DejaVu Sans first, then any installed CJK font as a per-glyph fallback (matplotlib >= 3.6)."""
    from matplotlib import font_manager

    names = {f.name for f in font_manager.fontManager.ttflist}
    return ["DejaVu Sans", *(f for f in _CJK_FONTS if f in names)]


def _svg(fig: Any) -> str | None:
    if fig is None:
        return None
    buf = io.StringIO()
    with _style(), warnings.catch_warnings():
        # text stays text (svg.fonttype none): the browser draws glyphs matplotlib's font lacks (CJK run names)
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _done(fig: Any) -> Any:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        fig.tight_layout()
    return fig


def _color(i: int) -> str:
    return _COLORS[i % len(_COLORS)]


def curves_figure(report: dict[str, Any]) -> Any:
    """Mean ndcg@k, recall@k and precision@k against k, one line per system."""
    curves = report.get("curves")
    if not curves:
        return None
    ks = curves["ks"]
    metrics = list(next(iter(curves["systems"].values())))
    with _figure(3.4 * len(metrics), 3.0, ncols=len(metrics)) as (fig, axes):
        for ax, metric in zip(axes, metrics):
            for i, s in enumerate(report["systems"]):
                ax.plot(ks, curves["systems"][s][metric], color=_color(i), label=s, linewidth=1.6)
            ax.set_title(f"{metric}@k")
            ax.set_xlabel("k")
            ax.set_xscale("log")
            ax.set_xlim(1, ks[-1])
            ax.set_ylim(0, 1.02)
            ax.grid(alpha=0.3)
        axes[0].legend(frameon=False, fontsize=8)
        return _done(fig)


def distribution_figure(report: dict[str, Any]) -> Any:
    """Per-query values of every metric: a box per system, the mean (diamond), the queries as dots (<= 400)."""
    if not report["n_queries"]:
        return None
    metrics = report["metrics"]
    systems = report["systems"]
    ncols = len(metrics)
    rng = np.random.default_rng(0)
    with _figure(max(2.2 * ncols, 4.0), 3.2, ncols=ncols) as (fig, axes):
        for ax, label in zip(axes, metrics):
            data = [np.asarray(report["per_query"][s][label], dtype=float) for s in systems]
            ax.boxplot(data, widths=0.55, showfliers=False, medianprops={"color": "black"})
            for i, d in enumerate(data):
                if len(d) <= _MAX_DOTS:
                    x = i + 1 + rng.uniform(-0.18, 0.18, len(d))
                    ax.scatter(x, d, s=5, alpha=0.35, color=_color(i), linewidths=0)
                ax.scatter([i + 1], [d.mean()], marker="D", s=18, color="black", zorder=3)
            ax.set_xticks(range(1, len(systems) + 1), systems, rotation=30, ha="right")
            ax.set_title(report["display_names"][label])
            ax.grid(axis="y", alpha=0.3)
        return _done(fig)


def differences_figure(report: dict[str, Any]) -> Any:
    """Mean paired difference against the reference system with its unadjusted bootstrap interval.

    A filled marker is significant by the comparison's test after its correction; the bar is
    the unadjusted percentile interval (none from a single query).  The legend says which is
    which, since the two can disagree (a hollow marker on a bar that excludes 0).
    """
    from matplotlib.lines import Line2D

    from rankscope.report.tables import percent

    ref = report["reference"]
    rows = [p for p in report["comparison"]["pairs"] if ref in (p["a"], p["b"])]
    if not rows:
        return None
    items = []
    for p in rows:
        sign = 1.0 if p["a"] == ref else -1.0
        other = p["b"] if p["a"] == ref else p["a"]
        ci = p["diff_ci"]
        lo, hi = (sign * p["diff"],) * 2 if ci is None else sorted((sign * ci[0], sign * ci[1]))
        items.append((f"{report['display_names'][p['metric']]}: {other} − {ref}", sign * p["diff"], lo, hi,
                      p["significant"], report["systems"].index(other)))
    lang = report["lang"]
    with _figure(8.0, 0.45 * len(items) + 1.0) as (fig, axes):
        ax = axes[0]
        y = np.arange(len(items))[::-1]
        for yi, (__, d, lo, hi, sig, si) in zip(y, items):
            # max(0, ...): a constant difference has a zero-width interval that rounding can put a hair off d
            ax.errorbar([d], [yi], xerr=[[max(d - lo, 0.0)], [max(hi - d, 0.0)]], fmt="o", color=_color(si),
                        mfc=_color(si) if sig else "white", capsize=3, linewidth=1.4)
        ax.axvline(0.0, color="grey", linewidth=1, linestyle="--")
        ax.set_yticks(y, [it[0] for it in items])
        ax.set_xlabel(gettext("Difference", lang))
        ax.grid(axis="x", alpha=0.3)
        legend = [
            Line2D([0], [0], color="black", marker="|", linestyle="-", markersize=8,
                   label=_("bar: unadjusted {level} {method} interval", level=percent(report["confidence"]),
                           method=report["ci_method"]).text(lang)),
            Line2D([0], [0], color="black", marker="o", linestyle="", label=gettext("filled: significant after the "
                                                                                    "correction", lang)),
            Line2D([0], [0], color="black", marker="o", mfc="white", linestyle="",
                   label=gettext("hollow: not significant after the correction", lang)),
        ]
        ax.legend(handles=legend, frameon=False, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        return _done(fig)


def first_rank_figure(report: dict[str, Any]) -> Any:
    """Histogram of the rank of the first relevant document, grouped bars per system."""
    fr = report["analysis"]["first_rank"]
    if not fr:
        return None
    systems = [s for s in report["systems"] if s in fr]
    labels = [b["label"] if b["label"] != "none" else pgettext("not found", "none").text(report["lang"])
              for b in fr[systems[0]]["histogram"]]
    width = 0.8 / len(systems)
    x = np.arange(len(labels))
    with _figure(7.0, 3.0) as (fig, axes):
        ax = axes[0]
        for i, s in enumerate(systems):
            counts = [b["count"] for b in fr[s]["histogram"]]
            ax.bar(x + (i - (len(systems) - 1) / 2) * width, counts, width, color=_color(i), label=s)
        ax.set_xticks(x, labels)
        ax.set_xlabel(gettext("Rank of the first relevant document", report["lang"]))
        ax.set_ylabel(pgettext("column", "Queries").text(report["lang"]))
        ax.legend(frameon=False, fontsize=8)
        ax.grid(axis="y", alpha=0.3)
        return _done(fig)


def context_recall_figure(report: dict[str, Any]) -> Any:
    """A chunking comparison's mean span recall@k against mean context size@k (k = 1..depth), one line per chunking."""
    chunking = report.get("chunking")
    if not chunking or not chunking.get("curves"):
        return None
    lang = report["lang"]
    with _figure(5.2, 3.4) as (fig, axes):
        ax = axes[0]
        for i, (name, c) in enumerate(chunking["curves"].items()):
            ax.plot(c["context_size"], c["span_recall"], color=_color(i), marker="o", markersize=3, linewidth=1.6,
                    label=name)
            ax.annotate(f"k={c['k'][-1]}", (c["context_size"][-1], c["span_recall"][-1]), fontsize=7,
                        color=_color(i), xytext=(3, -3), textcoords="offset points")
        ax.set_xlabel(gettext("context size at k (characters)", lang))
        ax.set_ylabel(gettext("span recall@k", lang))
        ax.set_ylim(0, 1.02)
        ax.set_xlim(left=0)
        ax.grid(alpha=0.3)
        ax.legend(frameon=False, fontsize=8)
        return _done(fig)


def curves_svg(report: dict[str, Any]) -> str | None:
    """:func:`curves_figure` as SVG text."""
    return _svg(curves_figure(report))


def distribution_svg(report: dict[str, Any]) -> str | None:
    """:func:`distribution_figure` as SVG text."""
    return _svg(distribution_figure(report))


def differences_svg(report: dict[str, Any]) -> str | None:
    """:func:`differences_figure` as SVG text."""
    return _svg(differences_figure(report))


def first_rank_svg(report: dict[str, Any]) -> str | None:
    """:func:`first_rank_figure` as SVG text."""
    return _svg(first_rank_figure(report))


def context_recall_svg(report: dict[str, Any]) -> str | None:
    """:func:`context_recall_figure` as SVG text."""
    return _svg(context_recall_figure(report))


#: the figure of every plot kind (what ``rankscope.plot(obj, kind=...)`` draws)
FIGURES = {"curves": curves_figure, "distribution": distribution_figure, "differences": differences_figure,
           "first_rank": first_rank_figure, "context_recall": context_recall_figure}


def all_plots(report: dict[str, Any]) -> dict[str, str]:
    """Every plot that has data: ``{name: svg}`` (curves, distribution, differences, first_rank, context_recall)."""
    out = {}
    for key, fn in (("curves", curves_svg), ("distribution", distribution_svg),
                    ("differences", differences_svg), ("first_rank", first_rank_svg),
                    ("context_recall", context_recall_svg)):
        svg = fn(report)
        if svg is not None:
            out[key] = svg
    return out
