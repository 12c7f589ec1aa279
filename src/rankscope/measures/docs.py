"""The metric reference (docs/metrics.md), generated from the registry.

Every built-in metric appears with its three spellings (rankscope,
ir_measures, trec_eval), parameters, cutoff rule, bounds and aggregation; each
family's module documentation gives the formula and how ties, cutoffs and
queries without relevant documents are handled, with a worked example.
``python scripts/gen_metrics_doc.py`` rewrites the file; a test checks that the
committed copy is current.

>>> "`ndcg_cut_k`" in metrics_markdown()
True
"""

from __future__ import annotations

import inspect
import sys

from rankscope.measures.base import MeasureSpec
from rankscope.measures.registry import _BUILTIN_MODULES, all_specs

__all__ = ["metrics_markdown"]

HEADER = """# Metric reference

Generated from the metric registry by `python scripts/gen_metrics_doc.py`; do not edit by hand.

Every metric has up to three spellings that parse to the same measure: the rankscope name
(`ndcg@10`, `precision(rel=2)@5`), the ir_measures name (`nDCG@10`, `P(rel=2)@5`) and the trec_eval
name (`ndcg_cut_10`, `P_5`, parameter lists such as `P.5,10` or `ndcg.1=3,2=9`).  Names are
case-insensitive.  Unless a family says otherwise: a document is relevant when its grade is at least
the relevance level (`rel`, default 1, trec_eval `-l`), unjudged documents are non-relevant, rankings
are ordered by score descending with ties broken by document id descending (trec_eval's order), and
the summary over queries is the arithmetic mean.  `rankscope trec_eval` reproduces trec_eval 9.0.8's
output byte for byte (see docs/trec_eval.md).
"""


def _spellings(spec: MeasureSpec) -> str:
    """The trec_eval spellings of a family: ``P_k``, ``P.k,…`` (and what ``P`` alone means)."""
    out = []
    for form in spec.trec:
        n = form.name
        if form.syntax == "none":
            out.append(f"`{n}`")
        elif form.syntax in ("cutoffs", "values"):
            x = "k" if form.syntax == "cutoffs" else "x"
            alone = ",".join(f"{d:g}" for d in form.default)
            out.append(f"`{n}_{x}` `{n}.{x},…` (`{n}`: {alone})")
        else:
            out.append(f"`{n}` `{n}.{','.join(form.params)}`")
    return " ".join(out) or "—"


def _row(spec: MeasureSpec) -> str:
    name = f"`{spec.name}`"
    if spec.cutoff == "required":
        name = f"`{spec.name}@k`"
    elif spec.cutoff == "optional":
        name = f"`{spec.name}`, `{spec.name}@k`"
    params = ", ".join(f"`{p.name}`={'level' if p.default is None else repr(p.default)}" for p in spec.params) or "—"
    if spec.at_param:
        params += f" (`@x` sets `{spec.at_param}`)"
    bounds = "—" if spec.bounds is None else f"[{spec.bounds[0]:g}, {spec.bounds[1]:g}]"
    ir = f"`{spec.ir_measures}`" if spec.ir_measures else "—"
    aliases = ", ".join(f"`{a}`" for a in spec.aliases) or "—"
    return (f"| {name} | {ir} | {_spellings(spec)} | {aliases} | {params} | {bounds} | {spec.aggregate} "
            f"| {spec.summary} |")


def _doc_markdown(doc: str) -> list[str]:
    """A module docstring as Markdown: doctest blocks fenced as ``pycon``."""
    out: list[str] = []
    in_code = False
    for line in inspect.cleandoc(doc).splitlines():
        is_code = line.startswith(">>>") or line.startswith("...") or (in_code and line.strip() != "")
        if is_code and not in_code:
            out.append("```pycon")
        elif not is_code and in_code:
            out.append("```")
        in_code = is_code
        out.append(line)
    if in_code:
        out.append("```")
    return out


def metrics_markdown() -> str:
    """The whole reference as Markdown (built-in metrics only, in the registry's module order)."""
    lines = [HEADER]
    by_doc: dict[str, list[MeasureSpec]] = {}
    specs = [s for s in all_specs() if s.builtin]
    # canonical order: the registry's module list (import order may differ between processes)
    rank = {mod: i for i, mod in enumerate(_BUILTIN_MODULES)}
    specs.sort(key=lambda s: rank.get(s.kernel.__module__, len(rank)))
    for spec in specs:
        if spec.builtin:
            by_doc.setdefault(spec.doc, []).append(spec)
    for doc, specs in by_doc.items():
        title = ", ".join(s.name for s in specs)
        lines += ["", f"## {title}", ""]
        lines += ["| rankscope | ir_measures | trec_eval | aliases | parameters | bounds | summary over queries "
                  "| what it measures |", "|---|---|---|---|---|---|---|---|"]
        lines += [_row(s) for s in specs]
        lines += ["", *_doc_markdown(doc)]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":  # pragma: no cover - used by scripts/gen_metrics_doc.py
    sys.stdout.write(metrics_markdown())
