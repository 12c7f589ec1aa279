"""The dashboard in a real headless Chromium: upload through the UI, evaluate, read, sort, delete; a page of
another origin cannot change anything.

Screenshots go to $RANKSCOPE_SCREENSHOTS (default: the temp dir)/rankscope-shots for a human to look at.
Every wait re-reads the page (a reload in between is expected, not an error).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import RUN_A, TESTSET
from .fake_retriever import FakeRetriever, live_testset
from .live_server import LiveServer

CHROMEDRIVER = "/usr/bin/chromedriver"


def _service(base: Any) -> Any:
    """chromedriver's service reached at 127.0.0.1, not "localhost" (Selenium's default: a host-name lookup)."""
    from selenium.webdriver.common import utils

    class Service(base):  # type: ignore[misc, valid-type]
        @property
        def service_url(self) -> str:
            return f"http://127.0.0.1:{self.port}"

        def is_connectable(self) -> bool:
            return bool(utils.is_connectable(self.port, "127.0.0.1"))

    return Service


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
    driver = webdriver.Chrome(service=_service(Service)(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _shot(driver: Any, name: str) -> None:
    folder = Path(os.environ.get("RANKSCOPE_SCREENSHOTS") or tempfile.gettempdir()) / "rankscope-shots"
    folder.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(folder / f"{name}.png"))


def _until(driver: Any, what: str, cond: Callable[[Any], Any], timeout: float = 30) -> Any:
    """Wait until ``cond(driver)`` is truthy; elements that vanish in a reload count as 'not yet'."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException

    deadline = time.monotonic() + timeout
    while True:
        try:
            value = cond(driver)
            if value:
                return value
        except (NoSuchElementException, StaleElementReferenceException):
            pass
        if time.monotonic() > deadline:
            _shot(driver, f"timeout-{what}")
            raise AssertionError(f"timed out waiting for {what}; page: {driver.page_source[:2000]}")
        time.sleep(0.1)


def _text(driver: Any, element_id: str) -> str:
    from selenium.webdriver.common.by import By

    return str(driver.find_element(By.ID, element_id).text)


def _submit(driver: Any, button_id: str) -> None:
    """Click a submit button and wait until the page it led to has loaded (the old page is gone)."""
    from selenium.webdriver.common.by import By

    old = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.ID, button_id).click()
    _until(driver, f"{button_id} to load a page", lambda d: d.execute_script(
        "return document.readyState") == "complete" and d.find_element(By.TAG_NAME, "html") != old)


def test_upload_evaluate_and_drill_down(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    ts_file = tmp_path / "toy.json"
    ts_file.write_text(json.dumps(TESTSET))
    run_file = tmp_path / "bm25.trec"
    run_file.write_text(RUN_A)
    dense_file = tmp_path / "dense.json"
    dense_file.write_text(json.dumps({"q1": ["d2", "d1"], "q2": ["d3"], "q3": ["d4"]}))
    other_file = tmp_path / "other.trec"
    other_file.write_text("x1 Q0 d1 1 1.0 a\n")
    with LiveServer(f"sqlite:///{tmp_path / 'ui.sqlite3'}") as server:
        browser.get(f"{server.url}/testsets?lang=en")
        browser.find_element(By.ID, "testset-file").send_keys(str(ts_file))
        browser.find_element(By.ID, "testset-name").send_keys("toy set")
        _submit(browser, "testset-submit")
        _until(browser, "the test set page", lambda d: "toy set" in d.find_element(By.TAG_NAME, "h1").text)

        for path, fmt, name in ((run_file, "trec", "bm25"), (dense_file, "ranked", "dense"),
                                (other_file, "trec", "other-ids")):
            browser.find_element(By.ID, "run-file").send_keys(str(path))
            Select(browser.find_element(By.ID, "run-format")).select_by_value(fmt)
            browser.find_element(By.ID, "run-name").send_keys(name)
            _submit(browser, "run-submit")
            _until(browser, f"run {name} listed", lambda d, n=name: n in _text(d, "runs"))
        rows = browser.find_elements(By.CSS_SELECTOR, "#runs tbody tr")
        ticked = {r.find_elements(By.TAG_NAME, "td")[2].text: r.find_element(By.NAME, "run_ids").is_selected()
                  for r in rows}
        assert ticked == {"bm25": True, "dense": True, "other-ids": False}  # a mismatching run is not ticked
        assert "do not match" in _text(browser, "runs")
        _shot(browser, "1-testset")

        metrics = browser.find_element(By.ID, "metrics")
        metrics.clear()
        metrics.send_keys("ndcg@10 P@2 mrr recall@10")
        _submit(browser, "evaluate-submit")
        _until(browser, "the report frame and the significance marks", lambda d: d.find_elements(
            By.ID, "report-frame") and "significantly better than the baseline" in _text(d, "sig-legend"))
        table = _text(browser, "metrics-table")
        assert "bm25" in table and "dense" in table and "ndcg@10" in table and "other-ids" not in table
        assert "1.0000" in table  # dense: recall@10 of every query is 1
        assert browser.find_elements(By.CSS_SELECTOR, "td.band-excellent, td.band-good, td.band-fair, td.band-poor")
        assert browser.find_elements(By.CSS_SELECTOR, ".chart svg rect")
        assert "bm25 vs dense · ndcg@10" in browser.find_element(By.TAG_NAME, "h1").text
        assert "toy set" in _text(browser, "testset-link")
        assert "6 of 6 scores: 3 queries × 2 runs" in _text(browser, "progress")
        assert "significantly better than the baseline" in _text(browser, "sig-legend")
        # the per-query table: every metric of every run, sorted numerically by a click
        head = browser.find_elements(By.CSS_SELECTOR, "#per-query thead th")
        assert len(head) == 1 + 2 * 4
        column = next(i for i, h in enumerate(head) if h.text == "bm25 · ndcg@10")
        head[column].click()

        def values() -> list[str]:
            return [r.find_elements(By.TAG_NAME, "td")[column].text for r in
                    browser.find_elements(By.CSS_SELECTOR, "#per-query tbody tr")]

        _until(browser, "ascending sort", lambda d: values() == sorted(values(), key=lambda v: float(v)))
        head[column].click()
        _until(browser, "descending sort", lambda d: values() == sorted(values(), key=lambda v: -float(v)))
        browser.switch_to.frame(browser.find_element(By.ID, "report-frame"))
        _until(browser, "the report in its frame", lambda d: "Retrieval evaluation report" in d.page_source)
        browser.switch_to.default_content()
        _shot(browser, "2-evaluation")

        browser.find_element(By.LINK_TEXT, "q1").click()
        _until(browser, "the drill-down", lambda d: d.find_elements(By.ID, "relevant"))
        assert _text(browser, "query-text") == "what is bm25"
        relevant = _text(browser, "relevant")
        assert "d1" in relevant and "d2" in relevant
        assert "BM25 is a ranking function" in browser.page_source  # text snippets shown
        _shot(browser, "3-query")

        browser.find_element(By.ID, "lang-switch").click()
        _until(browser, "Chinese", lambda d: "查询" in d.find_element(By.TAG_NAME, "h1").text)
        _shot(browser, "4-query-zh")
        browser.get(f"{server.url}/evaluations")
        _until(browser, "the sticky language", lambda d: "已完成" in _text(d, "evaluations"))
        assert "toy set" in _text(browser, "evaluations")
        _shot(browser, "5-evaluations-zh")

        browser.get(f"{server.url}/compare?lang=en&test_set_id=1&run_ids=1&run_ids=2&baseline=1&metrics=mrr+ndcg@10")
        pairs = _text(browser, "compare-pairs")
        assert "bm25" in pairs and "dense" in pairs and "+0.5000" in pairs  # mrr: 0.5 -> 1.0
        _shot(browser, "6-compare")

        browser.get(f"{server.url}/docs")
        _until(browser, "the OpenAPI UI", lambda d: d.find_elements(By.CSS_SELECTOR, ".opblock-tag"))
        assert "testsets" in browser.page_source
        _shot(browser, "7-docs")

        browser.get(f"{server.url}/runs/3/delete")
        assert "its scores are removed from 0 evaluations" in _text(browser, "delete-card")
        _submit(browser, "delete-confirm")
        _until(browser, "the run gone", lambda d: "other-ids" not in _text(d, "runs"))
        logs = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
        assert not logs, logs


def test_live_job_failures_and_one_run_report(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    with FakeRetriever() as retriever, LiveServer(f"sqlite:///{tmp_path / 'live.sqlite3'}") as server:
        r = httpx.post(f"{server.url}/api/v1/testsets", files={"file": ("live.json", json.dumps(
            live_testset(20, ["broken"])))}, data={"format": "json", "name": "live questions"})
        ts = r.json()
        r = httpx.post(f"{server.url}/api/v1/evaluations/live", json={
            "test_set_id": ts["id"], "retriever_url": retriever.url, "metrics": ["mrr", "P@1"], "retries": 0,
            "name": "fake retriever"})
        job_id = r.json()["id"]
        browser.get(f"{server.url}/evaluations/{job_id}?lang=en")
        _until(browser, "the one-run report", lambda d: d.find_elements(By.ID, "report-frame"))
        assert "20 of 21 queries answered, 1 failed" in _text(browser, "live-summary")
        assert "p50" in _text(browser, "live-latency")
        assert "HTTP 500 Internal Server Error" in _text(browser, "live-errors")
        browser.switch_to.frame(browser.find_element(By.ID, "report-frame"))
        _until(browser, "the report in its frame", lambda d: "Evaluation report: fake retriever" in d.page_source)
        assert "Live retriever" in browser.page_source
        browser.switch_to.default_content()
        _shot(browser, "8-live-evaluation")
        url = f"{server.url}/api/v1/evaluations/{job_id}/report?format=html&download=false&lang=zh"
        # 202 while it is rendered in the background: ask again, as a client following Retry-After would
        _until(browser, "the Chinese report", lambda d: d.get(url) or "评估报告" in d.page_source)
        _shot(browser, "9-live-report-zh")


class _AttackPage(BaseHTTPRequestHandler):
    """A page on another local port whose form posts a test set to the dashboard as soon as it loads."""

    target = ""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        page = f"""<!doctype html><html><body>
<form id="f" method="post" action="{self.target}/testsets" enctype="multipart/form-data">
<input type="hidden" name="format" value="json"><input type="hidden" name="name" value="planted">
<textarea name="file">{json.dumps(TESTSET)}</textarea></form>
<script>document.getElementById("f").submit();</script></body></html>""".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)


def test_a_page_of_another_origin_cannot_change_data(browser: Any, tmp_path: Path) -> None:
    with LiveServer(f"sqlite:///{tmp_path / 'x.sqlite3'}") as server:
        handler = type("Attack", (_AttackPage,), {"target": server.url})
        attacker = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        thread = threading.Thread(target=attacker.serve_forever, daemon=True)
        thread.start()
        try:
            browser.get(f"http://127.0.0.1:{attacker.server_address[1]}/")
            _until(browser, "the forged post to be answered", lambda d: "Origin" in d.page_source, timeout=20)
            _shot(browser, "10-cross-site-refused")
        finally:
            attacker.shutdown()
            attacker.server_close()
        assert httpx.get(f"{server.url}/api/v1/testsets").json() == []
        # DNS rebinding: the same server under another name answers nothing
        r = httpx.get(f"{server.url}/api/v1/testsets", headers={"Host": f"rebind.example:{server.port}"})
        assert r.status_code == 400
