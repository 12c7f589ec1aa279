"""Issue 17 §3: the notebook displays (``_repr_html_``) and a plot, rendered in headless Chromium.

The displays are put in one page as a notebook would show them (each one an output cell),
with the one-run report's HTML beside them; the page must render without console errors,
every table must be visible and fit the width of a notebook, and the plot must decode.
Set ``RANKSCOPE_KEEP_SCREENSHOTS=folder`` to keep the PNGs.
"""

from __future__ import annotations

import base64
import io
import os
import shutil
from html import escape
from pathlib import Path
from typing import Any

import pytest
from report_fixtures import METRICS, shared_comparison, shared_inputs
from test_report_html_browser import browser  # noqa: F401  (the Chromium fixture)

import rankscope as rs
from rankscope import display
from rankscope.data.testset import Query
from rankscope.gate import check


def _cell(title: str, html: str) -> str:
    return f'<section class="cell"><div class="prompt">Out [{escape(title)}]:</div>{html}</section>'


def _page(cells: list[str]) -> str:
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>notebook</title><style>"
            "body{max-width:1100px;margin:16px auto;font-family:sans-serif}.cell{margin:14px 0;padding:6px 10px;"
            "border-left:3px solid #9ab}.prompt{color:#c33;font:12px monospace;margin-bottom:4px}</style></head><body>"
            + "".join(cells) + "</body></html>")


@pytest.fixture(scope="module")
def displays() -> dict[str, str]:
    qrels, runs = shared_inputs()
    result = rs.evaluate(qrels, runs["dense_v2"], METRICS)
    fig = rs.plot(rs.compare(qrels, runs, METRICS), "recall@5")
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=80)
    plot = f'<img alt="plot" src="data:image/png;base64,{base64.b64encode(png.getvalue()).decode()}">'
    ts = rs.TestSet([Query("q1", "what is BM25"), Query("q2", "who wrote it")], {"q1": {"d1": 1}}, name="mini")
    gate = check(qrels, runs["bm25"], ["mrr>=0.5", "recall@5>=0.4"], preset="production:minimum")
    return {
        "result": display.html(result),
        "comparison (baseline)": display.html(shared_comparison()),
        "comparison (all pairs)": display.html(rs.compare(qrels, runs, METRICS)),
        "test set": display.html(ts),
        "gate": display.html(gate),
        "rs.plot(comparison, 'recall@5')": plot,
    }


def test_notebook_displays_render_in_chromium(browser: Any, displays: dict[str, str], tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    page = tmp_path / "notebook.html"
    page.write_text(_page([_cell(k, v) for k, v in displays.items()]), encoding="utf-8")
    browser.set_window_size(1200, 1000)
    browser.get(page.as_uri())
    cells = browser.find_elements(By.CSS_SELECTOR, "section.cell")
    assert len(cells) == len(displays)
    for cell in cells[:-1]:
        table = cell.find_element(By.TAG_NAME, "table")
        assert table.is_displayed() and table.size["height"] > 20
        assert table.size["width"] <= 1100  # fits a notebook's output area
    # the comparison: one table, a row per system, the marks in the cells
    rows = cells[2].find_elements(By.CSS_SELECTOR, "tbody tr")
    assert len(rows) == 3 and rows[2].find_elements(By.TAG_NAME, "sup")
    assert "FAILED" in cells[4].text and "PASS" in cells[4].text
    assert "1 query has no judgment" in cells[3].text
    img = cells[-1].find_element(By.TAG_NAME, "img")
    assert browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth", img) > 100
    assert [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")] == []
    browser.set_window_size(1200, min(int(browser.execute_script("return document.body.scrollHeight")) + 60, 8000))
    shot = tmp_path / "notebook.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 20_000
    keep = os.environ.get("RANKSCOPE_KEEP_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "notebook.png")
        shutil.copy(page, Path(keep) / "notebook.html")


def test_one_run_report_renders_in_chromium(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    qrels, runs = shared_inputs()
    result = rs.evaluate(qrels, runs["bm25"], METRICS)
    path = rs.write_report(result, tmp_path / "bm25.html", qrels=qrels, runs=runs["bm25"], scenario="faq", kmax=20)
    browser.set_window_size(1280, 1000)
    browser.get(path.as_uri())
    for section in ("summary", "standards", "scenario", "plots"):
        assert browser.find_element(By.ID, section).is_displayed(), section
    assert "FAQ matching" in browser.find_element(By.ID, "scenario").text
    assert [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")] == []
    browser.set_window_size(1280, min(int(browser.execute_script("return document.body.scrollHeight")) + 60, 8000))
    shot = tmp_path / "run.png"
    assert browser.save_screenshot(str(shot))
    keep = os.environ.get("RANKSCOPE_KEEP_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "run-report.png")


def test_the_gate_fits_a_notebook_output_area(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """A gate with long details (a non-inferiority test's evidence, an unreachable threshold) wraps its detail column
    inside an 800-pixel output area instead of running past it."""
    from selenium.webdriver.common.by import By

    qrels, runs = shared_inputs()
    gate = check(qrels, runs["bm25"], ["recall@5>=0.9"], preset="production:good", baseline=runs["dense_v2"],
                 max_drops=["ndcg@10=0.02", "mrr=2%"])
    page = tmp_path / "gate.html"
    page.write_text(_page([_cell("gate", display.html(gate))]).replace("max-width:1100px", "max-width:800px"),
                    encoding="utf-8")
    browser.set_window_size(1000, 900)
    browser.get(page.as_uri())
    cell = browser.find_element(By.CSS_SELECTOR, "section.cell")
    table = cell.find_element(By.TAG_NAME, "table")
    right = browser.execute_script("const r = arguments[0].getBoundingClientRect(); return r.right - "
                                   "parseFloat(getComputedStyle(arguments[0]).paddingRight);", cell)
    assert table.rect["x"] + table.rect["width"] <= right + 1, (table.rect, right)
    for td in table.find_elements(By.TAG_NAME, "td"):
        assert browser.execute_script("return arguments[0].scrollWidth <= arguments[0].clientWidth + 1", td), td.text
    assert "one-sided" in table.text
