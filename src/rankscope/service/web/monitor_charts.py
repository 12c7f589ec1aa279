"""Time series of a monitor as inline SVG (no script, no external file): a line per series, its interval as a
band, and the rounds or windows where an alert opened (red) or cleared (green) as vertical marks."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

__all__ = ["Series", "svg_chart", "PALETTE"]

PALETTE = ("#2563eb", "#d97706", "#059669", "#7c3aed", "#db2777", "#0891b2")


@dataclass
class Series:
    """Points ``(time, value, lower, upper)`` (``lower`` / ``upper`` None: no band)."""

    name: str
    points: list[tuple[float, Any, Any, Any]] = field(default_factory=list)


def _fmt_time(t: float, span: float) -> str:
    d = dt.datetime.fromtimestamp(t, dt.timezone.utc)
    return d.strftime("%m-%d %H:%M" if span > 86400 else "%H:%M:%S" if span < 600 else "%H:%M")


def _ticks(lo: float, hi: float) -> list[float]:
    if hi <= lo:
        return [lo]
    step = 10 ** math.floor(math.log10((hi - lo) / 4))
    for m in (1, 2, 2.5, 5, 10):
        if (hi - lo) / (step * m) <= 5:
            step *= m
            break
    first = math.ceil(lo / step) * step
    return [round(first + i * step, 10) for i in range(int((hi - first) / step + 1e-9) + 1)]


def svg_chart(series: Sequence[Series], *, title: str, opened: Sequence[float] = (), cleared: Sequence[float] = (),
              y_range: tuple[float, float] | None = None, x_range: tuple[float, float] | None = None,
              width: int = 900, height: int = 230, chart_id: str = "") -> str:
    """The chart as an ``<svg>`` element (see the module docstring); empty series give a chart that says so."""
    left, right, top, bottom = 56, 16, 28, 34
    pts = [p for s in series for p in s.points if p[1] is not None and math.isfinite(p[1])]
    xs = [p[0] for p in pts] + list(opened) + list(cleared)
    ident = f' id="{escape(chart_id)}"' if chart_id else ""
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
           f'aria-label="{escape(title)}" class="series"{ident}>',
           f'<text x="{left}" y="18" font-size="13" font-weight="600" fill="#1f2933">{escape(title)}</text>']
    if not pts:
        out.append(f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle" fill="#6b7785" '
                   'font-size="13">–</text>')
        out.append("</svg>")
        return "".join(out)
    x0, x1 = x_range if x_range is not None else (min(xs), max(xs))
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1
    if y_range is None:
        ys = [p[1] for p in pts] + [v for p in pts for v in (p[2], p[3]) if v is not None and math.isfinite(v)]
        y0, y1 = min(ys), max(ys)
        pad = (y1 - y0) * 0.1 or abs(y1) * 0.1 or 1.0
        y0, y1 = (y0 - pad if y0 - pad >= 0 or y0 < 0 else 0.0), y1 + pad  # a value >= 0 keeps a floor of 0
    else:
        y0, y1 = y_range
    w, h = width - left - right, height - top - bottom

    def X(t: float) -> float:
        return left + (t - x0) / (x1 - x0) * w

    def Y(v: float) -> float:
        return top + (1 - (min(max(v, y0), y1) - y0) / (y1 - y0)) * h

    for tick in _ticks(y0, y1):
        y = Y(tick)
        out.append(f'<line x1="{left}" x2="{left + w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eef1f4"/>'
                   f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11" fill="#6b7785">'
                   f'{tick:g}</text>')
    span = x1 - x0
    for t, anchor in ((x0, "start"), (x1, "end")):
        out.append(f'<text x="{X(t):.1f}" y="{height - 10}" text-anchor="{anchor}" font-size="11" fill="#6b7785">'
                   f'{escape(_fmt_time(t, span))} UTC</text>')
    opened = [t for t in opened if x0 <= t <= x1]
    cleared = [t for t in cleared if x0 <= t <= x1]
    for t in opened:
        out.append(f'<line class="mark-open" x1="{X(t):.1f}" x2="{X(t):.1f}" y1="{top}" y2="{top + h}" '
                   f'stroke="#b42318" stroke-width="2" stroke-dasharray="4 3"/>')
    for t in cleared:
        out.append(f'<line class="mark-clear" x1="{X(t):.1f}" x2="{X(t):.1f}" y1="{top}" y2="{top + h}" '
                   f'stroke="#059669" stroke-width="2" stroke-dasharray="4 3"/>')
    for i, s in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        good = [p for p in s.points if p[1] is not None and math.isfinite(p[1])]
        band = [p for p in good if p[2] is not None and p[3] is not None]
        if len(band) >= 2:
            upper = " ".join(f"{X(p[0]):.1f},{Y(p[3]):.1f}" for p in band)  # type: ignore[arg-type]
            lower = " ".join(f"{X(p[0]):.1f},{Y(p[2]):.1f}" for p in reversed(band))  # type: ignore[arg-type]
            out.append(f'<polygon class="band" points="{upper} {lower}" fill="{color}" fill-opacity="0.15"/>')
        elif len(band) == 1:
            p = band[0]
            out.append(f'<line x1="{X(p[0]):.1f}" x2="{X(p[0]):.1f}" y1="{Y(p[2]):.1f}" '  # type: ignore[arg-type]
                       f'y2="{Y(p[3]):.1f}" stroke="{color}" stroke-opacity="0.4" stroke-width="6"/>')  # type: ignore
        if len(good) >= 2:
            line = " ".join(f"{X(p[0]):.1f},{Y(p[1]):.1f}" for p in good)
            out.append(f'<polyline points="{line}" fill="none" stroke="{color}" stroke-width="2"/>')
        for p in good:
            out.append(f'<circle cx="{X(p[0]):.1f}" cy="{Y(p[1]):.1f}" r="2.8" fill="{color}">'
                       f'<title>{escape(s.name)} {p[1]:.4g}</title></circle>')
        lx = width - right - 110 * (len(series) - i)  # the legend at the right, clear of the title
        out.append(f'<rect x="{lx}" y="9" width="10" height="10" fill="{color}"/>'
                   f'<text x="{lx + 14}" y="18" font-size="12" fill="#1f2933">{escape(s.name[:14])}</text>')
    out.append("</svg>")
    return "".join(out)
