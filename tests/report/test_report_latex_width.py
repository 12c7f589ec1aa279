"""The LaTeX tables fit a one-column page: their width computed from Computer Modern metrics.

No TeX engine is installed by ``make test`` (texlive-latex-base pulls texlive-base and
texlive-binaries: about 33 MB to download and 105 MB installed, plus booktabs from
texlive-latex-recommended, and format generation), so the width of every table is
computed from the advance widths of cmr10 instead; the widths file is checked here
against the font matplotlib ships.
"""

from __future__ import annotations

import json
import os
from importlib import resources

import pytest

from conftest import DATA, require
from rankscope import compare
from rankscope.io import read_qrels, read_run
from rankscope.report.content import build_report
from rankscope.report.latex import latex_tables, render_latex
from rankscope.report.latex_width import LINE_WIDTH, text_width

PASSAGE = DATA / "runs_dl_hard" / "dataset"
RUNS = ("bm25", "bm25+rm3", "bm25+t5(zs)", "bm25+bert(zs)", "bm25+rm3+t5(zs)", "bm25+rm3+bert(zs)")


def test_width_table_is_the_fonts() -> None:
    import matplotlib
    from matplotlib import ft2font

    font = ft2font.FT2Font(os.path.join(matplotlib.get_data_path(), "fonts", "ttf", "cmr10.ttf"))
    font.set_size(10, 72)
    stored = json.loads(resources.files("rankscope.report").joinpath("cmr10_widths.json").read_text())["cmr10"]
    for ch, width in stored.items():
        assert font.load_char(ord(ch)).linearHoriAdvance / 65536 == pytest.approx(width, abs=1e-3), ch
    # TeX's own figures for cmr10: digits are 5 pt, "M" 9.17 pt
    assert text_width("0123456789") == pytest.approx(50.0, abs=0.01)
    assert text_width("M") == pytest.approx(9.16, abs=0.01)


@pytest.fixture(scope="module")
def dlhard_report() -> dict:
    qrels = read_qrels(require(PASSAGE / "dl_hard-passage.qrels"))
    runs = {n: read_run(require(PASSAGE / "baselines" / "passage" / f"{n}.run")) for n in RUNS}
    c = compare(qrels, runs, ["ndcg@10", "map", "recall@100", "recall@5", "P@5", "mrr"], relevance_level=2,
                test="randomization", correction="bh", bootstrap=50)
    return build_report(c, curves=False)


def test_tables_of_six_runs_and_six_metrics_fit_one_column(dlhard_report: dict) -> None:
    tables = latex_tables(dlhard_report)
    assert [t.label for t in tables] == ["summary", "pairs"]
    for t in tables:
        assert t.size is not None, t.label  # fits without scaling the table down
        assert t.width <= LINE_WIDTH, (t.label, t.width)
    text = render_latex(dlhard_report)
    assert text.count(r"\begin{table}") == 2 and r"\resizebox" not in text


def test_the_old_layout_overflowed(dlhard_report: dict) -> None:
    """The former pairs table (one row per pair and metric, 8 columns at 10 pt, tabcolsep 6 pt) was far too wide."""
    pairs = dlhard_report["comparison"]["pairs"]
    names = dlhard_report["display_names"]
    cols = [
        max(text_width(f"{p['b']} vs {p['a']}") for p in pairs), max(text_width(names[m]) for m in names),
        text_width("Difference"), text_width("[+0.000, +0.000]"), text_width("Relative change"),
        text_width("adjusted p"), text_width("Cohen's d"), text_width("50/50/50"),
    ]
    assert sum(cols) + 12 * len(cols) > LINE_WIDTH + 150


def test_a_table_too_wide_at_scriptsize_is_scaled_to_the_line(dlhard_report: dict) -> None:
    report = dict(dlhard_report)
    long = "a-very-long-run-name-" * 8
    report["systems"] = [long, *report["systems"][1:]]
    report["comparison"] = dict(report["comparison"], means={long: report["comparison"]["means"]["bm25"],
                                                             **report["comparison"]["means"]})
    for key in ("significance", "ratings"):
        report[key] = {long: report[key]["bm25"], **report[key]}
    report["leaders"] = {m: [long if s == "bm25" else s for s in v] for m, v in report["leaders"].items()}
    summary = latex_tables(report)[0]
    assert summary.size is None and summary.width == LINE_WIDTH
    assert r"\resizebox{\linewidth}{!}{%" in summary.lines
