"""Load test of the evaluation service: concurrent clients uploading runs and creating evaluations.

    .venv/bin/python bench/bench_service.py                       # 20 clients, 60 s, SQLite
    .venv/bin/python bench/bench_service.py --seconds 20 --clients 8
    .venv/bin/python bench/bench_service.py --postgres            # a throwaway PostgreSQL cluster
    .venv/bin/python bench/bench_service.py --db postgresql+psycopg://user@127.0.0.1:5432/db
    .venv/bin/python bench/bench_service.py --report-clients 2   # reports asked for during the load

A `rankscope serve` process is started on 127.0.0.1 (a free port) with a fresh SQLite file
unless --db is given.  One test set of --queries queries is uploaded; then every client, in a
loop until the time is up: uploads a random run, creates an evaluation of it, and reads
``GET /testsets``, ``GET /runs/{id}``, ``GET /evaluations/{id}`` and
``GET /evaluations/{id}/queries``.  Afterwards it waits for every job and checks that
nothing was lost or duplicated: every evaluation is done, has exactly one stored score per
query (``n_queries`` rows, all distinct), and its means equal rankscope.evaluate on the
uploaded run.  With --report-clients, that many more clients ask, during the load, for the
report of an evaluation that is done and wait for it (counted: how many came during the load).
Prints request counts, errors, and p50/p95 latency of each read endpoint.
Exits 1 when any request failed or any check does not hold.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
import numpy as np


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(db: str, port: int, workers: int, log: Path) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-c", "from rankscope.cli.app import main; main()", "serve", "--db", db,
           "--port", str(port), "--workers", str(workers)]
    proc = subprocess.Popen(cmd, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    for _ in range(300):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"server did not start:\n{log.read_text()}")


def make_run(rng: np.random.Generator, n_queries: int, docs: int) -> dict[str, dict[str, float]]:
    return {f"q{q}": {f"d{int(d)}": float(docs - i) for i, d in enumerate(rng.choice(200, size=docs, replace=False))}
            for q in range(n_queries)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--docs", type=int, default=20, help="documents per query in each uploaded run")
    ap.add_argument("--workers", type=int, default=2, help="server job threads")
    ap.add_argument("--report-queries", type=int, default=0,
                    help="also time the report of 2 runs x this many queries (rendered once, then cached)")
    ap.add_argument("--report-clients", type=int, default=0,
                    help="clients that, during the load, ask for the report of a finished evaluation and wait for "
                         "it: how many reports came during the load, and after how long")
    ap.add_argument("--db", default=None)
    ap.add_argument("--postgres", action="store_true",
                    help="start a throwaway PostgreSQL on 127.0.0.1 (Debian's initdb/pg_ctl) and use it")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="rankscope-bench-"))
    cluster = None
    if args.postgres:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "service"))
        from postgres import PostgresCluster  # the tests' throwaway cluster

        cluster = PostgresCluster()
        cluster.start()
        args.db = cluster.create_database("bench")
    try:
        return run(args, tmp)
    finally:
        if cluster is not None:
            cluster.stop()


def run(args: argparse.Namespace, tmp: Path) -> int:
    db = args.db or f"sqlite:///{tmp / 'bench.sqlite3'}"
    port = free_port()
    base = f"http://127.0.0.1:{port}/api/v1"
    proc = start_server(db, port, args.workers, tmp / "server.log")
    rng0 = np.random.default_rng(0)
    qrels = {f"q{q}": {f"d{int(d)}": int(rng0.integers(1, 3)) for d in rng0.choice(200, size=5, replace=False)}
             for q in range(args.queries)}
    testset = {"queries": [{"id": q, "text": f"query {q}", "relevant": rel} for q, rel in qrels.items()]}
    ts = httpx.post(f"{base}/testsets", files={"file": ("bench.json", json.dumps(testset))},
                    data={"format": "json"}, timeout=60).json()
    metrics = ["ndcg@10", "map", "mrr", "recall@10"]

    latency: dict[str, list[float]] = defaultdict(list)
    errors: list[str] = []
    created: list[tuple[str, dict[str, dict[str, float]]]] = []
    counts: dict[str, int] = defaultdict(int)
    lock = threading.Lock()
    stop_at = time.monotonic() + args.seconds

    def client(seed: int) -> None:
        rng = np.random.default_rng(seed)
        with httpx.Client(base_url=base, timeout=120) as c:
            while time.monotonic() < stop_at:
                run = make_run(rng, args.queries, args.docs)
                steps: list[tuple[str, Any]] = []
                r = c.post("/runs", files={"file": ("r.json", json.dumps(run))},
                           data={"test_set_id": str(ts["id"]), "format": "json", "name": f"c{seed}"})
                steps.append(("POST /runs", r))
                if r.status_code != 201:
                    errors.append(f"POST /runs {r.status_code} {r.text[:200]}")
                    continue
                run_id = r.json()["id"]
                r = c.post("/evaluations", json={"test_set_id": ts["id"], "run_ids": [run_id], "metrics": metrics})
                steps.append(("POST /evaluations", r))
                if r.status_code != 202:
                    errors.append(f"POST /evaluations {r.status_code} {r.text[:200]}")
                    continue
                job_id = r.json()["id"]
                with lock:
                    created.append((job_id, run))
                for label, url in (("GET /testsets", "/testsets"), ("GET /runs/{id}", f"/runs/{run_id}"),
                                   ("GET /evaluations/{id}", f"/evaluations/{job_id}"),
                                   ("GET /evaluations/{id}/queries", f"/evaluations/{job_id}/queries")):
                    t0 = time.perf_counter()
                    r = c.get(url)
                    dt = time.perf_counter() - t0
                    with lock:
                        latency[label].append(dt)
                    steps.append((label, r))
                for label, resp in steps:
                    with lock:
                        counts[label] += 1
                    if resp.status_code >= 400:
                        errors.append(f"{label} {resp.status_code} {resp.text[:200]}")

    report_waits: list[float] = []
    reports_asked: list[str] = []

    def reporter() -> None:
        """During the load: the report of an evaluation that is done (one not asked for yet), waited for."""
        with httpx.Client(base_url=base, timeout=120) as c:
            while time.monotonic() < stop_at:
                with lock:
                    candidates = [j for j, _ in reversed(created) if j not in reports_asked][:20]
                job_id = next((j for j in candidates if c.get(f"/evaluations/{j}").json()["status"] == "done"), None)
                if job_id is None:
                    time.sleep(0.2)
                    continue
                with lock:
                    if job_id in reports_asked:
                        continue
                    reports_asked.append(job_id)
                t0 = time.monotonic()
                while (r := c.get(f"/evaluations/{job_id}/report", params={"format": "json"})).status_code == 202:
                    if time.monotonic() > stop_at:
                        break
                    time.sleep(0.2)
                if r.status_code == 200:
                    with lock:
                        report_waits.append(time.monotonic() - t0)
                elif r.status_code != 202:
                    errors.append(f"GET /evaluations/{{id}}/report {r.status_code} {r.text[:200]}")

    threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
    threads += [threading.Thread(target=reporter) for _ in range(args.report_clients)]
    t_start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t_start

    # every job finishes, with exactly one score per query and the engine's means
    from rankscope import Qrels, Run
    from rankscope.engine import evaluate

    problems: list[str] = []
    deadline = time.monotonic() + 300
    q = Qrels.from_dict(qrels)
    with httpx.Client(base_url=base, timeout=120) as c:
        for job_id, run in created:
            while (job := c.get(f"/evaluations/{job_id}").json())["status"] not in ("done", "failed"):
                if time.monotonic() > deadline:
                    problems.append(f"{job_id} not finished")
                    break
                time.sleep(0.2)
            items = c.get(f"/evaluations/{job_id}/queries", params={"limit": 100000}).json()["items"]
            ids = [i["query_id"] for i in items]
            if job["status"] != "done" or len(ids) != args.queries or len(set(ids)) != len(ids):
                problems.append(f"{job_id}: status {job['status']}, {len(ids)} scores ({len(set(ids))} distinct)")
                continue
            want = evaluate(q, Run.from_dict(run), metrics).mean()
            got = job["runs"][0]["means"]
            if any(abs(got[m] - want[m]) > 1e-9 for m in metrics):
                problems.append(f"{job_id}: means {got} != {want}")
        # every report is rendered once in the background; then it is read from the cache
        report_reads: list[float] = []
        for job_id, _ in created[: min(len(created), 50)]:
            deadline_r = time.monotonic() + 120
            while (r := c.get(f"/evaluations/{job_id}/report", params={"format": "json"})).status_code == 202:
                if time.monotonic() > deadline_r:
                    problems.append(f"{job_id}: report never rendered")
                    break
                time.sleep(0.1)
            t0 = time.perf_counter()
            r = c.get(f"/evaluations/{job_id}/report", params={"format": "json"})
            report_reads.append(time.perf_counter() - t0)
            if r.status_code != 200 or json.loads(r.text)["schema"] != "rankscope.report.run":
                problems.append(f"{job_id}: report {r.status_code}")
        if report_reads:
            latency["GET /evaluations/{id}/report (cached)"] = report_reads
        if args.report_queries:
            big_report(c, args.report_queries, problems)
    proc.terminate()
    proc.wait(10)

    total = sum(counts.values())
    print(f"{args.clients} clients, {elapsed:.1f} s, {total} requests ({total / elapsed:.1f}/s), "
          f"{len(created)} runs uploaded and evaluated; database {db.split(':')[0]}")
    print(f"{'endpoint':40} {'n':>6} {'p50 ms':>8} {'p95 ms':>8}")
    for label in sorted(latency):
        arr = np.array(latency[label]) * 1000
        print(f"{label:40} {len(arr):6d} {np.percentile(arr, 50):8.1f} {np.percentile(arr, 95):8.1f}")
    if args.report_clients:
        waits = np.array(report_waits) if report_waits else np.array([np.nan])
        print(f"reports asked for during the load: {len(reports_asked)}; rendered during the load: "
              f"{len(report_waits)} (wait p50 {np.nanpercentile(waits, 50):.1f} s, p95 "
              f"{np.nanpercentile(waits, 95):.1f} s); still rendering when the load stopped: "
              f"{len(reports_asked) - len(report_waits)}")
    print(f"errors: {len(errors)}; lost/duplicated/wrong results: {len(problems)}")
    for line in (errors + problems)[:10]:
        print("  ", line)
    for f in tmp.iterdir():
        f.unlink()
    os.rmdir(tmp)
    return 1 if errors or problems else 0


def big_report(c: httpx.Client, n: int, problems: list[str]) -> None:
    """2 runs x ``n`` queries: time until the HTML report is rendered in the background, then cached reads."""
    rng = np.random.default_rng(1)
    qrels = {f"q{q}": {f"d{int(rng.integers(0, 1000))}": 1} for q in range(n)}
    ts = c.post("/testsets", files={"file": ("big.json", json.dumps(
        {"queries": [{"id": q, "text": q, "relevant": rel} for q, rel in qrels.items()]}))},
        data={"format": "json"}).json()
    ids = []
    for name in ("bm25", "dense"):
        run = make_run(rng, n, 10)
        ids.append(c.post("/runs", files={"file": ("r.json", json.dumps(run))},
                          data={"test_set_id": str(ts["id"]), "format": "json", "name": name}).json()["id"])
    job = c.post("/evaluations", json={"test_set_id": ts["id"], "run_ids": ids,
                                       "metrics": ["ndcg@10", "mrr", "recall@10"]}).json()
    t0 = time.perf_counter()
    while c.get(f"/evaluations/{job['id']}").json()["status"] not in ("done", "failed"):
        time.sleep(0.2)
    scored = time.perf_counter() - t0
    while (r := c.get(f"/evaluations/{job['id']}/report", params={"format": "html"})).status_code == 202:
        time.sleep(0.2)
    rendered = time.perf_counter() - t0 - scored
    reads = []
    for _ in range(5):
        t1 = time.perf_counter()
        r = c.get(f"/evaluations/{job['id']}/report", params={"format": "html"})
        reads.append(time.perf_counter() - t1)
    if r.status_code != 200:
        problems.append(f"big report: {r.status_code}")
    print(f"report of 2 runs x {n} queries: scored in {scored:.1f} s, HTML report rendered in the background "
          f"{rendered:.1f} s later; each view then reads the cache: median {np.median(reads) * 1000:.0f} ms "
          f"({len(r.content) / 1e6:.1f} MB)")


if __name__ == "__main__":
    raise SystemExit(main())
