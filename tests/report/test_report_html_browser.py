"""The HTML report in headless Chromium: it renders, the four plots are present and drawn, no console errors.

Drives the Debian ``chromium`` + ``chromium-driver`` packages (``make system-deps``) with selenium,
pointing the Service at /usr/bin/chromedriver so that selenium-manager never downloads anything.
A screenshot is written to the test's tmp folder.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from report_fixtures import shared_comparison, shared_inputs

from rankscope.report import write_report

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Any:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.fail("chromium and chromedriver are needed: run `make system-deps` (Debian chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tmp_path_factory.mktemp("chromium-profile")
    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                 f"--user-data-dir={profile}", "--window-size=1280,1000"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=opts)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def test_html_renders_offline_with_plots(browser: Any, tmp_path: Path) -> None:
    comparison = shared_comparison()
    inputs = shared_inputs()
    from selenium.webdriver.common.by import By

    qrels, runs = inputs
    path = write_report(comparison, tmp_path / "report.html", qrels=qrels, runs=runs, kmax=30)
    html = path.read_text(encoding="utf-8")
    # self-contained: nothing is loaded from elsewhere
    assert not re.search(r"""(?:src|href)\s*=\s*["'](?:https?:)?//""", html)
    assert "<script" not in html and "@import" not in html

    browser.get(path.resolve().as_uri())
    assert browser.find_element(By.TAG_NAME, "h1").text == "Retrieval evaluation report"
    figures = browser.find_elements(By.CSS_SELECTOR, "figure img")
    assert [f.find_element(By.XPATH, "..").get_attribute("id") for f in figures] == [
        "plot-curves", "plot-distribution", "plot-differences", "plot-first_rank"]
    for img in figures:
        # the image decoded and has a size: the SVG is valid
        assert browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth", img) > 100
        assert img.size["width"] > 100 and img.size["height"] > 100
    summary_rows = browser.find_elements(By.CSS_SELECTOR, "table.summary tbody tr")
    assert [r.find_element(By.TAG_NAME, "td").text.split()[0] for r in summary_rows] == ["bm25", "dense_v2", "hybrid"]
    best = browser.find_elements(By.CSS_SELECTOR, "table.summary td.best")
    assert len(best) == len(comparison.labels)  # hybrid leads every metric in the fixture
    assert browser.find_elements(By.CSS_SELECTOR, "table.summary td.poor")
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []
    browser.set_window_size(1280, min(int(browser.execute_script("return document.body.scrollHeight")) + 50, 8000))
    assert browser.save_screenshot(str(tmp_path / "report.png"))


def test_html_in_chinese_without_browser() -> None:
    comparison = shared_comparison()
    from rankscope.report.content import build_report
    from rankscope.report.html import render_html

    html = render_html(build_report(comparison, lang="zh", curves=False), plots=False)
    assert '<html lang="zh">' in html and "<h1>检索质量评估报告</h1>" in html
    assert "详细分析" in html and "评级" in html and "<figure" not in html


def test_chinese_html_in_the_browser(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    from rankscope.report.content import build_report
    from rankscope.report.html import render_html

    path = tmp_path / "zh.html"
    path.write_text(render_html(build_report(shared_comparison(), lang="zh", curves=False), plots=False),
                    encoding="utf-8")
    browser.get(path.as_uri())
    assert browser.find_element(By.TAG_NAME, "h1").text == "检索质量评估报告"
    items = browser.find_elements(By.CSS_SELECTOR, "#explanations li")
    assert len(items) == 3 * len(shared_comparison().labels)
    assert any("中位数为第" in li.text for li in items)
    assert [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")] == []


def test_missing_query_warning_is_seen_first(browser: Any, tmp_path: Path) -> None:
    """A run that lacks queries: the warning box is at the top of the page, visible, with the counts."""
    import os

    from selenium.webdriver.common.by import By

    from rankscope import Qrels, Run
    from rankscope.comparison import compare

    qrels = Qrels.from_dict({f"q{i:02d}": {f"r{i}": 1, f"n{i}": 0} for i in range(50)})
    full = Run.from_ranked_lists({f"q{i:02d}": ["x", f"r{i}"] for i in range(50)}, name="full")
    partial = Run.from_ranked_lists({f"q{i:02d}": [f"r{i}"] for i in range(30)}, name="T5-P")
    runs = {"full": full, "partial": partial}
    c = compare(qrels, runs, ["mrr", "recall@5", "ndcg@10"], baseline="full", bootstrap=100)
    path = write_report(c, tmp_path / "warn.html", qrels=qrels, runs=runs, kmax=20)
    browser.set_window_size(1280, 1000)
    browser.get(path.resolve().as_uri())
    box = browser.find_element(By.ID, "warnings")
    assert box.is_displayed()
    assert "partial has no ranking for 20 of the 50 qrels queries" in box.text and "scored 0" in box.text
    summary = browser.find_element(By.CSS_SELECTOR, "table.summary")
    assert box.location["y"] < summary.location["y"] < 1000  # seen before the numbers, on the first screen
    assert box.value_of_css_property("border-top-style") == "solid"
    shot = tmp_path / "warning.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    if os.environ.get("RANKSCOPE_KEEP_SCREENSHOTS"):  # to look at the page: copy the PNG out of the tmp folder
        shutil.copy(shot, Path(os.environ["RANKSCOPE_KEEP_SCREENSHOTS"]) / "warning.png")
        browser.set_window_size(1280, min(int(browser.execute_script("return document.body.scrollHeight")) + 50,
                                          8000))
        browser.save_screenshot(str(Path(os.environ["RANKSCOPE_KEEP_SCREENSHOTS"]) / "warning-full.png"))
    assert [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")] == []
