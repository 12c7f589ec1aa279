"""The dashboard in a real headless Chromium: upload a test set and a run through the UI, see the results.

Screenshots go to $RANKSCOPE_SCREENSHOTS (default: a temp dir) for a human to look at.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from .conftest import RUN_A, TESTSET
from .live_server import LiveServer

CHROMEDRIVER = "/usr/bin/chromedriver"


@pytest.fixture
def browser(tmp_path: Path) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None or not Path(CHROMEDRIVER).exists():
        pytest.fail("chromium + chromium-driver are needed (Debian packages; `make system-deps` installs them)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                 "--window-size=1280,1600", f"--user-data-dir={tmp_path / 'profile'}", "--lang=en-US"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _shot(driver: Any, name: str) -> None:
    folder = Path(os.environ.get("RANKSCOPE_SCREENSHOTS") or tempfile.gettempdir()) / "rankscope-shots"
    folder.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(folder / f"{name}.png"))


def test_upload_evaluate_and_drill_down(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import Select, WebDriverWait

    ts_file = tmp_path / "toy.json"
    ts_file.write_text(json.dumps(TESTSET))
    run_file = tmp_path / "bm25.trec"
    run_file.write_text(RUN_A)
    dense_file = tmp_path / "dense.json"
    dense_file.write_text(json.dumps({"q1": ["d2", "d1"], "q2": ["d3"], "q3": ["d4"]}))
    wait = WebDriverWait(browser, 30)
    with LiveServer(f"sqlite:///{tmp_path / 'ui.sqlite3'}") as server:
        browser.get(f"{server.url}/testsets?lang=en")
        browser.find_element(By.ID, "testset-file").send_keys(str(ts_file))
        browser.find_element(By.ID, "testset-name").send_keys("toy set")
        browser.find_element(By.ID, "testset-submit").click()
        wait.until(ec.presence_of_element_located((By.ID, "run-form")))
        assert "toy set" in browser.find_element(By.TAG_NAME, "h1").text

        for path, fmt, name in ((run_file, "trec", "bm25"), (dense_file, "ranked", "dense")):
            browser.find_element(By.ID, "run-file").send_keys(str(path))
            Select(browser.find_element(By.ID, "run-format")).select_by_value(fmt)
            browser.find_element(By.ID, "run-name").send_keys(name)
            browser.find_element(By.ID, "run-submit").click()
            try:
                wait.until(lambda d, n=name: n in d.find_element(By.ID, "runs").text)
            except Exception:
                _shot(browser, f"failed-upload-{name}")
                raise AssertionError(f"run {name} not listed; page: {browser.page_source[:3000]}") from None
        _shot(browser, "1-testset")

        metrics = browser.find_element(By.ID, "metrics")
        metrics.clear()
        metrics.send_keys("ndcg@10 P@2 mrr recall@10")
        browser.find_element(By.ID, "evaluate-submit").click()
        wait.until(ec.presence_of_element_located((By.ID, "metrics-table")))
        table = browser.find_element(By.ID, "metrics-table").text
        assert "bm25" in table and "dense" in table and "ndcg@10" in table
        assert "1.0000" in table  # dense: recall@10 of every query is 1
        assert browser.find_elements(By.CSS_SELECTOR, "td.band-excellent, td.band-good, td.band-fair, td.band-poor")
        assert browser.find_elements(By.CSS_SELECTOR, ".chart svg rect")
        _shot(browser, "2-evaluation")

        browser.find_element(By.LINK_TEXT, "q1").click()
        wait.until(ec.presence_of_element_located((By.ID, "relevant")))
        assert browser.find_element(By.ID, "query-text").text == "what is bm25"
        relevant = browser.find_element(By.ID, "relevant").text
        assert "d1" in relevant and "d2" in relevant
        assert "BM25 is a ranking function" in browser.page_source  # text snippets shown
        _shot(browser, "3-query")

        browser.find_element(By.ID, "lang-switch").click()
        wait.until(lambda d: "查询" in d.find_element(By.TAG_NAME, "h1").text)
        _shot(browser, "4-query-zh")
        browser.get(f"{server.url}/evaluations")
        assert "已完成" in browser.find_element(By.ID, "evaluations").text  # the language choice sticks

        browser.get(f"{server.url}/compare?lang=en&test_set_id=1&run_ids=1&run_ids=2&baseline=1&metrics=mrr+ndcg@10")
        pairs = browser.find_element(By.ID, "compare-pairs").text
        assert "bm25" in pairs and "dense" in pairs and "+0.5000" in pairs  # mrr: 0.5 -> 1.0
        _shot(browser, "5-compare")
        logs = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
        assert not logs, logs
