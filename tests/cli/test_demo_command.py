"""`rankscope demo --quick` end to end: tables, TREC runs and results.json; `rankscope datasets list`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clirun import cli
from rankscope.cli.demo_cmd import METRICS, SYSTEMS, sample_queries, shrink
from rankscope.datasets import load_dataset
from rankscope.engine import evaluate
from rankscope.io import read_run
from rankscope.retrieval.fusion import fuse


def test_datasets_list() -> None:
    res = cli("datasets", "list", "--json", width=80)
    assert res.returncode == 0, res.stdout + res.stderr
    assert {d["name"] for d in json.loads(res.stdout)} == {"cranfield", "cmrc2018"}
    res = cli("datasets", "list", width=80)
    assert res.returncode == 0 and "cmrc2018" in res.stdout and "CC BY-SA 4.0" in res.stdout


def test_quick_subset_keeps_judged_documents() -> None:
    ts = shrink(load_dataset("cranfield"), None, quick=True)
    assert len(ts) == 5 and ts.corpus is not None
    assert {d for docs in ts.judgments().values() for d in docs} <= set(ts.corpus)
    assert len(shrink(load_dataset("cmrc2018"), 100, quick=False)) == 100
    assert sample_queries(["a", "b", "c"], None) == ["a", "b", "c"]


def test_quick_demo_writes_runs_and_results(tmp_path: Path) -> None:
    out = tmp_path / "demo-out"
    res = cli(*["demo", "--quick", "--out", str(out), "--cache-dir", str(tmp_path / "cache"),
                           "--no-progress"], width=80)
    assert res.returncode == 0, res.stdout + res.stderr
    for title in ("Cranfield (en)", "CMRC 2018"):
        assert title in res.stdout
    assert "p95 ms" in res.stdout and "hybrid" in res.stdout
    report = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert set(report["datasets"]) == {"cranfield", "cmrc2018"}
    for name, data in report["datasets"].items():
        assert data["queries"] == 5
        assert set(data["systems"]) == set(SYSTEMS)
        qrels = load_dataset(name).qrels
        runs = {}
        for system, summary in data["systems"].items():
            assert set(summary["metrics"]) == set(METRICS)
            assert all(0.0 <= v <= 1.0 for v in summary["metrics"].values())
            assert summary["latency_ms"]["p95"] >= summary["latency_ms"]["p50"] > 0
            runs[system] = read_run(out / summary["run_file"])
            # the written run re-scores to the reported numbers
            again = evaluate(qrels, runs[system], METRICS, missing="ignore", depth=100).mean()
            assert again == pytest.approx(summary["metrics"])
        # the hybrid run is RRF of the two others
        fused = fuse([runs["bm25"], runs["dense"]], "rrf")
        assert evaluate(qrels, fused, ["mrr"], missing="ignore", depth=100).mean() == pytest.approx(
            {"mrr": data["systems"]["hybrid"]["metrics"]["mrr"]}
        )
        assert data["comparison"]["baseline"] == "bm25"
    # Chinese: the multilingual dense model, its passage vectors from the shipped file (checked)
    cmrc = report["datasets"]["cmrc2018"]
    assert cmrc["dense"]["model"].startswith("intfloat/multilingual-e5-small")
    assert cmrc["dense"]["embeddings"].startswith("prebuilt: 25 of 25")
    assert cmrc["dense"]["prebuilt_check"]["min_cosine"] >= 0.999
    assert cmrc["systems"]["dense"]["metrics"]["mrr"] > 0.5
    assert report["datasets"]["cranfield"]["dense"]["model"].startswith("sentence-transformers/all-MiniLM-L6-v2")
    assert all(s["latency_kind"] == "per query" for d in report["datasets"].values() for s in d["systems"].values())


def test_demo_rejects_unknown_dataset(tmp_path: Path) -> None:
    res = cli("demo", "--quick", "--dataset", "nope", "--out", tmp_path, width=80)
    assert res.returncode == 2
    assert "unknown dataset 'nope'" in res.stderr
