"""The monitor pages in a real headless Chromium (en and zh): a canary that alerted and recovered, a traffic monitor
with two retriever versions; screenshots go to $RANKSCOPE_SCREENSHOTS/rankscope-shots for a person to look at."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from .live_server import LiveServer
from .monitor_helpers import SwitchRetriever, canary_testset, wait_for
from .test_browser import _shot, _text, _until, browser  # noqa: F401  (the fixture)


def _traffic_events(t0: float) -> str:
    lines = []
    for w in range(6):
        for i in range(80):
            version = "v1" if w < 3 or i % 2 else "v2"
            empty = version == "v2" and i % 5 == 0
            shift = (i % 7) * 0.5 + (3 if version == "v2" else 0)
            results = [] if empty else [{"id": f"d{(i + k) % 50}", "score": 10.0 - k + shift} for k in range(5)]
            lines.append(json.dumps({"time": t0 + 60 * w + i * 0.7, "query": f"query {i % 40}", "retriever": version,
                                     "latency_ms": 20.0 + (i % 30) * (2 if version == "v2" else 1),
                                     "results": results}))
    return "\n".join(lines)


@pytest.mark.slow
def test_monitor_pages(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    with SwitchRetriever() as retriever, LiveServer(f"sqlite:///{tmp_path / 's.sqlite3'}",
                                                    monitor_poll_seconds=0.1) as server:
        base = server.url
        body = json.dumps(canary_testset(40))
        ts = httpx.post(f"{base}/api/v1/testsets", files={"file": ("c.json", body)}, data={"format": "json"}).json()
        canary = httpx.post(f"{base}/api/v1/monitors", json={
            "name": "search canary", "kind": "canary", "test_set_id": ts["id"], "retriever_url": retriever.url,
            "metrics": ["ndcg@10", "hit_rate@1"], "schedule": {"every_seconds": 1},
            "rules": ["drop ndcg@10 0.1", "production:good"]}).json()["id"]

        def done() -> int:
            return sum(r["status"] == "done" for r in httpx.get(f"{base}/api/v1/monitors/{canary}/rounds").json())

        wait_for("three rounds", lambda: done() >= 3)
        retriever.mode = "bad"
        wait_for("the alert", lambda: httpx.get(f"{base}/api/v1/monitors/{canary}").json()["alerts"])
        n = done()
        wait_for("more bad rounds", lambda: done() >= n + 2)
        retriever.mode = "good"
        wait_for("the recovery", lambda: not [a for a in httpx.get(f"{base}/api/v1/monitors/{canary}").json()
                                              ["alerts"] if a["rule"].startswith("drop")], timeout=90)
        n = done()
        wait_for("good rounds again", lambda: done() >= n + 2)
        traffic = httpx.post(f"{base}/api/v1/monitors", json={"name": "prod search", "kind": "traffic",
                                                              "window_seconds": 60, "rules": ["empty_rate <= 0.1"]}
                             ).json()["id"]
        t0 = (time.time() // 60 - 8) * 60
        httpx.post(f"{base}/api/v1/monitors/{traffic}/events", content=_traffic_events(t0).encode())
        httpx.post(f"{base}/api/v1/monitors/{traffic}/events", content=b'{"query": "x", "reslts": []}\n')
        wait_for("closed windows", lambda: sum(w["closed"] for w in httpx.get(
            f"{base}/api/v1/monitors/{traffic}/windows").json()) >= 8)

        browser.get(f"{base}/monitors?lang=en")
        _until(browser, "the list", lambda d: "search canary" in _text(d, "monitors"))
        _shot(browser, "monitors-list-en")
        browser.get(f"{base}/monitors/{canary}")
        _until(browser, "the charts", lambda d: d.find_elements(By.CSS_SELECTOR, "#chart-ndcg\\@10 polygon.band"))
        assert browser.find_elements(By.CSS_SELECTOR, "#chart-ndcg\\@10 line.mark-open")
        assert browser.find_elements(By.CSS_SELECTOR, "#chart-ndcg\\@10 line.mark-clear")
        rounds = _text(browser, "rounds")
        assert "done" in rounds and "the baseline (the first round)" in rounds and "opened" in rounds
        history = _text(browser, "alert-history")
        assert "ndcg@10 drops against the baseline by more than 0.1" in history
        _shot(browser, "monitor-canary-en")
        first = browser.find_element(By.CSS_SELECTOR, "#rounds tbody tr td a")
        first.click()
        _until(browser, "the round's evaluation", lambda d: d.find_elements(By.ID, "per-query"))
        browser.get(f"{base}/monitors/{traffic}?lang=zh")
        _until(browser, "the zh page", lambda d: "时间窗" in d.page_source)
        page = browser.page_source
        assert "检索器版本" in page and "空结果率" in page and "被拒绝的事件" in page
        assert browser.find_elements(By.CSS_SELECTOR, "#chart-empty_rate polyline")
        _shot(browser, "monitor-traffic-zh")
        browser.find_element(By.CSS_SELECTOR, "#windows tbody tr td a").click()
        _until(browser, "the window page", lambda d: d.find_elements(By.ID, "events"))
        _shot(browser, "monitor-window-zh")
        browser.get(f"{base}/monitors/{canary}?lang=zh")
        _until(browser, "the zh canary", lambda d: "轮次" in d.page_source)
        _shot(browser, "monitor-canary-zh")
