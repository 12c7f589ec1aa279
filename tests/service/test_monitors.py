"""Monitors in the service: a canary alerting on a drop and recovering, once per episode, by webhook; traffic
events in windows with signals and rejections; /metrics parsed by prometheus_client's parser."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from fastapi.testclient import TestClient

from .conftest import make_client, upload_testset
from .monitor_helpers import SwitchRetriever, WebhookSink, canary_testset, wait_for

FAST = {"monitor_poll_seconds": 0.1, "live_workers": 1, "lease_seconds": 5.0}


def _rounds(c: TestClient, mid: int) -> list[dict[str, Any]]:
    r = c.get(f"/api/v1/monitors/{mid}/rounds")
    assert r.status_code == 200, r.text
    return list(r.json())


def _done(c: TestClient, mid: int) -> list[dict[str, Any]]:
    return [r for r in _rounds(c, mid) if r["status"] == "done"]


@pytest.mark.slow
def test_a_canary_alerts_on_a_drop_once_and_says_the_recovery(db_url: str) -> None:
    with SwitchRetriever() as retriever, WebhookSink(fail_first=1) as sink, \
            make_client(db_url, allow_webhooks=("127.0.0.1:*",), webhook_backoff=0.2, **FAST) as c:
        ts = upload_testset(c, canary_testset(30), name="canary set")
        r = c.post("/api/v1/monitors", json={
            "name": "search canary", "kind": "canary", "test_set_id": ts["id"], "retriever_url": retriever.url,
            "metrics": ["ndcg@10", "hit_rate@1"], "schedule": {"every_seconds": 1}, "webhook_url": sink.url,
            "rules": ["drop ndcg@10 0.1", "hit_rate@1 >= 0.5", "error_rate <= 0.5"]})
        assert r.status_code == 201, r.text
        mid = r.json()["id"]
        wait_for("two good rounds", lambda: len(_done(c, mid)) >= 2)
        retriever.mode = "bad"
        alerts = wait_for("the drop alert", lambda: [a for a in c.get(f"/api/v1/monitors/{mid}/alerts").json()
                                                     if a["rule"] == "drop:ndcg@10:0.1"])
        status = c.get(f"/api/v1/monitors/{mid}").json()
        assert status["status"] == "alert"
        detail = alerts[0]["detail"]
        assert detail["check"]["value"] == pytest.approx(-1.0) and detail["check"]["bound"] < -0.1
        assert detail["check"]["worst"] and detail["report"].startswith("/evaluations/")
        assert "betting bound" in detail["text"]["en"] and detail["text"]["zh"]
        retriever.mode = "good"
        wait_for("the recovery", lambda: not c.get(f"/api/v1/monitors/{mid}").json()["alerts"], timeout=90)
        wait_for("the webhooks", lambda: {(p["rule"], p["status"]) for p in sink.posts} >= {
            ("drop:ndcg@10:0.1", "firing"), ("drop:ndcg@10:0.1", "resolved")})
        time.sleep(1.0)
        drops = [(p["status"], p["alert_id"]) for p in sink.posts if p["rule"] == "drop:ndcg@10:0.1"]
        assert sorted(drops) == sorted(set(drops)) and len(drops) == 2  # one alert, one recovery: no repeat
        assert sink.tries >= len(sink.posts) + 1  # the first try failed (503) and was tried again
        rounds = _rounds(c, mid)
        times = [x["scheduled_for"] for x in rounds]
        assert len(times) == len(set(times))  # never a round twice
        first = _done(c, mid)[0]
        assert first["summary"]["baseline"].startswith("this round")
        job = c.get(f"/api/v1/evaluations/{first['job_id']}").json()
        assert job["kind"] == "live" and job["status"] == "done"  # a round is a normal live evaluation


@pytest.mark.slow
def test_a_canary_on_a_fixed_sample_asks_only_those_queries(tmp_path: Any) -> None:
    with SwitchRetriever() as retriever, make_client(f"sqlite:///{tmp_path / 's.sqlite3'}", **FAST) as c:
        ts = upload_testset(c, canary_testset(40))
        r = c.post("/api/v1/monitors", json={"name": "sampled", "kind": "canary", "test_set_id": ts["id"],
                                             "retriever_url": retriever.url, "sample": 10, "seed": 3,
                                             "schedule": {"cron": "*/30 * * * *"}})
        assert r.status_code == 201, r.text
        mid = r.json()["id"]
        (done,) = wait_for("the first round", lambda: _done(c, mid))
        assert len(retriever.calls) == 10 and done["summary"]["metrics"]["ndcg@10"]["n"] == 10
        assert r.json()["params"]["query_ids"] == sorted(r.json()["params"]["query_ids"])
        assert len(_rounds(c, mid)) == 1  # cron: the next round is due on the half hour


@pytest.mark.parametrize(("body", "field", "problem"), [
    ({"kind": "canary", "retriever_url": "http://127.0.0.1:9/s", "schedule": {"every_seconds": 60}}, "test_set_id",
     "needs the test set"),
    ({"kind": "canary", "test_set_id": 1, "retriever_url": "http://127.0.0.1:em/s"}, "retriever_url",
     "not a valid URL"),
    ({"kind": "canary", "test_set_id": 1, "retriever_url": "http://10.0.0.1/s", "schedule": {"every_seconds": 60}},
     "retriever_url", "allow-list"),
    ({"kind": "canary", "test_set_id": 1, "retriever_url": "http://127.0.0.1:9/s", "schedule": {"cron": "often"}},
     "schedule", "cron"),
    ({"kind": "traffic", "rules": ["drop ndcg@10 0.05"]}, "rules[0]", "use it on a canary"),
    ({"kind": "traffic", "rules": ["latncy_p95 <= 100"]}, "rules[0]", "did you mean 'latency_p95'"),
    ({"kind": "traffic", "webhook_url": "http://example.org/hook"}, "webhook_url", "--allow-webhook"),
    ({"kind": "traffic", "judge": {"metrics": ["ndcg@10"]}}, "judge", "--judge-url"),
    ({"kind": "traffic", "metrics": ["num_ret"]}, "metrics[0]", "known bounds"),
])
def test_a_bad_monitor_is_refused_naming_the_field(tmp_path: Any, body: dict[str, Any], field: str,
                                                   problem: str) -> None:
    with make_client(f"sqlite:///{tmp_path / 's.sqlite3'}", **FAST) as c:
        upload_testset(c, canary_testset(3))
        r = c.post("/api/v1/monitors", json={"name": "m", **body})
        # an address the service may not call is forbidden by its configuration (403), as for live evaluations
        assert r.status_code == (403 if "allow" in problem else 422), r.text
        (err,) = r.json()["errors"]
        assert err["field"] == field and problem in err["problem"], err


def _line(**kw: Any) -> str:
    return json.dumps(kw)


@pytest.mark.slow
def test_traffic_events_make_windows_with_signals_and_bad_events_are_counted(db_url: str) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    with make_client(db_url, event_retention_days=1e-5, **FAST) as c:
        r = c.post("/api/v1/monitors", json={"name": "prod", "kind": "traffic", "window_seconds": 60,
                                             "rules": ["empty_rate <= 0.2", "psi <= 0.25"]})
        assert r.status_code == 201, r.text
        mid = r.json()["id"]
        t0 = (time.time() // 60 - 10) * 60  # windows that are over already
        lines = []
        for w in range(3):
            for i in range(100):
                empty = w == 2 and i % 2 == 0
                score = 10.0 + (i % 10) + (20.0 if w == 2 else 0.0)
                lines.append(_line(time=t0 + 60 * w + i * 0.5, query=f"q{i}", retriever="v1", latency_ms=5.0 + i,
                                   results=[] if empty else [{"id": f"d{i}", "score": score}, {"id": "d0"}]))
        lines += ["{broken", _line(query="x", reslts=[]), _line(results=[])]
        r = c.post(f"/api/v1/monitors/{mid}/events", content="\n".join(lines).encode(),
                   headers={"content-type": "application/x-ndjson"})
        assert r.status_code == 200, r.text
        assert r.json()["accepted"] == 300 and r.json()["rejected"] == 3
        assert [p["reason"] for p in r.json()["problems"]] == ["malformed", "unknown_field", "no_query"]
        again = c.post(f"/api/v1/monitors/{mid}/events", content="\n".join(lines[:10]).encode())
        assert again.status_code == 200  # a client's retry: stored once
        windows = wait_for("three closed windows", lambda: [w for w in c.get(
            f"/api/v1/monitors/{mid}/windows").json() if w["closed"]] if len([w for w in c.get(
                f"/api/v1/monitors/{mid}/windows").json() if w["closed"]]) == 3 else None)
        s0, s2 = windows[0]["signals"], windows[2]["signals"]
        assert s0["events"] == 100 and s2["empty_rate"] == pytest.approx(0.5)
        assert s2["psi"] > 0.25 > windows[1]["signals"]["psi"] and s2["ks_p_value"] < 0.001
        assert s0["latency_p50"] == pytest.approx(54.5)
        alerts = c.get(f"/api/v1/monitors/{mid}/alerts").json()
        assert {a["rule"] for a in alerts} == {"signal:empty_rate:0.2", "signal:psi:0.25"}
        rej = {x["reason"]: x["count"] for x in c.get(f"/api/v1/monitors/{mid}/rejections").json()}
        assert rej == {"malformed": 1, "unknown_field": 1, "no_query": 1}
        wait_for("retention", lambda: c.get(f"/api/v1/monitors/{mid}").json()["events"] == 0)
        assert len([w for w in c.get(f"/api/v1/monitors/{mid}/windows").json() if w["closed"]]) == 3  # kept
        text = c.get("/metrics").text
        fams = {f.name: f for f in text_string_to_metric_families(text)}
        firing = {(s.labels["rule"], s.value) for s in fams["rankscope_monitor_alert_firing"].samples}
        assert ("signal:empty_rate:0.2", 1.0) in firing
        values = {(s.labels["metric"], s.labels["retriever"]): s.value
                  for s in fams["rankscope_monitor_value"].samples}
        assert values[("empty_rate", "v1")] == pytest.approx(0.5)
        rejected = {s.labels["reason"]: s.value for s in fams["rankscope_monitor_events_rejected"].samples
                    if s.name.endswith("_total")}
        assert rejected["malformed"] == 1.0


def test_events_to_a_canary_or_an_unknown_monitor(tmp_path: Any) -> None:
    with make_client(f"sqlite:///{tmp_path / 's.sqlite3'}", **FAST) as c:
        assert c.post("/api/v1/monitors/99/events", content=b"{}").status_code == 404
        r = c.post("/v1/traces", content=b"\x00", headers={"content-type": "application/x-protobuf"})
        assert r.status_code == 400


@pytest.mark.slow
def test_versions_unknown_ids_and_judged_comparison(tmp_path: Any) -> None:
    from labels.fake_llm import FakeLLM

    with FakeLLM() as llm, make_client(f"sqlite:///{tmp_path / 's.sqlite3'}", judge_url=llm.url, judge_model="fake",
                                       judge_cache=str(tmp_path / "judge.sqlite3"), **FAST) as c:
        corpus = {f"d{i}": f"passage {i} grade={3 if i % 2 == 0 else 0}" for i in range(10)}  # the fake judge reads it
        ts = upload_testset(c, {"queries": [{"id": "q0", "text": "q", "relevant": ["d0"]}], "corpus": corpus})
        r = c.post("/api/v1/monitors", json={"name": "versions", "kind": "traffic", "test_set_id": ts["id"],
                                             "window_seconds": 60, "judge": {"metrics": ["precision@2"],
                                                                             "sample": {"per_window": 20}}})
        assert r.status_code == 201, r.text
        mid = r.json()["id"]
        t0 = (time.time() // 60 - 5) * 60
        lines = []
        for i in range(20):  # v1 answers two relevant documents, v2 one relevant and one unknown to the corpus
            lines.append(_line(time=t0 + i, query=f"question {i}", retriever="v1",
                               results=[{"id": "d0", "text": corpus["d0"]}, {"id": "d2", "text": corpus["d2"]}]))
            lines.append(_line(time=t0 + i, query=f"question {i}", retriever="v2",
                               results=[{"id": "d0", "text": corpus["d0"]},
                                        {"id": "new9", "text": "new passage grade=0"}]))
        assert c.post(f"/api/v1/monitors/{mid}/events", content="\n".join(lines).encode()).json()["accepted"] == 40
        windows = wait_for("both versions' windows", lambda: (ws := [w for w in c.get(
            f"/api/v1/monitors/{mid}/windows").json() if w["closed"]]) and len(ws) == 2 and ws)
        by = {w["retriever"]: w for w in windows}
        assert by["v1"]["signals"]["unknown_rate"] == 0.0 and by["v2"]["signals"]["unknown_rate"] == 0.5
        assert by["v2"]["signals"]["rbo_vs"]["vs"] == "v1"
        assert by["v2"]["signals"]["rbo"] == pytest.approx(0.55)  # X_1 = X_2 = 1, p = 0.9
        assert by["v1"]["judged"]["metrics"]["precision@2"]["mean"] == 1.0
        assert by["v2"]["judged"]["metrics"]["precision@2"]["mean"] == 0.5
        vs = by["v2"]["judged"]["vs"]
        assert vs["version"] == "v1" and vs["difference"]["precision@2"]["difference"] == pytest.approx(-0.5)
        page = c.get(f"/monitors/{mid}/windows/{by['v2']['id']}")
        assert page.status_code == 200 and 'id="versus"' in page.text
