"""Load test of monitor event ingest: a steady rate of events for a while, on SQLite or PostgreSQL; nothing lost.

    .venv/bin/python bench/bench_monitor_ingest.py                        # 500 events/s for 60 s, SQLite
    .venv/bin/python bench/bench_monitor_ingest.py --postgres             # a throwaway PostgreSQL cluster
    .venv/bin/python bench/bench_monitor_ingest.py --rate 12 --seconds 600     # 1,000,000 a day, sustained
    .venv/bin/python bench/bench_monitor_ingest.py --seconds 10 --json out.json

A ``rankscope serve`` process is started on 127.0.0.1 (a free port; a fresh SQLite file unless --db or
--postgres) with one traffic monitor.  The load is open-loop: request ``i`` is sent at ``t0 + i / rate`` by
one of --clients asyncio clients, whatever the answers take (a slow server does not slow the sender down,
as real traffic would not), each request carrying --per-request events (1 by default: the worst case, one
HTTP request and one acknowledgement per event) as JSON Lines.  An answer comes once its events are committed.

While the load runs, a scoring evaluation of --runs stored runs x --queries queries is created (and the same
one before the load, alone): the ratio of the two times says whether ingest holds scoring up.

Afterwards the events stored are counted in the database: ``lost`` = acknowledged events not stored (must be 0;
events whose request failed are counted apart and may or may not be stored; a transport error is retried twice,
as an exporter retries, and counted in ``retried``).  Prints the rate reached, the
latency percentiles of the requests (p50 / p95 / p99 / max, from send to answer) and the scoring times;
exits 1 when anything acknowledged was lost or a request failed.  On a shared or small machine the numbers are
pessimistic: the server, its database and the load generator share the same cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(db: str, port: int, log: Path) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-c", "from rankscope.cli.app import main; main()", "serve", "--db", db,
           "--port", str(port), "--workers", "1"]
    proc = subprocess.Popen(cmd, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    for _ in range(600):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"the server did not start:\n{log.read_text()}")


def _scoring_job(base: str, ts_id: int, run_ids: list[int]) -> float:
    t0 = time.perf_counter()
    job = httpx.post(f"{base}/api/v1/evaluations", json={"test_set_id": ts_id, "run_ids": run_ids,
                                                         "metrics": ["ndcg@10", "map", "recall@100"]}).json()
    while True:
        st = httpx.get(f"{base}/api/v1/evaluations/{job['id']}").json()["status"]
        if st in ("done", "failed"):
            if st != "done":
                raise SystemExit(f"the scoring job failed: {job}")
            return time.perf_counter() - t0
        time.sleep(0.05)


def _upload(base: str, n_queries: int, n_runs: int) -> tuple[int, list[int]]:
    rng = np.random.default_rng(0)
    qs = [{"id": f"q{i}", "text": f"query {i}", "relevant": {f"d{i}-{j}": int(rng.integers(1, 3)) for j in range(5)}}
          for i in range(n_queries)]
    ts = httpx.post(f"{base}/api/v1/testsets", files={"file": ("t.json", json.dumps({"queries": qs}))},
                    data={"format": "json"}, timeout=120).json()
    runs = []
    for r in range(n_runs):
        keep = [f"q{i} Q0 d{i}-{d} {k + 1} {100 - k} r{r}" for i in range(n_queries)
                for k, d in enumerate(rng.permutation(200)[:100])]
        rec = httpx.post(f"{base}/api/v1/runs", files={"file": (f"r{r}.trec", "\n".join(keep))},
                         data={"test_set_id": str(ts["id"]), "format": "trec", "name": f"r{r}"}, timeout=120).json()
        runs.append(rec["id"])
    return ts["id"], runs


async def _load(base: str, mid: int, rate: float, seconds: float, per_request: int, clients: int,
                ) -> dict[str, Any]:
    total = int(rate * seconds)
    latencies: list[float] = []
    acked: list[int] = []
    failed = 0
    lag: list[float] = []
    reasons: dict[str, int] = {}
    retried: dict[str, int] = {}
    queue: asyncio.Queue[int] = asyncio.Queue()
    t0 = time.perf_counter() + 0.5

    def body(i: int) -> bytes:
        lines = []
        for j in range(per_request):
            n = i * per_request + j
            lines.append(json.dumps({"time": 1_800_000_000 + n / (rate * per_request), "query": f"query {n % 5000}",
                                     "retriever": "v1", "latency_ms": 20.0 + n % 50,
                                     "results": [{"id": f"d{(n + k) % 997}", "score": 10.0 - k} for k in range(10)]}))
        return "\n".join(lines).encode()

    async def client(c: httpx.AsyncClient) -> None:
        nonlocal failed
        while True:
            i = await queue.get()
            if i < 0:
                return
            due = t0 + i / rate
            wait = due - time.perf_counter()
            if wait > 0:
                await asyncio.sleep(wait)
            start = time.perf_counter()
            lag.append(start - due)
            ok, why = False, ""
            for attempt in range(3):  # a transport error is retried, as an exporter does (stored once: same key)
                try:
                    r = await c.post(f"{base}/api/v1/monitors/{mid}/events", content=body(i))
                    ok = r.status_code == 200 and r.json()["accepted"] == per_request
                    why = f"HTTP {r.status_code}"
                    break
                except httpx.TransportError as exc:
                    why = type(exc).__name__
                    retried[why] = retried.get(why, 0) + 1
                    await asyncio.sleep(0.1 * (attempt + 1))
            if not ok:
                reasons[why] = reasons.get(why, 0) + 1
            latencies.append(time.perf_counter() - start)
            if ok:
                acked.append(i)
            else:
                failed += 1

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=60, limits=limits) as c:
        for i in range(total):
            queue.put_nowait(i)
        for _ in range(clients):
            queue.put_nowait(-1)
        await asyncio.gather(*(client(c) for _ in range(clients)))
    took = time.perf_counter() - t0
    lat = np.array(latencies) * 1000
    return {"requests": total, "events_sent": total * per_request, "acked_events": len(acked) * per_request,
            "failed_requests": failed, "failures": reasons, "retried": retried, "seconds": round(took, 2),
            "events_per_second": round(total * per_request / took, 1),
            "latency_ms": {k: round(float(v), 1) for k, v in zip(("p50", "p95", "p99", "max"),
                                                                  [*np.percentile(lat, [50, 95, 99]), lat.max()])},
            "sender_lag_p99_ms": round(float(np.percentile(np.array(lag) * 1000, 99)), 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rate", type=float, default=500.0, help="requests per second")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--per-request", type=int, default=1, help="events per request")
    ap.add_argument("--clients", type=int, default=64, help="concurrent connections")
    ap.add_argument("--queries", type=int, default=2000, help="queries of the scoring job's test set")
    ap.add_argument("--runs", type=int, default=2, help="runs the scoring job scores")
    ap.add_argument("--db", default=None)
    ap.add_argument("--postgres", action="store_true", help="a throwaway PostgreSQL on 127.0.0.1 (the tests' own)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="rankscope-ingest-"))
    cluster = None
    if args.postgres:
        sys.path.insert(0, str(ROOT / "tests" / "service"))
        from postgres import PostgresCluster  # the tests' throwaway cluster

        cluster = PostgresCluster()
        cluster.start()
        args.db = cluster.create_database("ingest")
    db = args.db or f"sqlite:///{tmp / 'ingest.sqlite3'}"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = start_server(db, port, tmp / "server.log")
    try:
        mid = httpx.post(f"{base}/api/v1/monitors", json={"name": "load", "kind": "traffic",
                                                          "window_seconds": 60}).json()["id"]
        ts_id, runs = _upload(base, args.queries, args.runs)
        alone = _scoring_job(base, ts_id, runs)
        during: dict[str, float] = {}

        def score_during() -> None:
            time.sleep(min(5.0, args.seconds / 3))
            during["seconds"] = _scoring_job(base, ts_id, runs)

        import threading

        th = threading.Thread(target=score_during, daemon=True)
        th.start()
        out = asyncio.run(_load(base, mid, args.rate, args.seconds, args.per_request, args.clients))
        th.join(600)
        from sqlalchemy import create_engine, text

        engine = create_engine(db)
        with engine.connect() as conn:
            stored = conn.execute(text("SELECT COUNT(*) FROM monitor_events WHERE monitor_id = :m"),
                                  {"m": mid}).scalar_one()
        engine.dispose()
        out.update(db="postgresql" if not db.startswith("sqlite") else "sqlite", stored_events=int(stored),
                   lost=max(0, out["acked_events"] - int(stored)),
                   scoring_alone_s=round(alone, 2), scoring_during_load_s=round(during.get("seconds", float("nan")), 2),
                   rate_asked=args.rate * args.per_request)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        if cluster is not None:
            cluster.stop()
    for k, v in out.items():
        print(f"{k:24} {v}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 1 if out["lost"] or out["failed_requests"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
