"""The attacks against ``rankscope serve`` re-run: bombs, framing, annotator identity, answer cap, fairness.

    PYTHONPATH=src .venv/bin/python bench/service_attacks.py                 # every part
    PYTHONPATH=src .venv/bin/python bench/service_attacks.py readers uploads # some parts

Everything runs on this machine's loopback (127.0.0.1), against the rankscope that PYTHONPATH points
at (run it once with an older checkout's ``src`` to compare).  Parts:

``readers``
    a "bomb inside a bomb" (a gzip of ten gzip members, each 64 MiB of zeros: a few KB; or with
    ``--bomb single`` one gzip layer of 640 MiB) read by every library reader, each in a fresh
    process under ``RANKSCOPE_MAX_DECOMPRESSED_MB`` (``--limit-mb``): the outcome, seconds and
    the growth of the process's peak resident set.
``uploads``
    the same bomb in every upload field of the API of ``rankscope serve --max-data-mb 8``: status,
    seconds, growth of the server's peak resident set (reset before each upload).
``json-run``
    a JSON run of ``--json-mb`` MB (gzip) read by ``read_run``: seconds and peak growth.
``framing``
    the framing headers of pages, API answers and refusals.
``annotators``
    another annotator reads and overwrites alice's judgment; a blind annotator's page holds the
    pre-label; the client says whether it saw the pre-label; the export says who judged blind.
``answers``
    8 retriever answers of 200 MB at concurrency 8: the server's peak growth and what was stored.
``fairness``
    a live job of 4 quick queries (about 0.2 s alone) submitted behind two slow ones (a retriever
    hanging 6 s per query, one trickling its answer a byte a second): how long it waited.

Reports under load: ``bench/bench_service.py --report-clients N``.  Peak memory is VmHWM of
/proc (Linux only); timings depend on the machine's load.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def _status(pid: int | str, key: str) -> int:
    """``VmHWM`` / ``VmRSS`` of a process in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) // 1024
    raise SystemExit(f"no {key} in /proc/{pid}/status")


def _reset_peak(pid: int | str) -> int:
    """Reset the peak resident set of ``pid`` to its current one (Linux ``clear_refs`` 5); the current, in MiB."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")
    return _status(pid, "VmRSS")


def _deflate(pattern: bytes, total: int, wbits: int) -> bytes:
    comp = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = pattern * ((1 << 20) // len(pattern))
    return b"".join([*(comp.compress(block) for _ in range(total // len(block))), comp.flush()])


def nested_bomb() -> bytes:
    """gzip(ten gzip members of 64 MiB of zeros): 640 MiB behind two layers."""
    return gzip.compress(_deflate(b"\0", 64 << 20, 31) * 10, 9)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def server(tmp: Path, *extra: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``rankscope serve`` on 127.0.0.1 with a fresh SQLite file: ``(base URL, process)``."""
    port = free_port()
    (tmp / "srv-tmp").mkdir(exist_ok=True)
    log = tmp / "server.log"
    cmd = [PY, "-c", "from rankscope.cli.app import main; main()", "serve", "--db",
           f"sqlite:///{tmp / f'attack-{port}.sqlite3'}", "--port", str(port), *extra]
    proc = subprocess.Popen(cmd, stdout=log.open("wb"), stderr=subprocess.STDOUT,
                            env={**os.environ, "TMPDIR": str(tmp / "srv-tmp")})
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(f"{base}/api/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                if proc.poll() is not None:
                    raise SystemExit(log.read_text()) from None
                time.sleep(0.1)
        httpx.get(f"{base}/api/v1/testsets", timeout=30)  # the first request imports the routes' modules
        yield base, proc
    finally:
        proc.terminate()
        proc.wait(20)


def _short(text: str, n: int = 70) -> str:
    text = re.sub(r"\s+", " ", text)
    return text if len(text) <= n else text[: n - 1] + "…"


# -- readers -----------------------------------------------------------------------------------------
READER_CHILD = r'''
import json, sys, time
from pathlib import Path
name, path = sys.argv[1], Path(sys.argv[2])

def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024

try:
    from rankscope.io import read_qrels, read_run
    import rankscope.io._source as src
    READERS = {
        "qrels trec": lambda p: read_qrels(p, format="trec"), "qrels auto": read_qrels,
        "qrels json": lambda p: read_qrels(p, format="json"), "qrels jsonl": lambda p: read_qrels(p, format="jsonl"),
        "qrels tsv": lambda p: read_qrels(p, format="tsv"), "qrels beir": lambda p: read_qrels(p, format="beir"),
        "run trec": lambda p: read_run(p, format="trec"),
        "run trec exact": lambda p: read_run(p, format="trec", fast=False),
        "run json": lambda p: read_run(p, format="json"), "run jsonl": lambda p: read_run(p, format="jsonl"),
        "run csv": lambda p: read_run(p, format="csv"), "run parquet": lambda p: read_run(p, format="parquet"),
        "run arrow": lambda p: read_run(p, format="arrow"),
    }
    def streamed(p):
        from rankscope.io.stream import run_blocks
        for _ in run_blocks(p, "trec", block_rows=10_000):
            pass
    def texts(p):
        from rankscope.labels.texts import read_texts
        read_texts(p, "corpus")
    def spans(p):
        from rankscope.io.spans import read_span_qrels
        read_span_qrels(p)
    def chunking(p):
        from rankscope.io.spans import read_chunking
        read_chunking(p)
    def subtopics(p):
        from rankscope.io.subtopics import read_subtopic_qrels
        read_subtopic_qrels(p)
    def labels(p):
        from rankscope.labels.provenance import read_labels
        read_labels(p)
    def load_json(p):
        from rankscope.io.jsonfmt import load_json
        load_json(p)
    def load_json_lines(p):
        from rankscope.io.jsonfmt import load_json_lines
        load_json_lines(p)
    def opened(p):
        with src.open_inflated(p) as fh:
            while fh.read(1 << 20):
                pass
    READERS.update({"run streamed": streamed, "texts (judging)": texts, "span qrels": spans, "chunking": chunking,
                    "subtopic qrels": subtopics, "labels (qrels + provenance)": labels, "load_json": load_json,
                    "load_json_lines": load_json_lines, "open_inflated": opened, "read_bytes": src.read_bytes})
    read = READERS[name]
    for mod in ("rankscope.io.stream", "rankscope.labels.texts", "rankscope.io.spans", "rankscope.io.subtopics",
                "rankscope.labels.provenance", "rankscope.io.tabular", "rankscope.io.jsonfmt", "pyarrow.parquet"):
        try:
            __import__(mod)
        except ImportError:
            pass
except Exception as exc:
    print(json.dumps({"outcome": f"n/a ({type(exc).__name__})", "seconds": 0, "grown": 0}))
    sys.exit()
open("/proc/self/clear_refs", "w").write("5")
before = rss()
t0 = time.monotonic()
try:
    read(path)
    outcome = "read whole"
except Exception as exc:
    outcome = f"{type(exc).__name__}: {exc}"
print(json.dumps({"outcome": outcome, "seconds": time.monotonic() - t0, "grown": peak() - before}))
'''

READER_FILES = {
    "qrels trec": "q.trec.gz", "qrels auto": "q.txt.gz", "qrels json": "q.json.gz", "qrels jsonl": "q.jsonl.gz",
    "qrels tsv": "q.tsv.gz", "qrels beir": "test.tsv.gz", "run trec": "r.trec.gz", "run trec exact": "r.trec.gz",
    "run json": "r.json.gz", "run jsonl": "r.jsonl.gz", "run csv": "r.csv.gz", "run parquet": "r.parquet.gz",
    "run arrow": "r.arrow.gz", "run streamed": "r.trec.gz", "texts (judging)": "c.jsonl.gz",
    "span qrels": "s.jsonl.gz", "chunking": "k.jsonl.gz", "subtopic qrels": "s.qrels.gz",
    "labels (qrels + provenance)": "l.qrels.gz", "load_json": "x.json.gz", "load_json_lines": "x.jsonl.gz",
    "open_inflated": "x.gz", "read_bytes": "x.gz",
}


def part_readers(args: argparse.Namespace, tmp: Path) -> None:
    bomb = nested_bomb() if args.bomb == "nested" else _deflate(b"\0", 640 << 20, 31)
    print(f"\n## Library readers: a {len(bomb):,}-byte {args.bomb} gzip (640 MiB inside), "
          f"RANKSCOPE_MAX_DECOMPRESSED_MB={args.limit_mb}")
    print(f"{'reader':30} {'s':>6} {'+MiB':>6}  outcome")
    env = {**os.environ, "RANKSCOPE_MAX_DECOMPRESSED_MB": str(args.limit_mb)}
    for name, filename in READER_FILES.items():
        path = tmp / filename
        path.write_bytes(bomb)
        out = subprocess.run([PY, "-c", READER_CHILD, name, str(path)], capture_output=True, text=True, env=env,
                             timeout=1800)
        try:
            got = json.loads(out.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            got = {"outcome": f"crashed: {_short(out.stderr[-300:])}", "seconds": 0, "grown": 0}
        outcome = got["outcome"].replace(str(path), path.name)
        print(f"{name:30} {got['seconds']:6.1f} {got['grown']:6d}  {_short(outcome)}")
        path.unlink()


# -- uploads -----------------------------------------------------------------------------------------
QUERIES = b"q1\tfirst query\n"
CORPUS = b"d1\tthe first document\n"
POOL = b'{"query_id": "q1", "doc_id": "d1"}\n'
LABELS = b"q1 0 d1 1\n"


def _upload_cases(bomb: bytes, ts: int) -> list[tuple[str, str, dict[str, tuple[str, bytes]], dict[str, str]]]:
    cases: list[tuple[str, str, dict[str, tuple[str, bytes]], dict[str, str]]] = []
    for fmt in ("trec", "json", "jsonl"):
        cases.append((f"testset file ({fmt})", "/api/v1/testsets", {"file": (f"t.{fmt}.gz", bomb)}, {"format": fmt}))
    cases.append(("testset queries", "/api/v1/testsets", {"file": ("q.qrels", LABELS), "queries": ("q.tsv.gz", bomb)},
                  {"format": "trec"}))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("s/queries.jsonl", b'{"_id": "q1", "text": "a"}\n')
        zf.writestr("s/qrels/test.tsv", b"query-id\tcorpus-id\tscore\nq1\td1\t1\n")
        zf.writestr("s/corpus.jsonl.gz", bomb)
    cases.append(("testset beir zip member", "/api/v1/testsets", {"file": ("b.zip", buf.getvalue())},
                  {"format": "beir"}))
    for fmt in ("trec", "json", "ranked"):
        cases.append((f"run file ({fmt})", "/api/v1/runs", {"file": (f"r.{fmt}.gz", bomb)},
                      {"format": fmt, "test_set_id": str(ts)}))
    judging = {"pool": ("pool.jsonl", POOL), "queries": ("q.tsv", QUERIES), "corpus": ("c.tsv", CORPUS),
               "labels": ("l.qrels", LABELS),
               "provenance": ("l.qrels.provenance.jsonl",
                              b'{"query_id": "q1", "doc_id": "d1", "grade": 1, "source": "model"}\n')}
    for field in judging:
        cases.append((f"judging {field}", "/api/v1/judging",
                      {**judging, field: (judging[field][0] + ".gz", bomb)}, {}))
    return cases


def part_uploads(args: argparse.Namespace, tmp: Path) -> None:
    bomb = nested_bomb()
    print(f"\n## Upload fields: the {len(bomb):,}-byte nested gzip, rankscope serve --max-data-mb 8")
    print(f"{'field':26} {'status':>6} {'s':>6} {'+MiB':>6}  answer")
    with server(tmp, "--workers", "0", "--max-data-mb", "8") as (base, proc):
        ts = httpx.post(f"{base}/api/v1/testsets", files={"file": ("q.qrels", LABELS)}, data={"format": "trec"},
                        timeout=60).json()["id"]
        for name, path, files, form in _upload_cases(bomb, ts):
            before = _reset_peak(proc.pid)
            t0 = time.monotonic()
            r = httpx.post(f"{base}{path}", files=files, data=form, timeout=600)
            took = time.monotonic() - t0
            grown = _status(proc.pid, "VmHWM") - before
            try:
                said = r.json().get("errors", [{}])[0].get("problem") or r.text
            except ValueError:
                said = r.text
            print(f"{name:26} {r.status_code:6d} {took:6.1f} {grown:6d}  {_short(str(said))}")
        left = [f for f in (tmp / "srv-tmp").rglob("*") if f.is_file() and f.stat().st_size]
        print(f"files left in the server's temporary folder: {len(left)}")


# -- a large JSON run within the limits --------------------------------------------------------------
def part_json_run(args: argparse.Namespace, tmp: Path) -> None:
    path = tmp / "big.json.gz"
    n_docs = 100
    per_query = len(json.dumps({f"d{j:07d}": 0.123456 for j in range(n_docs)}))
    n_queries = max(1, int(args.json_mb * 1e6 // per_query))
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=6) as fh:
        fh.write("{")
        for i in range(n_queries):
            docs = ", ".join(f'"d{(i * 7919 + j) % 10_000_000:07d}": {1 - j / n_docs:.6f}' for j in range(n_docs))
            fh.write(("," if i else "") + f'"q{i}": {{{docs}}}')
        fh.write("}")
    raw = 0
    with gzip.open(path) as fh_in:
        while chunk := fh_in.read(1 << 24):
            raw += len(chunk)
    code = ("import sys, time; from rankscope.io import read_run; "
            "open('/proc/self/clear_refs', 'w').write('5'); "
            "rss = lambda k: int([l for l in open('/proc/self/status') if l.startswith(k)][0].split()[1]) // 1024; "
            "b = rss('VmRSS:'); t = time.monotonic(); r = read_run(sys.argv[1], format='json'); "
            "print(len(r), time.monotonic() - t, rss('VmHWM:') - b)")
    out = subprocess.run([PY, "-c", code, str(path)], capture_output=True, text=True, timeout=3600)
    rows, secs, grown = out.stdout.split() if out.returncode == 0 else ("-", "0", "0")
    print(f"\n## A JSON run within the limits: {raw / 1e6:.0f} MB ({path.stat().st_size / 1e6:.0f} MB gzip), "
          f"{n_queries} queries x {n_docs}")
    print(f"read_run: {float(secs):.1f} s, peak +{grown} MiB ({int(grown) * 2**20 / raw:.2f}x its size), "
          f"{rows} rows" + ("" if out.returncode == 0 else f"; failed: {_short(out.stderr[-300:])}"))
    path.unlink()


# -- framing -----------------------------------------------------------------------------------------
def part_framing(args: argparse.Namespace, tmp: Path) -> None:
    print("\n## Framing headers (X-Frame-Options; CSP frame-ancestors)")
    with server(tmp, "--workers", "0") as (base, _):
        ts = httpx.post(f"{base}/api/v1/testsets", files={"file": ("q.qrels", LABELS)}, data={"format": "trec"},
                        timeout=60).json()["id"]
        run = httpx.post(f"{base}/api/v1/runs", files={"file": ("r.trec", b"q1 Q0 d1 1 1.0 r\n")},
                         data={"test_set_id": str(ts)}, timeout=60).json()["id"]
        foreign = {"Host": "evil.example"}
        for label, path, headers in (("GET /", "/", {}), (f"GET /runs/{run}/delete", f"/runs/{run}/delete", {}),
                                     ("GET /judging", "/judging", {}), ("GET /api/v1/testsets", "/api/v1/testsets", {}),
                                     ("GET /no/such/page", "/no/such/page", {}),
                                     ("GET / with a foreign Host", "/", foreign)):
            r = httpx.get(f"{base}{path}", timeout=30, headers=headers)
            csp = r.headers.get("content-security-policy", "")
            fa = re.search(r"frame-ancestors [^;]*", csp)
            print(f"{label:34} {r.status_code}  {r.headers.get('x-frame-options', '-'):5}  "
                  f"{fa.group(0) if fa else '-'}")


# -- annotators --------------------------------------------------------------------------------------
def part_annotators(args: argparse.Namespace, tmp: Path) -> None:
    print("\n## Annotator identity and blind judging (no service token: the operator is anyone on loopback)")
    testset = {"queries": [{"id": "q1", "text": "what is bm25", "relevant": {"d1": 1}}],
               "corpus": {"d1": "BM25 is a ranking function", "d2": "Okapi"}}
    pool = b'{"query_id": "q1", "doc_id": "d1"}\n{"query_id": "q1", "doc_id": "d2"}\n'
    side = b"".join(json.dumps({"query_id": "q1", "doc_id": d, "grade": g, "source": "model",
                                "model": "MODEL-X", "prompt": "p"}).encode() + b"\n" for d, g in (("d1", 2), ("d2", 0)))
    rows: list[tuple[str, str]] = []
    with server(tmp, "--workers", "0") as (base, _), httpx.Client(base_url=base, timeout=30) as c:
        ts = c.post("/api/v1/testsets", files={"file": ("t.json", json.dumps(testset))}, data={"format": "json"})
        task = c.post("/api/v1/judging", files={"pool": ("p.jsonl", pool),
                                                "labels": ("l.qrels", b"q1 0 d1 2\nq1 0 d2 0\n"),
                                                "provenance": ("l.qrels.provenance.jsonl", side)},
                      data={"test_set_id": str(ts.json()["id"]), "order": "pool"}).json()["id"]
        items = c.get(f"/api/v1/judging/{task}/items").json()
        url = f"/api/v1/judging/{task}/judgments"
        tokens: dict[str, str] = {}
        for who, blind in (("alice", True), ("bob", False), ("carol", True)):
            r = c.post(f"/api/v1/judging/{task}/annotators", json={"name": who, "blind": blind})
            if r.status_code == 201:
                tokens[who] = r.json()["token"]
        invited = bool(tokens)

        def as_(who: str) -> dict[str, str]:
            return {"X-Annotator-Token": tokens[who]} if invited else {}

        def named(who: str) -> dict[str, str]:
            return {} if invited else {"annotator": who}

        r = c.post(url, json={"item_id": items[0]["id"], "grade": 3, "note": "alice's secret", **named("alice")},
                   headers=as_("alice"))
        rows.append(("alice judges (her own token, or her name)", str(r.status_code)))
        r = c.get(url, params={"annotator": "alice"}, headers=as_("bob"))
        leaked = "alice's secret" in r.text
        rows.append(("bob reads alice's notes", f"{r.status_code}, notes {'shown' if leaked else 'not shown'}"))
        r = c.post(url, json={"item_id": items[0]["id"], "annotator": "alice", "grade": 0}, headers=as_("bob"))
        grade = [j["grade"] for j in c.get(url, params={"annotator": "alice"}).json() if j["item_id"] == items[0]["id"]]
        rows.append(("bob posts a grade naming alice", f"{r.status_code}, alice's grade now {grade}"))
        r = c.post(url, json={"item_id": items[0]["id"], "annotator": "alice", "grade": 1})
        rows.append(("anyone posts naming alice, no token", str(r.status_code)))
        # a blind annotator's judging page
        if invited:
            page = httpx.Client(base_url=base, timeout=30)
            page.get(f"/judging/{task}/join", params={"token": tokens["carol"]})
            html = page.get(f"/judging/{task}/judge").text
        else:
            html = c.get(f"/judging/{task}/judge", params={"annotator": "carol"}).text
        rows.append(("blind annotator's page holds the pre-label", "yes" if "MODEL-X" in html else "no"))
        r = c.get(f"/api/v1/judging/{task}/items", params={"prelabels": "true"}, headers=as_("carol"))
        rows.append(("blind annotator asks /items?prelabels=true",
                     f"{r.status_code}, {'pre-labels served' if 'MODEL-X' in r.text else 'none served'}"))
        # bob looks at d2's pre-label, then says he did not
        c.get(f"/api/v1/judging/{task}/items", params={"prelabels": "true", "offset": 1, "limit": 1},
              headers=as_("bob"))
        r = c.post(url, json={"item_id": items[1]["id"], "grade": 0, "prelabel_shown": False, **named("bob")},
                   headers=as_("bob"))
        rows.append(("bob looked, then sends prelabel_shown false", str(r.status_code)))
        if r.status_code == 422:  # the service decides: judge without the field
            c.post(url, json={"item_id": items[1]["id"], "grade": 0, **named("bob")}, headers=as_("bob"))
        side_out = c.get(f"/api/v1/judging/{task}/provenance", params={"annotator": "bob"}).text
        rec: dict[str, Any] = next((json.loads(x) for x in side_out.splitlines() if '"d2"' in x), {})
        rows.append(("export: bob's d2 label", f"blind = {rec.get('blind', 'absent')}"))
    for what, got in rows:
        print(f"{what:46} {got}")


# -- retriever answers -------------------------------------------------------------------------------
def _fake() -> Any:
    sys.path.insert(0, str(ROOT / "tests"))
    from service.fake_retriever import FakeRetriever, live_testset  # the test suite's retriever

    return FakeRetriever, live_testset


def _live(c: httpx.Client, ts: int, url: str, concurrency: int) -> str:
    r = c.post("/api/v1/evaluations/live", json={"test_set_id": ts, "retriever_url": url, "metrics": ["mrr"],
                                                 "concurrency": concurrency, "retries": 0})
    if r.status_code != 202:
        raise SystemExit(f"live job refused: {r.status_code} {r.text}")
    return str(r.json()["id"])


def _wait(c: httpx.Client, job: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        out = c.get(f"/api/v1/evaluations/{job}").json()
        if out["status"] in ("done", "failed") or time.monotonic() > deadline:
            return dict(out)
        time.sleep(0.05)


def part_answers(args: argparse.Namespace, tmp: Path) -> None:
    fake, live_testset = _fake()
    print("\n## Retriever answers: 8 answers of 200 MB (streamed, no length) at concurrency 8")
    with fake() as retriever:
        port = retriever.url.split(":")[2].split("/")[0]
        with server(tmp, "--workers", "1", "--allow-retriever", f"127.0.0.1:{port}") as (base, proc), \
                httpx.Client(base_url=base, timeout=60) as c:
            ts = c.post("/api/v1/testsets", files={"file": ("t.json", json.dumps(live_testset(0, ["huge"] * 8)))},
                        data={"format": "json"}).json()["id"]
            before = _reset_peak(proc.pid)
            t0 = time.monotonic()
            job = _wait(c, _live(c, ts, retriever.url, 8), 900)
            grown = _status(proc.pid, "VmHWM") - before
            rows = c.get(f"/api/v1/evaluations/{job['id']}/live-results").json()
            errors = sorted({_short(str(r.get("error")), 110) for r in rows})
            print(f"job {job['status']} in {time.monotonic() - t0:.1f} s; server peak +{grown} MiB; "
                  f"{sum(1 for r in rows if r.get('error'))} of {len(rows)} queries failed: {errors}")


# -- fairness ----------------------------------------------------------------------------------------
def part_fairness(args: argparse.Namespace, tmp: Path) -> None:
    fake, live_testset = _fake()
    print("\n## Fairness: 4 quick queries submitted 1 s after two slow jobs of 8 queries each (concurrency 2)")
    for extra in ([], ["--live-workers", "2"]):
        with fake(slow=6.0, trickle_limit=6.0) as slow, fake() as quick:
            ports = [u.split(":")[2].split("/")[0] for u in (slow.url, quick.url)]
            allow = [a for p in ports for a in ("--allow-retriever", f"127.0.0.1:{p}")]
            with server(tmp, *allow, "--retriever-timeout", "30", *extra) as (base, _), \
                    httpx.Client(base_url=base, timeout=60) as c:
                def up(data: Any, name: str) -> int:
                    return int(c.post("/api/v1/testsets", files={"file": (f"{name}.json", json.dumps(data))},
                                      data={"format": "json", "name": name}).json()["id"])

                hang, trickle = up(live_testset(0, ["slow"] * 8), "hanging"), up(live_testset(0, ["trickle"] * 8), "tr")
                small = up(live_testset(4), "quick")
                _wait(c, _live(c, small, quick.url, 2), 120)  # warm
                t0 = time.monotonic()
                _wait(c, _live(c, small, quick.url, 2), 120)
                alone_s = time.monotonic() - t0
                slow_jobs = [_live(c, hang, slow.url, 2), _live(c, trickle, slow.url, 2)]
                time.sleep(1.0)
                t0 = time.monotonic()
                job = _wait(c, _live(c, small, quick.url, 2), 300)
                waited = time.monotonic() - t0
                t1 = time.monotonic()
                finished = [_wait(c, j, 600)["status"] for j in slow_jobs]
                print(f"live workers {extra[1] if extra else 'default'}: quick job alone {alone_s:.2f} s; behind the "
                      f"slow ones it took {waited:.1f} s ({job['status']}); the slow ones: {finished}, "
                      f"{time.monotonic() - t1 + waited:.0f} s after it was submitted")


PARTS = {"readers": part_readers, "uploads": part_uploads, "json-run": part_json_run, "framing": part_framing,
         "annotators": part_annotators, "answers": part_answers, "fairness": part_fairness}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("parts", nargs="*", help=f"some of: {', '.join(PARTS)} (default: all)")
    ap.add_argument("--limit-mb", type=float, default=16, help="RANKSCOPE_MAX_DECOMPRESSED_MB of the readers")
    ap.add_argument("--bomb", choices=("nested", "single"), default="nested",
                    help="readers: a gzip of ten gzip members (nested) or one gzip layer of 640 MiB (single)")
    ap.add_argument("--json-mb", type=float, default=100, help="size of the JSON run of json-run, uncompressed")
    args = ap.parse_args()
    unknown = [p for p in args.parts if p not in PARTS]
    if unknown:
        ap.error(f"unknown part(s) {unknown}; choose from {', '.join(PARTS)}")
    import rankscope

    print(f"rankscope from {Path(rankscope.__file__).parent}")
    with tempfile.TemporaryDirectory(prefix="rankscope-attacks-") as tmp:
        for name in args.parts or list(PARTS):
            PARTS[name](args, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
