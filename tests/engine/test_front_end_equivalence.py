"""Every front end measures the same thing under every evaluation policy.

Random qrels and runs from a seeded generator (exact ties, scores that differ only below float32 precision,
queries missing from the run and queries the qrels do not know, unjudged documents, grades 0..3, a query with no
relevant document, a ranking that condensing empties) are scored under every combination of the
:class:`~rankscope.engine.policies.Policies` fields by: the API (``rankscope.evaluate``, a run in memory), the
streamed path (the run given by its path, read in small blocks), the command line's JSON
(``rankscope evaluate -f json -q`` and its ``--report x.json``), ``rankscope trec_eval -q`` (for the policies
trec_eval has flags for), the report content models (one run and a comparison: first relevant ranks, metric@k curves,
failing queries), a saved and loaded result; the slow part adds ``rankscope.ray.evaluate`` on a local Ray cluster
and the service API.  Per-query values, means, counts and first relevant ranks must be identical.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rankscope
from clirun import cli
from rankscope.engine.policies import Policies
from rankscope.gate import check
from rankscope.io import read_qrels, read_run
from rankscope.report.content import build_report
from rankscope.report.run_report import build_run_report

METRICS = ["mrr", "P@1", "P@3", "ndcg@5", "map", "recall@5", "first_rel_rank"]
#: trec_eval's name of each metric above (first_rel_rank has none): as asked (-m), as printed
TREC_NAMES = {"mrr": ("recip_rank", "recip_rank"), "P@1": ("P.1,3", "P_1"), "P@3": ("P.1,3", "P_3"),
              "ndcg@5": ("ndcg_cut.5", "ndcg_cut_5"), "map": ("map", "map"), "recall@5": ("recall.5", "recall_5")}
KMAX = 5

#: every value of every policy that changes what these inputs measure (``ties`` has one value)
POLICY_VALUES: dict[str, tuple[Any, ...]] = {
    "relevance_level": (1, 2),
    "missing": ("zero", "ignore"),
    "depth": (None, 4),
    "score_precision": ("float32", "float64"),
    "unjudged": ("keep", "condense"),
}
COMBOS = [dict(zip(POLICY_VALUES, values)) for values in itertools.product(*POLICY_VALUES.values())]
#: the command line costs ~0.3 s a call: the fast tier runs it for the defaults, each other value once, and all
#: of them at once (the slow tier for every combination)
CLI_FAST = [COMBOS[0], *(c for c in COMBOS if sum(c[k] != v[0] for k, v in POLICY_VALUES.items()) == 1), COMBOS[-1]]


def _combo_id(p: dict[str, Any]) -> str:
    return "-".join(f"{v}" for v in p.values())


def make_case(seed: int) -> tuple[str, str]:
    """Qrels and run text (TREC formats) drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    qrels_lines, run_lines = [], []
    pool = [f"d{i:02d}" for i in range(30)]
    for q in range(8):
        qid = f"q{q}"
        judged = rng.choice(pool, size=10, replace=False)
        grades = rng.integers(0, 4, size=10)
        if q == 4:  # no relevant document at any level
            grades[:] = 0
        qrels_lines += [f"{qid} 0 {d} {g}" for d, g in zip(judged, grades)]
        if q >= 6:  # judged, absent from the run
            continue
        k = int(rng.integers(5, 10))
        if q == 3:  # nothing judged retrieved: condensing leaves an empty ranking
            docs = [f"u{i}" for i in range(k)]
        else:
            docs = list(rng.choice(pool, size=k, replace=False))
        # exact ties, and scores apart only below float32 precision
        base = rng.choice([10.0, 10.5, 11.0], size=k)
        scores = base + rng.integers(0, 3, size=k) * 1e-7
        run_lines += [f"{qid} Q0 {d} {r + 1} {float(s)!r} sys" for r, (d, s) in enumerate(zip(docs, scores))]
    run_lines += [f"x{i} Q0 d0{i} 1 1.0 sys" for i in range(2)]  # queries the qrels do not know
    return "\n".join(qrels_lines) + "\n", "\n".join(run_lines) + "\n"


@pytest.fixture(scope="module", params=[11, pytest.param(12, marks=pytest.mark.slow)])
def case(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp(f"case{request.param}")
    qrels_text, run_text = make_case(request.param)
    (folder / "qrels.txt").write_text(qrels_text)
    (folder / "sys.trec").write_text(run_text)
    return folder / "qrels.txt", folder / "sys.trec"


def _table(res: Any) -> dict[str, dict[str, float]]:
    """``{query: {metric: value}}`` of a result."""
    ids = [str(q) for q in res.per_query.query_ids]
    return {q: dict(zip(res.labels, map(float, row))) for q, row in zip(ids, res.per_query.values)}


def _ranks(res: Any) -> dict[str, int]:
    return {q: int(v["first_rel_rank"]) for q, v in _table(res).items()}


def _failing(ranks: dict[str, int], k: int) -> list[str]:
    return sorted(q for q, r in ranks.items() if r == 0 or r > k)


def _cli_args(p: dict[str, Any]) -> list[str]:
    args = ["-l", str(p["relevance_level"]), "--missing", p["missing"], "--score-precision", p["score_precision"],
            "--unjudged", p["unjudged"]]
    return args + (["-M", str(p["depth"])] if p["depth"] is not None else [])


def _trec_eval_args(p: dict[str, Any]) -> list[str] | None:
    """trec_eval's flags for ``p``; None when trec_eval has none (it ranks by float32 scores only)."""
    if p["score_precision"] != "float32":
        return None
    args = ["-l", str(p["relevance_level"])] + (["-c"] if p["missing"] == "zero" else [])
    args += ["-M", str(p["depth"])] if p["depth"] is not None else []
    return args + (["-J"] if p["unjudged"] == "condense" else [])


def _api(case: tuple[Path, Path], p: dict[str, Any]) -> Any:
    qrels, run = case
    return rankscope.evaluate(read_qrels(qrels), read_run(run), METRICS, **p)


@pytest.mark.parametrize("p", COMBOS, ids=_combo_id)
def test_api_stream_reports_and_saved_results_agree(case: tuple[Path, Path], p: dict[str, Any],
                                                    tmp_path: Path) -> None:
    qrels_path, run_path = case
    res = _api(case, p)
    assert res.policies == Policies(**p)
    want, ranks, means = _table(res), _ranks(res), res.mean()
    counts = res.queries

    # the streamed path: the run given by its path, read a few rows at a time
    streamed = rankscope.evaluate(qrels_path, run_path, METRICS, block_rows=4, **p)
    assert (_table(streamed), streamed.mean(), streamed.queries, streamed.policies) == (want, means, counts,
                                                                                        res.policies)

    # the report of one run: first ranks, failing queries and metric@k curves
    rep = build_run_report(res, qrels=read_qrels(qrels_path), run=read_run(run_path), curves=True, kmax=KMAX)
    assert dict(zip(rep["query_ids"], rep["first_ranks"]["sys"])) == ranks, p
    k = rep["analysis"]["failing_k"]
    assert sorted(rep["analysis"]["failing"]["sys"]) == _failing(ranks, k), p
    curves = rep["curves"]["systems"]["sys"]
    assert curves["precision"][0] == round(means["P@1"], 6) and curves["precision"][2] == round(means["P@3"], 6)
    assert curves["ndcg"][4] == round(means["ndcg@5"], 6) and curves["recall"][4] == round(means["recall@5"], 6)

    # the report of a comparison: the run against itself reversed
    base = read_run(run_path)
    t = base.to_arrow()
    runs = {"sys": base, "rev": rankscope.Run.from_arrays(t.column(0), t.column(1), -t.column(2).to_numpy(), "rev")}
    comp = rankscope.compare(read_qrels(qrels_path), runs, METRICS[:-1], rng=0, permutations=200, bootstrap=50, **p)
    content = build_report(comp, qrels=read_qrels(qrels_path), runs=runs, kmax=KMAX)
    ids = [str(q) for q in comp.query_ids]
    assert {q: r for q, r in zip(ids, content["first_ranks"]["sys"])} == {q: ranks[q] for q in ids}, p
    ccurve = content["curves"]["systems"]["sys"]
    assert ccurve["precision"][0] == round(means["P@1"], 6) and ccurve["ndcg"][4] == round(means["ndcg@5"], 6)

    # the quality gate: each requirement's value is the mean, under the same policies
    gate = check(read_qrels(qrels_path), read_run(run_path), [f"{m}>=0" for m in METRICS[:-1]], **p)
    assert {o.label: o.value for o in gate.outcomes} == {m: means[m] for m in METRICS[:-1]}, p
    assert gate.to_dict()["policies"] == res.policies.to_dict()

    # a saved result keeps its values and policies
    rankscope.save(res, tmp_path / "saved.json")
    back = rankscope.load(tmp_path / "saved.json")
    assert (_table(back), back.mean(), back.policies) == (want, means, res.policies)



@pytest.mark.parametrize("p", [p if p in CLI_FAST else pytest.param(p, marks=pytest.mark.slow) for p in COMBOS],
                         ids=_combo_id)
def test_cli_json_report_and_trec_eval_agree(case: tuple[Path, Path], p: dict[str, Any], tmp_path: Path) -> None:
    qrels_path, run_path = case
    res = _api(case, p)
    want, ranks, means, counts = _table(res), _ranks(res), res.mean(), res.queries

    # the command line's JSON, and the report it writes
    report_path = tmp_path / "report.json"
    done = cli("evaluate", qrels_path, run_path, "-m", ",".join(METRICS), "-q", "-f", "json",
               "--report", report_path, *_cli_args(p))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["per_query"] == want and out["mean"] == means and out["policies"] == res.policies.to_dict()
    assert {k: out["queries"][k] for k in ("evaluated", "missing_from_run", "not_in_qrels")} == {
        "evaluated": counts.evaluated, "missing_from_run": counts.missing_from_run,
        "not_in_qrels": counts.not_in_qrels}
    written = json.loads(report_path.read_text())
    assert dict(zip(written["query_ids"], written["first_ranks"]["sys"])) == ranks

    # the command line's quality gate
    gate_path = tmp_path / "gate.json"
    needs = (f for m in METRICS[:-1] for f in ("--require", f"{m}>=0"))
    done = cli("check", "--qrels", qrels_path, "--run", run_path, *needs, "--json", gate_path, *_cli_args(p))
    assert done.returncode == 0, done.stderr
    gate = json.loads(gate_path.read_text())
    assert {o["label"]: o["value"] for o in gate["outcomes"]} == {m: means[m] for m in METRICS[:-1]}, p
    assert gate["policies"] == res.policies.to_dict()

    # trec_eval -q, for the policies it has flags for (4 decimals)
    flags = _trec_eval_args(p)
    if flags is not None:
        asked = dict.fromkeys(name for name, __ in TREC_NAMES.values())
        done = cli("trec_eval", "-q", *flags, *(f for name in asked for f in ("-m", name)), qrels_path, run_path)
        assert done.returncode == 0, done.stderr
        got: dict[tuple[str, str], str] = {}
        for line in done.stdout.splitlines():
            name, qid, value = line.split()
            got[name, qid] = value
        for label, (__, trec) in TREC_NAMES.items():
            assert got[trec, "all"] == f"{means[label]:.4f}", (label, p)
            for q, row in want.items():
                if (trec, q) in got:
                    assert got[trec, q] == f"{row[label]:.4f}", (label, q, p)


def test_the_known_drift_condensed_first_ranks_follow_the_scores() -> None:
    """With condensed lists, MRR 1.0 means every first relevant rank is 1: the report says so."""
    qrels = rankscope.Qrels.from_dict({"q1": {"a": 1}, "q2": {"d": 1}})
    run = rankscope.Run.from_ranked_lists({"q1": ["x", "y", "a"], "q2": ["z", "d"]}, name="sys")
    res = rankscope.evaluate(qrels, run, ["mrr", "P@1"], unjudged="condense")
    assert res.mean() == {"mrr": 1.0, "P@1": 1.0}
    rep = build_run_report(res, qrels=qrels, run=run, curves=True, kmax=3)
    assert rep["first_ranks"]["sys"] == [1, 1]
    assert rep["curves"]["systems"]["sys"]["precision"][0] == 1.0
    assert rep["analysis"]["failing"]["sys"] == []


# -- the slow front ends: a Ray cluster and the service ---------------------------------------------------------
@pytest.fixture(scope="module")
def ray_cluster() -> Any:
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": 80 << 20,
                                                      "include_dashboard": False})
    ray.init(address=c.address, logging_level="ERROR", log_to_driver=False)
    yield c
    ray.shutdown()
    c.shutdown()


@pytest.mark.slow
def test_ray_agrees_under_every_policy(case: tuple[Path, Path], ray_cluster: Any) -> None:
    from rankscope import ray as rray

    qrels_path, run_path = case
    for p in COMBOS:
        res = _api(case, p)
        got = rray.evaluate(read_qrels(qrels_path), run_path, METRICS, partitions=2, **p)
        assert (_table(got), got.mean(), got.queries, got.policies) == (_table(res), res.mean(), res.queries,
                                                                        res.policies), p


@pytest.mark.slow
def test_cli_engine_ray_agrees(case: tuple[Path, Path], ray_cluster: Any) -> None:
    qrels_path, run_path = case
    for p in COMBOS[::5]:
        done = cli("evaluate", qrels_path, run_path, "-m", ",".join(METRICS), "-q", "-f", "json",
                   "--engine", "ray", "--address", ray_cluster.address, *_cli_args(p))
        assert done.returncode == 0, done.stderr
        res = _api(case, p)
        assert json.loads(done.stdout)["per_query"] == _table(res), p


@pytest.mark.slow
def test_the_service_agrees_under_every_policy(case: tuple[Path, Path], tmp_path: Path) -> None:
    from service.conftest import make_client, upload_run, wait_job

    qrels_path, run_path = case
    graded: dict[str, dict[str, int]] = {}
    for line in qrels_path.read_text().splitlines():
        q, _, d, g = line.split()
        graded.setdefault(q, {})[d] = int(g)
    testset = {"queries": [{"id": q, "text": f"question {q}", "relevant": rel} for q, rel in graded.items()]}
    with make_client(f"sqlite:///{tmp_path / 'service.sqlite3'}") as c:
        r = c.post("/api/v1/testsets", files={"file": ("t.json", json.dumps(testset))},
                   data={"format": "json", "name": "random"})
        assert r.status_code == 201, r.text
        ts = r.json()["id"]
        run_id = upload_run(c, ts, run_path.read_text(), "sys")["id"]
        labels = METRICS[:-1]
        for p in COMBOS:
            r = c.post("/api/v1/evaluations", json={"test_set_id": ts, "run_ids": [run_id], "metrics": labels, **p})
            assert r.status_code == 202, r.text
            job = wait_job(c, r.json()["id"])
            assert job["status"] == "done", job
            res = _api(case, p)
            want, ranks = _table(res), _ranks(res)
            rows = c.get(f"/api/v1/evaluations/{job['id']}/queries", params={"limit": 1000}).json()["items"]
            assert {row["query_id"]: row["scores"] for row in rows} == {
                q: {m: v for m, v in row.items() if m in labels} for q, row in want.items()}, p
            assert {row["query_id"]: row["first_rank"] for row in rows} == ranks, p
            assert job["runs"][0]["means"] == {m: v for m, v in res.mean().items() if m in labels}, p
