"""Nothing a user must read or type is cut off or broken apart, at any terminal width, in English or Chinese.

Every command's output and every command's ``--help`` is rendered at 60, 80 and 120 columns in both
languages and compared with the same command rendered at a width nothing wraps at.  What the terminal shows
is checked as the terminal shows it (a line wider than the terminal continues on the next line, cut by
cells), and a rendering fails on:

* a cut value: more ``…`` (rich's ellipsis for a cell it cut) or ``‹`` than the unconstrained output has;
* a break inside a number or a name a user types: every number (``0.0203``, ``-0.026``, ``92/18/1``), name
  (``num_rel_ret``, ``span_recall@5``, ``fixed:128``, ``--max-permutations``), comparison (``p = 0.0203``,
  ``recall@5 >= 0.8``) and short bracketed value (``（差值 +0.0186）``) of the unconstrained output must be
  whole on one line of the narrow one (a name list such as ``production:minimum|good|excellent`` may break
  after a ``|``);
* a line holding only closing punctuation, or a number and its closing mark (``0.999。``).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len, chop_cells

from clirun import cli

DATA = (Path(__file__).resolve().parents[2] / ".." / "shared" / "data").resolve()
WIDTHS = (60, 80, 120)
WIDE = 2000  # nothing wraps
LANGS = ("en", "zh")

_DL_HARD = DATA / "runs_dl_hard" / "dataset"
_RUNS = _DL_HARD / "baselines" / "passage"
#: real runs whose names hold the characters a name may hold (``+``, parentheses)
RUN_FILES = ("bm25.run", "bm25+bert(zs).run", "bm25+rm3.run")

#: a name or a number, as typed (ASCII, no space): a run of these characters holding a digit, ``@``, ``_`` or ``:``,
#: or an option (``--depth``)
_NAME = re.compile(r"[A-Za-z0-9_@:.+\-=<>%/|]+")
#: a value beside what it is the value of
_EXPR = re.compile(r"[^\s│┃\u3000-\u303f\u3400-\u9fff\uff00-\uffef]+ (?:=|>=|<=|≥|≤|±|<|>) [-+]?\d[\d.e+-]*%?")
#: a number in full-width brackets beside its label (``（差值 +0.0186）``)
_BRACKET = re.compile(r"（[^（）\s]{1,6} [-+]?\d[\d.,]*%?）")
_CLOSING = "，。、；：！？）」』》〉】…％,.;:!?)]}%”’"
_LONE = re.compile(rf"[-+]?[\d.,%]*[{re.escape(_CLOSING)}]+")
_BORDERS = re.compile(r"[│┃║|╭╮╰╯─━┏┓┗┛┡┩┠┨┣┫╇╋┳┻┼┬┴├┤┌┐└┘═]")
#: what varies from one run to the next (a time): not compared
_TIMED = re.compile(r"\d[\d.]*\s*(?:ms|s|min|it/s|q/s)\b|elapsed|\d+:\d\d|毫秒|秒")


def _atoms(text: str, width: int) -> set[str]:
    """What must stay whole in ``text`` (an unconstrained rendering), as far as it fits in ``width`` at all."""
    found: set[str] = set()
    for line in text.splitlines():
        if _TIMED.search(line):
            continue
        for match in _NAME.finditer(line):
            word = match.group().strip(".:,;=/-")
            if not word or not (re.search(r"[\d@_:]", word) or match.group().startswith("--")):
                continue
            found.update(part.strip(".:,;=/-") for part in word.split("|") if part.strip(".:,;=/-"))
        found.update(m.group() for m in _EXPR.finditer(line))
        found.update(m.group() for m in _BRACKET.finditer(line))
    return {a for a in found if cell_len(a) <= width - 12}


def shown(text: str, width: int) -> list[str]:
    """The lines a terminal ``width`` cells wide shows for ``text``: a longer line continues on the next."""
    out: list[str] = []
    for line in text.splitlines():
        out.extend(chop_cells(line, width) if cell_len(line) > width else [line])
    return out


def problems(wide: str, narrow: str, width: int) -> list[str]:
    """What a rendering at ``width`` cuts or breaks, compared with the unconstrained ``wide`` one."""
    lines = shown(narrow, width)
    found = []
    for mark in ("…", "‹"):
        if sum(line.count(mark) for line in lines) > wide.count(mark):
            cut = [line for line in lines if mark in line]
            found.append(f"cut ({mark}): " + " | ".join(cut[:4]))
    flat = [_BORDERS.sub(" ", line) for line in lines]
    for atom in sorted(_atoms(wide, width)):
        if not any(atom in line for line in flat):
            found.append(f"broken: {atom!r}")
    wide_lines = {_BORDERS.sub(" ", line).strip() for line in wide.splitlines()}
    for i, line in enumerate(flat):
        body = line.strip()
        if body and _LONE.fullmatch(body) and body not in wide_lines and not _closes_cell(lines, i, body):
            found.append(f"lone closing mark: {body!r}")
    return found


def _closes_cell(lines: list[str], i: int, body: str) -> bool:
    """Whether ``body``, alone on table line ``i``, is the end of a bracketed value its cell opened on the line
    above (an interval wrapped at its comma, ``[+0.042,`` then ``+0.150]``) or the first line of a cell (a header
    ``95%`` above ``置信区间``): a wrapped cell, not a paragraph's last word left alone."""
    line = lines[i]
    if not _BORDERS.search(line) or i == 0:
        return False
    cells = re.split(r"[│┃]", line)
    index = next((k for k, c in enumerate(cells) if c.strip() == body), None)
    above = re.split(r"[│┃]", lines[i - 1])
    if index is None:
        return False
    cell_above = above[index].strip() if len(above) == len(cells) else ""
    if not cell_above:
        return True  # the cell starts here
    closing = body[-1]
    opening = {"]": "[", ")": "(", "）": "（"}.get(closing)
    return opening is not None and cell_above.count(opening) > cell_above.count(closing)


# -- the inputs -------------------------------------------------------------------------------------------------

def require(path: Path) -> Path:
    if not path.exists():
        pytest.fail(f"test data missing: {path} (the tests need ../shared/data beside the repo)")
    return path


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Real DL-HARD runs and qrels, a test set, span judgments and a small Chinese chunking set."""
    import rankscope as rs
    from rankscope.data.spans import SpanQrels
    from rankscope.data.testset import Query, TestSet
    from rankscope.io import write_run

    d = tmp_path_factory.mktemp("widths")
    shutil.copyfile(require(_DL_HARD / "dl_hard-passage.qrels"), d / "qrels.txt")
    for name in RUN_FILES:
        shutil.copyfile(require(_RUNS / name), d / name)
    # labels from another judge: the same qrels with every third grade moved by one
    lines = (d / "qrels.txt").read_text().splitlines()
    (d / "judged.qrels").write_text("".join(
        " ".join([*parts[:3], str((int(parts[3]) + 1) % 4 if i % 3 == 0 else int(parts[3]))]) + "\n"
        for i, parts in enumerate(line.split() for line in lines)))
    shutil.copyfile(Path(__file__).resolve().parents[2] / "examples" / "questions.json", d / "questions.json")
    topics = ["熊猫", "长城", "黄河", "故宫", "西湖", "泰山", "长江", "敦煌", "丝路", "兵马俑", "天坛", "漓江"]
    corpus, records, queries = {}, [], []
    for i, t in enumerate(topics):
        filler = "".join(f"这是一段关于{topics[(i + j) % len(topics)]}的背景介绍。" for j in range(1, 6))
        answer = f"{t}的答案是编号{i}号。"
        corpus[f"doc{i}"] = filler[:40] + answer + filler[40:]
        records.append({"query_id": f"q{i}", "doc_id": f"doc{i}", "start": 40, "end": 40 + len(answer)})
        queries.append(Query(f"q{i}", f"{t}的答案编号"))
    TestSet(queries, None, corpus, "topics", spans=SpanQrels.from_records(records, corpus=corpus)).to_json(
        d / "topics.json")
    spans = SpanQrels.from_records(records, corpus=corpus)
    spans.to_file(d / "spans.jsonl")
    rs.Chunking.from_records([{"chunk_id": f"doc{i}#{j}", "doc_id": f"doc{i}", "start": s, "end": min(s + 30, len(t))}
                              for i, t in enumerate(corpus.values()) for j, s in enumerate(range(0, len(t), 30))],
                             corpus=corpus).to_file(d / "chunks.csv")
    write_run(rs.Run.from_ranked_lists({f"q{i}": [f"doc{i}#1", f"doc{(i + 1) % 12}#1", f"doc{i}#2"]
                                        for i in range(12)}, name="chunks"), d / "chunks.trec")
    (d / "pool.jsonl").write_text("".join(json.dumps({"query_id": "q1", "doc_id": f"d1{i}"}) + "\n"
                                          for i in range(1, 4)))
    (d / "queries.jsonl").write_text('{"_id": "q1", "text": "what is bm25"}\n', encoding="utf-8")
    (d / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d1{i}", "text": f"passage {i} grade={i % 4}"}) + "\n"
                                            for i in range(1, 4)))
    # a judge that cannot read one passage, to see its failure lines
    (d / "bad-pool.jsonl").write_text("".join(json.dumps({"query_id": "q1", "doc_id": f"d2{i}"}) + "\n"
                                              for i in range(1, 5)))
    (d / "bad-corpus.jsonl").write_text("".join(
        json.dumps({"_id": f"d2{i}", "text": f"passage {i} " + ("[[malformed]]" if i == 1 else f"grade={i % 4}")})
        + "\n" for i in range(1, 5)))
    # the same run under another name: no difference on any query, the gate's undecided
    shutil.copy(d / "bm25.run", d / "bm25-again.run")
    # passages long enough to ask about, one the model copies and two it asks the same question of (synth's lines
    # for rejected questions)
    topics = ["okapi weighting of terms in long documents", "query expansion from the top ranked feedback documents",
              "dense passage encoders trained on question answer pairs",
              "pooling depth and the bias of test collections",
              "reciprocal rank fusion of lexical and neural rankings", "[[copy]] judged documents and their grades"]
    (d / "synth-corpus.jsonl").write_text("".join(
        json.dumps({"_id": f"s{i}", "text": f"This passage explains {t} in some detail, with examples."}) + "\n"
        for i, t in enumerate([*topics, "[[dup]] one shared topic", "[[dup]] another shared topic"])))
    # a run of 3 of the 50 queries (evaluate's warning that most are missing)
    kept = sorted({line.split()[0] for line in (d / "bm25.run").read_text().splitlines()})[:3]
    (d / "few.run").write_text("".join(line + "\n" for line in (d / "bm25.run").read_text().splitlines()
                                       if line.split()[0] in kept))
    # a third annotator, and an audit of 20 queries judged by people (pool --audit-sample) for agreement --audit
    (d / "third.qrels").write_text("".join(
        " ".join([*parts[:3], str(max(int(parts[3]) - 1, 0) if i % 4 == 1 else int(parts[3]))]) + "\n"
        for i, parts in enumerate(line.split() for line in lines)))
    done = cli("pool", "--runs", *RUN_FILES, "--depth", "10", "--out", "full-pool.jsonl", "--audit-sample", "20",
               "--seed", "7", cwd=d)
    assert done.returncode == 0, done.stderr
    sampled = set(json.loads((d / "full-pool.audit.jsonl.sample.json").read_text())["sampled"])
    (d / "audit-people.qrels").write_text("".join(line + "\n" for line in lines if line.split()[0] in sampled))
    return d


@pytest.fixture(scope="module")
def llm() -> Iterator[Any]:
    """An OpenAI-compatible stand-in on 127.0.0.1 (tests/labels/fake_llm.py) for judge and synth."""
    from labels.fake_llm import FakeLLM

    with FakeLLM() as server:
        yield server


@pytest.fixture(scope="module")
def monitors(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A running service (SQLite) holding a traffic monitor with an open alert and rejected events, for ``rankscope
    monitor``; ``events.jsonl`` in ``folder`` has one bad line (ingest's problem lines)."""
    import time

    import httpx

    from service.live_server import LiveServer
    from service.monitor_helpers import wait_for

    db = tmp_path_factory.mktemp("monitors") / "s.sqlite3"
    with LiveServer(f"sqlite:///{db}", monitor_poll_seconds=0.1) as server:
        r = httpx.post(f"{server.url}/api/v1/monitors", json={
            "name": "production-search-with-a-long-name", "kind": "traffic", "window_seconds": 60,
            "rules": ["empty_rate <= 0.1", "latency_p95 <= 50"]})
        assert r.status_code == 201, r.text
        t0 = (time.time() // 60 - 5) * 60
        lines = [json.dumps({"time": t0 + i, "query": f"q{i}", "results": [] if i % 2 else [{"id": "d1", "score": 0.5}],
                             "retriever": "bm25-2024-06-version-2", "latency_ms": 10 + i * 7}) for i in range(30)]
        lines.insert(3, '{"query": "x", "reslts": []}')
        (folder / "events.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        done = cli("monitor", "ingest", "events.jsonl", "-m", "1", "--server", server.url, cwd=folder)
        assert done.returncode == 0, done.stderr
        wait_for("the alert", lambda: httpx.get(f"{server.url}/api/v1/monitors/1").json()["status"] == "alert")
        yield server.url


# every command, with the options that change what it prints; "{out}" is a fresh folder per rendering
RUNS = ["bm25.run", "bm25+bert(zs).run", "bm25+rm3.run"]
CASES: dict[str, list[str]] = {
    "evaluate": ["evaluate", "qrels.txt", "bm25.run", "-m", "ndcg@10", "-m", "recall@5", "-m", "num_rel_ret"],
    "evaluate-scenario": ["evaluate", "qrels.txt", "bm25+bert(zs).run", "--scenario", "faq"],
    "evaluate-per-query": ["evaluate", "qrels.txt", "bm25.run", "-m", "ndcg@10", "--per-query"],
    "evaluate-many": ["evaluate", "--qrels", "qrels.txt", "--run", "bm25.run", "--run", "bm25+rm3.run",
                      "-m", "ndcg@10", "-m", "recall@5"],
    "evaluate-spans": ["evaluate", "--span-qrels", "spans.jsonl", "--chunks", "chunks.csv", "--run", "chunks.trec",
                       "-m", "span_recall@2", "-m", "ndcg@10"],
    "metrics": ["metrics"],
    "compare": ["compare", "--qrels", "qrels.txt", *RUNS, "-m", "ndcg@10", "-m", "recall@5",
                "--test", "randomization", "--correction", "holm", "--baseline", "bm25", "--permutations", "2000"],
    "compare-scenario": ["compare", "--qrels", "qrels.txt", *RUNS[:2], "--scenario", "faq"],
    "compare-tukey": ["compare", "--qrels", "qrels.txt", *RUNS, "-m", "ndcg@10", "--test", "tukey-hsd",
                      "--permutations", "500"],
    "check": ["check", "--qrels", "qrels.txt", "--run", "bm25+bert(zs).run", "--require", "recall@5>=0.8",
              "--preset", "production:good", "--baseline", "bm25.run", "--max-drop", "ndcg@10=0.02"],
    "power": ["power", "--qrels", "qrels.txt", "bm25.run", "bm25+bert(zs).run", "-m", "ndcg@10", "--delta", "0.02"],
    "power-sd": ["power", "--delta", "0.02", "--sd", "0.15"],
    "datasets": ["datasets", "list"],
    "testset-check": ["testset", "check", "questions.json"],
    "testset-convert": ["testset", "convert", "questions.json", "{out}/q.jsonl"],
    "pool": ["pool", "--runs", "bm25.run", "bm25+rm3.run", "--qrels", "qrels.txt", "--depth", "10",
             "--out", "{out}/pool.jsonl", "--per-query"],
    "agreement": ["agreement", "--qrels", "qrels.txt", "--judged", "judged.qrels", "--runs", *RUNS,
                  "--bootstrap", "200", "--test", "t"],
    "judge-dry-run": ["judge", "--pool", "pool.jsonl", "--queries", "queries.jsonl", "--corpus", "corpus.jsonl",
                      "--base-url", "http://127.0.0.1:9/v1", "--model", "judge-model", "--dry-run",
                      "--price-in", "0.5", "--price-out", "1.5"],
    "synth-dry-run": ["synth", "--corpus", "corpus.jsonl", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                      "--out", "{out}/synth.json", "--n", "2", "--dry-run"],
    "run": ["run", "bm25", "--testset", "questions.json", "--out", "{out}/bm25.trec", "--qrels-out", "{out}/q.txt"],
    "chunking": ["chunking", "topics.json", "-c", "fixed:12", "-c", "fixed:40", "-c", "sentences", "-k", "2"],
    "spans-to-qrels": ["spans", "to-qrels", "spans.jsonl", "--chunks", "chunks.csv", "-o", "{out}/q.trec"],
    "spans-split": ["spans", "split", "topics.json", "-c", "fixed:20", "-o", "{out}/chunks.csv"],
    "trec_eval": ["trec_eval", "-m", "ndcg_cut.10", "-m", "num_rel_ret", "qrels.txt", "bm25.run"],
    "evaluate-missing": ["evaluate", "qrels.txt", "few.run", "-m", "ndcg@10"],
    "check-undecided": ["check", "--qrels", "qrels.txt", "--run", "bm25-again.run", "--baseline", "bm25.run",
                        "--max-drop", "ndcg@10=0.02"],
    "check-t": ["check", "--qrels", "qrels.txt", "--run", "bm25+rm3.run", "--baseline", "bm25.run",
                "--max-drop", "ndcg@10=0.05", "--max-drop", "recall@100=2%", "--test", "t"],
    "fuse": ["fuse", "bm25.run", "bm25+rm3.run", "-o", "{out}/fused.trec", "--method", "wsum", "--weights", "0.3,0.7"],
    "fuse-supervised": ["fuse", *RUNS, "-o", "{out}/fused.trec", "--method", "posfuse", "--qrels", "qrels.txt"],
    "tune": ["tune", "bm25.run", "bm25+bert(zs).run", "--qrels", "qrels.txt", "--method", "rrf", "--method", "wsum",
             "--grid", "k=10,60", "--weight-step", "0.25", "--folds", "3"],
    "agreement-audit": ["agreement", "--qrels", "audit-people.qrels", "--judged", "judged.qrels", "-m", "ndcg@10",
                        "--runs", *RUNS, "--audit", "full-pool.audit.jsonl", "--bootstrap", "200"],
    "agreement-annotators": ["agreement", "--annotator", "qrels.txt", "--annotator", "judged.qrels",
                             "--annotator", "third.qrels", "--bootstrap", "200"],
    "judge": ["judge", "--pool", "bad-pool.jsonl", "--queries", "queries.jsonl", "--corpus", "bad-corpus.jsonl",
              "--base-url", "{llm}", "--model", "judge-model", "--out", "{out}/labels.qrels", "--no-cache",
              "--no-progress", "--parse-retries", "0", "--price-in", "0.5", "--price-out", "1.5"],
    "synth": ["synth", "--corpus", "synth-corpus.jsonl", "--base-url", "{llm}", "--model", "m",
              "--out", "{out}/synth.json", "--n", "5", "--no-progress"],
    "monitor-list": ["monitor", "list", "--server", "{server}"],
    "monitor-status": ["monitor", "status", "production-search-with-a-long-name", "--server", "{server}"],
    "monitor-ingest": ["monitor", "ingest", "events.jsonl", "-m", "1", "--server", "{server}"],
}
#: the commands that talk to the stand-in model server
NEEDS_LLM = {"judge", "synth"}
#: the commands that talk to a running service
NEEDS_SERVER = {"monitor-list", "monitor-status", "monitor-ingest"}


def _render(folder: Path, args: list[str], lang: str, width: int, tag: str,
            url: str = "") -> subprocess.CompletedProcess[str]:
    out = folder / "out" / f"{tag}-{lang}"  # the same path at every width (a path printed is compared too)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    argv = [a.replace("{out}", str(out)).replace("{llm}", url).replace("{server}", url) for a in args]
    return cli(*argv, env={"RANKSCOPE_LANG": lang}, cwd=folder, width=width)


def _check(folder: Path, args: list[str], lang: str, tag: str, url: str = "") -> Iterator[str]:
    wide = _render(folder, args, lang, WIDE, tag, url)
    assert wide.returncode in (0, 1, 3), wide.stderr  # 3: the gate's undecided
    for width in WIDTHS:
        done = _render(folder, args, lang, width, tag, url)
        assert done.returncode == wide.returncode, done.stderr
        for stream, full in (("stdout", wide.stdout), ("stderr", wide.stderr)):
            for found in problems(full, getattr(done, stream), width):
                yield f"{width} columns, {stream}: {found}"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_no_output_is_cut_or_broken(folder: Path, case: str, lang: str, request: pytest.FixtureRequest) -> None:
    url = (request.getfixturevalue("llm").url if case in NEEDS_LLM
           else request.getfixturevalue("monitors") if case in NEEDS_SERVER else "")
    found = list(_check(folder, CASES[case], lang, case, url))
    assert not found, "\n".join(found)


def _command_paths() -> list[str]:
    import importlib

    import typer

    from rankscope.cli.app import COMMAND_MODULES, app
    from rankscope.cli.help import commands

    for module in COMMAND_MODULES:
        importlib.import_module(module)
    return [path for path, _ in commands(typer.main.get_command(app))]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("path", _command_paths())
def test_no_help_is_cut_or_broken(folder: Path, path: str, lang: str) -> None:
    args = [*path.split(), "--help"] if path != "trec_eval" else ["trec_eval", "--help"]
    found = list(_check(folder, args, lang, "help-" + path.replace(" ", "-")))
    assert not found, "\n".join(found)


def test_the_check_finds_what_rich_cuts() -> None:
    """The checks themselves: rich's cut cell, a number broken by the terminal, a lone closing mark."""
    wide = "│ Recall@5 │ [-0.026, +0.010] │ 92/18/1 │\n差值为 0.999。"
    assert problems(wide, wide, 80) == []
    assert any(p.startswith("cut") for p in problems(wide, "│ Recall… │ [-0.026, +0.01… │ 92/18/1… │", 80))
    assert "broken: '0.999'" in problems(wide, "│ Recall@5 │ [-0.026, +0.010] │ 92/18/1 │\n差值为 0.9\n99。", 80)
    assert "lone closing mark: '0.999。'" in problems(wide, wide.replace("为 ", "为\n"), 80)
    assert "broken: 'p = 0.0203'" in problems("p = 0.0203", "x" * 58 + " p =\n0.0203", 60)
    # a table cell wrapped inside its interval is a wrapped cell; a number left alone under its cell's words is not
    cell = "│ NDCG@10 │ [+0.042, +0.150] │ 0.5 │\n│ a │ b │ c │"
    assert problems(cell, "│ NDCG@10 │ [+0.042, │ 0.5 │\n│         │ +0.150]  │     │\n│ a │ b │ c │", 80) == []
    assert "lone closing mark: '0.999。'" in problems(
        "│ 差值为 0.999。 │", "│ 差值为 │\n│ 0.999。 │", 80)


def _printed(render: Callable[[], None], width: int) -> str:
    """What ``render`` prints (it makes its own rich Console) in a terminal ``width`` columns wide."""
    import contextlib
    import io
    import os
    from unittest import mock

    out = io.StringIO()
    with mock.patch.dict(os.environ, {"COLUMNS": str(width)}), contextlib.redirect_stdout(out):
        render()
    return out.getvalue()


@pytest.mark.parametrize("lang", LANGS)
def test_the_demo_tables_fit(folder: Path, lang: str) -> None:
    """``rankscope demo``'s tables (its run takes minutes: the tables are printed from real comparisons here)."""
    import rankscope as rs
    from rankscope.chunking import compare_chunkings
    from rankscope.cli.demo_chunking import print_demo_table
    from rankscope.cli.demo_cmd import METRICS, SYSTEMS, print_table
    from rankscope.data.testset import TestSet
    from rankscope.datasets import dataset_info

    qrels = rs.read_qrels(folder / "qrels.txt")
    runs = {s: rs.read_run(folder / name) for s, name in zip(SYSTEMS, RUN_FILES)}
    comparison = rs.compare(qrels, runs, METRICS, baseline="bm25")
    summary = {"_comparison": comparison, "_notes": {s: [] for s in SYSTEMS}, "documents": 1400, "queries": 50,
               "dense": {"model": "sentence-transformers/all-MiniLM-L6-v2"},
               "systems": {s: {"metrics": comparison.means[s], "latency_ms": {"p50": 12.5, "p95": 180.25}}
                           for s in SYSTEMS}}
    cc = compare_chunkings(TestSet.from_json(folder / "topics.json"), ["fixed:12", "fixed:30", "fixed:60"], "bm25",
                           k=5, baseline="fixed:30", progress=False)
    for render in (lambda: print_table("cranfield", dataset_info("cranfield"), summary, lang),
                   lambda: print_demo_table(cc, lang)):
        wide = _printed(render, WIDE)
        found = [f"{w} columns: {p}" for w in WIDTHS for p in problems(wide, _printed(render, w), w)]
        assert not found, "\n".join(found)


def test_captions_are_prose_and_wrapped_lines_are_indented(folder: Path) -> None:
    """The comparison's policy line is printed under the table as prose, from the left margin (not squeezed to the
    table's width and centred); an advice or explanation continues under its text, not under its bullet."""
    done = cli("compare", "--qrels", "qrels.txt", *RUNS[:2], "-m", "ndcg@10", cwd=folder, width=80)
    lines = done.stdout.splitlines()
    policy = next(i for i, line in enumerate(lines) if line.startswith("50 queries · Relevance level 1"))
    assert lines[policy + 1].startswith("depth: –.") or not lines[policy + 1].startswith(" ")
    for out in (done.stdout, cli("evaluate", "qrels.txt", "bm25.run", "-m", "ndcg@10,recall@5", cwd=folder,
                                 width=60).stdout):
        lines = out.splitlines()
        bullets = [i for i, line in enumerate(lines) if line.startswith("  • ")]
        assert bullets
        for i in bullets:
            following = lines[i + 1] if i + 1 < len(lines) else ""
            assert following.startswith(("    ", "  • ")) or not following.startswith(" "), (lines[i], following)
        continued = [lines[i + 1] for i in bullets if i + 1 < len(lines) and lines[i + 1].startswith("    ")]
        assert continued  # the long ones do continue, indented
