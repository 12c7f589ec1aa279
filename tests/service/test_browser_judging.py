"""People judging in a real headless Chromium: upload a pool through the form, invite two annotators (links), they
judge it with the keyboard (grades, skip, a note, the pre-label shown on request to the one who may see it and
never in the page of the blind one), progress, agreement, export (the not-blind judgment marked so), Chinese.

Screenshots go to $RANKSCOPE_SCREENSHOTS (default: the temp dir)/rankscope-shots (``j*.png``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from .live_server import LiveServer
from .test_browser import _shot, _submit, _text, _until, browser  # noqa: F401  (browser: the fixture)

LONG = "\n\n".join(f"Paragraph {i}: the slipstream behind a propeller carries momentum downstream." for i in range(200))
TESTSET = {
    "queries": [
        {"id": "q1", "text": "螺旋桨滑流如何影响机翼？", "relevant": {"d9": 1}},
        {"id": "q2", "text": "what is boundary layer transition", "relevant": {"d9": 1}},
    ],
    "corpus": {
        "d1": "螺旋桨滑流会增加机翼上的动压，从而提高升力。",
        "d2": "Boundary layers on flat plates.",
        "d3": LONG,
        "d4": "Transition from laminar to turbulent flow in the boundary layer.",
        "d9": "unrelated",
    },
}
POOL = [("q1", "d1"), ("q1", "d2"), ("q1", "d3"), ("q2", "d4")]


def _press(driver: Any, key: str, then: str) -> None:
    """Press a key on the page (not in a field) and wait until ``then`` is in the progress line."""
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(key).perform()
    _until(driver, f"{key!r} to lead to {then!r}", lambda d: then in _text(d, "my-progress"))


def test_two_annotators_judge_a_pool_with_the_keyboard(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps({"query_id": q, "doc_id": d, "best_rank": i + 1}) + "\n"
                            for i, (q, d) in enumerate(POOL)))
    labels = tmp_path / "judged.qrels"
    labels.write_text("q1 0 d1 2\nq1 0 d2 0\n")
    side = tmp_path / "judged.qrels.provenance.jsonl"
    side.write_text("".join(json.dumps({"query_id": "q1", "doc_id": d, "grade": g, "source": "model",
                                        "model": "gpt-4o-mini", "prompt": "umbrela-1/zh"}) + "\n"
                            for d, g in (("d1", 2), ("d2", 0))))
    with LiveServer(f"sqlite:///{tmp_path / 'judging.sqlite3'}") as server:
        r = httpx.post(f"{server.url}/api/v1/testsets", files={"file": ("aero.json", json.dumps(TESTSET))},
                       data={"format": "json", "name": "aero"})
        assert r.status_code == 201, r.text
        browser.get(f"{server.url}/judging?lang=en")
        browser.find_element(By.ID, "pool-file").send_keys(str(pool))
        browser.find_element(By.ID, "judging-name").send_keys("aero pool")
        Select(browser.find_element(By.ID, "judging-testset")).select_by_visible_text("aero (5 Documents)")
        browser.find_element(By.ID, "labels-file").send_keys(str(labels))
        browser.find_element(By.ID, "provenance-file").send_keys(str(side))
        Select(browser.find_element(By.ID, "judging-order")).select_by_value("pool")
        _shot(browser, "j1-upload")
        _submit(browser, "judging-submit")
        _until(browser, "the task page", lambda d: "aero pool" in d.find_element(By.TAG_NAME, "h1").text)
        assert "4 documents to judge over 2 queries; 2 with a pre-label" in _text(browser, "task-counts")
        assert "gpt-4o-mini / umbrela-1/zh" in _text(browser, "task-info")

        # invitations: alice may ask for the pre-labels, bob judges blind
        links = {}
        for who, sees in (("alice", True), ("bob", False)):
            browser.find_element(By.ID, "annotator").send_keys(who)
            if sees:
                browser.find_element(By.ID, "sees-prelabels").click()
            _submit(browser, "invite-submit")
            _until(browser, f"{who}'s link", lambda d, w=who: w in _text(d, "invited"))
            links[who] = browser.find_element(By.ID, "invite-link").get_attribute("value")
        _shot(browser, "j1b-invitations")
        assert "alice (may see the pre-labels), bob (blind)" in _text(browser, "invitations")

        # alice: 3 on d1 (blind); asks for d2's pre-label, then 1; a note and a skip on the long d3; 2 on d4
        browser.get(links["alice"])
        _until(browser, "the judging view", lambda d: d.find_elements(By.ID, "judge-form"))
        assert "judging as alice" in browser.page_source and "token=" not in browser.current_url
        assert _text(browser, "query-text") == "螺旋桨滑流如何影响机翼？"
        assert "螺旋桨滑流会增加机翼上的动压" in _text(browser, "doc-text")
        assert "gpt-4o-mini" not in browser.page_source and not browser.find_elements(By.ID, "prelabel-value")
        _shot(browser, "j2-judge-zh-document")
        _press(browser, "3", "1 judged")
        assert "Boundary layers" in _text(browser, "doc-text")
        ActionChains(browser).send_keys(Keys.ARROW_LEFT).perform()  # back to d1: the grade given is shown
        _until(browser, "d1 again", lambda d: "your judgment so far: 3" in _text(d, "current"))
        assert "chosen" in browser.find_element(By.ID, "grade-3").get_attribute("class")
        ActionChains(browser).send_keys(Keys.ARROW_RIGHT).perform()
        _until(browser, "d2 again", lambda d: "Boundary layers" in _text(d, "doc-text"))
        assert "gpt-4o-mini" not in browser.page_source  # not in the page until asked for
        ActionChains(browser).send_keys("m").perform()
        _until(browser, "the pre-label", lambda d: d.find_elements(By.ID, "prelabel-value"))
        assert "Grade 0 — model gpt-4o-mini (prompt umbrela-1/zh)" in _text(browser, "prelabel-value")
        _shot(browser, "j3-prelabel-shown")
        _press(browser, "1", "2 judged")
        doc = browser.find_element(By.ID, "doc-text")
        assert "Paragraph 199" in doc.get_attribute("textContent")
        assert browser.execute_script("var e = arguments[0]; return e.scrollHeight > e.clientHeight "
                                      "&& getComputedStyle(e).overflowY == 'auto';", doc)  # long: it scrolls
        browser.execute_script("arguments[0].scrollTop = arguments[0].scrollHeight", doc)
        assert browser.execute_script("return arguments[0].scrollTop", doc) > 0
        ActionChains(browser).send_keys("n").perform()
        ActionChains(browser).send_keys("about flaps, not wings 3").perform()  # typed into the note, not grades
        ActionChains(browser).send_keys(Keys.ESCAPE).perform()
        _shot(browser, "j4-long-document-note")
        _press(browser, "s", "1 skipped")
        _press(browser, "2", "3 judged")
        _until(browser, "alice done", lambda d: d.find_elements(By.ID, "all-done"))
        _shot(browser, "j5-alice-done")

        # bob, in the same browser: his own link; he judges blind, his pages hold no pre-label
        browser.get(links["bob"])
        _until(browser, "bob's view", lambda d: "judging as bob" in d.page_source)
        for key, after in (("3", "1 judged"), ("0", "2 judged"), ("2", "3 judged"), ("2", "4 judged")):
            assert "gpt-4o-mini" not in browser.page_source and not browser.find_elements(By.ID, "show-prelabel")
            _press(browser, key, after)
        _until(browser, "bob done", lambda d: d.find_elements(By.ID, "all-done"))
        r = httpx.post(f"{server.url}/judging/1/judge/reveal", data={"item_id": "2"},
                       cookies={"rankscope_judge_1": links["bob"].split("token=")[1]},
                       headers={"Origin": server.url})
        assert r.status_code == 403  # asking by hand does not work either

        base = f"{server.url}/api/v1/judging/1"
        alice = {j["doc_id"]: j for j in httpx.get(f"{base}/judgments", params={"annotator": "alice"}).json()}
        assert {d: j["grade"] for d, j in alice.items()} == {"d1": 3, "d2": 1, "d3": None, "d4": 2}
        assert (alice["d1"]["prelabel_shown"], alice["d2"]["prelabel_shown"]) == (False, True)
        assert alice["d3"]["note"] == "about flaps, not wings 3" and alice["d3"]["skipped"]

        browser.get(f"{server.url}/judging/1?relevance_level=2")
        rows = _text(browser, "annotators")
        assert "alice 3 1 0 1" in rows and "bob 4 0 0 0" in rows
        agreement = _text(browser, "agreement")
        assert "alice · bob 3 0.667" in agreement  # d1, d2, d4 graded by both; d2 differs
        vs = _text(browser, "agreement-prelabels")
        assert "alice 1 1 0.000" in vs and "bob 2 0 0.500" in vs  # alice saw d2's pre-label: only d1 is blind
        assert "4 of 4 documents get a person's grade (3 merged from several annotators, 1 of them with " \
               "different grades)" in _text(browser, "export-summary")
        queries = _text(browser, "queries")
        assert "q1" in queries and "2/3 (+1)" in queries
        _shot(browser, "j6-task-overview")
        href = browser.find_element(By.ID, "download-qrels").get_attribute("href")
        assert httpx.get(href).text.splitlines() == ["q1 0 d1 3", "q1 0 d2 0", "q1 0 d3 2", "q2 0 d4 2"]
        side_href = browser.find_element(By.ID, "download-provenance").get_attribute("href")
        side_rows = [json.loads(line) for line in httpx.get(side_href).text.splitlines()]
        assert [r["annotator"] for r in side_rows] == ["alice,bob", "alice,bob", "bob", "alice,bob"]
        assert [r["blind"] for r in side_rows] == [True, False, True, True]  # d2: alice had seen its pre-label
        Select(browser.find_element(By.ID, "export-annotator")).select_by_value("alice")
        _submit(browser, "export-show")
        assert "3 of 4 documents get a person's grade" in _text(browser, "export-summary")
        assert httpx.get(browser.find_element(By.ID, "download-qrels").get_attribute("href")).text.splitlines() \
            == ["q1 0 d1 3", "q1 0 d2 1", "q2 0 d4 2"]

        browser.get(links["alice"])
        browser.get(f"{server.url}/judging/1/judge?item=1&lang=zh")
        _until(browser, "Chinese", lambda d: "显示预标注" in d.page_source)
        assert "你目前的标注：3" in _text(browser, "current") and "完全相关" in _text(browser, "grade-3")
        _shot(browser, "j7-judge-zh")
        browser.get(f"{server.url}/judging/1")
        _shot(browser, "j8-task-zh")
        logs = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
        assert not logs, logs
