"""Clickjacking: no page of the service can be framed by another page; scripts only from the service's files.

Every answer (dashboard pages, API, errors, refusals) carries a Content-Security-Policy with
``frame-ancestors 'none'`` and ``X-Frame-Options: DENY``; the HTML report, which the dashboard shows in
its own frame, is framed by the service only and runs no script.  In a real Chromium a page on another
local port that frames the delete page of a run shows nothing of it, and a click there deletes nothing.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import RUN_A, get_report, make_client, upload_run, upload_testset, wait_job
from .live_server import LiveServer
from .test_browser import _shot, _until, browser  # noqa: F401 - the fixture

PAGES = ("/", "/testsets", "/testsets/{ts}", "/runs/{run}/delete", "/evaluations", "/compare", "/judging",
         "/login", "/no/such/page", "/runs/999999/delete", "/api/v1/health", "/api/v1/testsets", "/docs",
         "/api/v1/openapi.json", "/static/style.css")


def _framing_refused(headers: Any) -> None:
    csp = headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp, csp
    assert "unsafe-inline" not in csp.split("script-src")[1].split(";")[0], csp
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"


def test_every_answer_refuses_to_be_framed(tmp_path: Path) -> None:
    with make_client(f"sqlite:///{tmp_path / 'f.sqlite3'}") as c:
        ts = upload_testset(c)
        run = upload_run(c, ts["id"], RUN_A, "bm25")
        for page in PAGES:
            r = c.get(page.format(ts=ts["id"], run=run["id"]))
            _framing_refused(r.headers)
        # refusals made before any route too: a foreign Host, a cross-site post, an oversized body
        _framing_refused(c.get("/api/v1/testsets", headers={"Host": "evil.example"}).headers)
        _framing_refused(c.post(f"/runs/{run['id']}/delete", headers={"Origin": "http://127.0.0.1:9"}).headers)
        job = c.post("/api/v1/evaluations", json={"test_set_id": ts["id"], "run_ids": [run["id"]],
                                                  "metrics": ["ndcg@10"]}).json()
        assert wait_job(c, job["id"])["status"] == "done"
        report = get_report(c, job["id"], format="html", download="false")
        assert report.status_code == 200
        csp = report.headers["content-security-policy"]
        assert "frame-ancestors 'self'" in csp and "script-src" not in csp and "default-src 'none'" in csp
        assert report.headers["x-frame-options"] == "SAMEORIGIN"


def test_the_api_docs_allow_only_their_own_inline_script(tmp_path: Path) -> None:
    with make_client(f"sqlite:///{tmp_path / 'f.sqlite3'}") as c:
        r = c.get("/docs")
        csp = r.headers["content-security-policy"]
        assert "'sha256-" in csp and "frame-ancestors 'none'" in csp


class _FramingPage(BaseHTTPRequestHandler):
    """A page on another local port that frames the service's delete page of run 1."""

    target = ""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        page = (f'<!doctype html><html><body><iframe id="victim" src="{self.target}/runs/1/delete" '
                'width="800" height="600"></iframe></body></html>').encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)


@pytest.mark.slow
def test_a_page_of_another_port_cannot_frame_the_dashboard(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    with LiveServer(f"sqlite:///{tmp_path / 'x.sqlite3'}") as server:
        r = httpx.post(f"{server.url}/api/v1/testsets", files={"file": ("t.json", _testset())},
                       data={"format": "json"})
        ts = r.json()["id"]
        httpx.post(f"{server.url}/api/v1/runs", files={"file": ("r.trec", RUN_A)},
                   data={"test_set_id": str(ts), "format": "trec"}).raise_for_status()
        handler = type("Framing", (_FramingPage,), {"target": server.url})
        attacker = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        thread = threading.Thread(target=attacker.serve_forever, daemon=True)
        thread.start()
        try:
            browser.get(f"http://127.0.0.1:{attacker.server_address[1]}/")
            frame = browser.find_element(By.ID, "victim")
            browser.switch_to.frame(frame)
            buttons = browser.find_elements(By.CSS_SELECTOR, "form button, form input[type=submit]")
            for b in buttons:  # a blocked frame has nothing to click; if it had, the click must not delete
                b.click()
            browser.switch_to.default_content()
            _shot(browser, "framing-refused")
        finally:
            attacker.shutdown()
            attacker.server_close()
        assert buttons == []
        assert len(httpx.get(f"{server.url}/api/v1/runs").json()) == 1
        # the API docs still work under their policy (Swagger UI's one inline script is allowed by its hash)
        browser.get(f"{server.url}/docs")
        _until(browser, "the API docs", lambda d: d.find_elements(By.CSS_SELECTOR, ".opblock"), timeout=30)


def _testset() -> str:
    import json

    from .conftest import TESTSET

    return json.dumps(TESTSET)
