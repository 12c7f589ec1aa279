"""Prediction-powered metrics: the classical PPI mean against ppi_py, coverage of the true (human-labelled) metric
by simulated audits on DL-HARD, and the audit from `rankscope pool --audit-sample` to `rankscope agreement --audit`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from clirun import cli, outcome
from rankscope.comparison import compare
from rankscope.data import Qrels
from rankscope.errors import InvalidParameterError
from rankscope.labels.ppi import draw_audit, ppi_mean

from .test_judge_simulated import DLHARD, simulated


@pytest.mark.parametrize("seed", range(6))
def test_the_population_target_is_ppi_py(seed: int) -> None:
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    rng = np.random.default_rng(seed)
    n_all, n = 60, int(rng.integers(5, 30))
    y_all = rng.random(n_all)
    yhat = np.clip(y_all + rng.normal(0.05, 0.1, n_all), 0, 1)
    audited = np.sort(rng.choice(n_all, n, replace=False))
    rest = np.setdiff1d(np.arange(n_all), audited)
    est = ppi_mean(yhat, y_all[audited], audited, alpha=0.1, target="population")
    lo, hi = ppi_mean_ci(y_all[audited], yhat[audited], yhat[rest], alpha=0.1, lam=1)
    point = ppi_mean_pointestimate(y_all[audited], yhat[audited], yhat[rest], lam=1)
    assert (est.value[0], est.low[0], est.high[0]) == pytest.approx((float(np.ravel(point)[0]), float(np.ravel(lo)[0]),
                                                                     float(np.ravel(hi)[0])))


def test_the_queries_target_by_hand() -> None:
    yhat = np.array([0.2, 0.4, 0.6, 0.8, 0.5, 0.3, 0.1, 0.9])
    frame = np.array([True] * 6 + [False] * 2)  # two queries had nothing for the model to judge
    audited = np.array([0, 2, 5])
    y = np.array([0.3, 0.5, 0.3])
    est = ppi_mean(yhat, y, audited, frame=frame, alpha=0.05)
    delta = y - yhat[audited]
    from scipy.stats import t

    se = 6 / 8 * np.sqrt((1 - 3 / 6) * delta.var(ddof=1) / 3)
    assert est.value[0] == pytest.approx(yhat.mean() + 6 / 8 * delta.mean())
    assert est.high[0] - est.value[0] == pytest.approx(t.ppf(0.975, 2) * se)
    full = ppi_mean(yhat, y, audited, frame=frame)
    assert full.human_value[0] == pytest.approx((0.1 + 0.9) / 8 + 6 / 8 * y.mean())
    with pytest.raises(InvalidParameterError, match="drawn from 6 of 8"):
        ppi_mean(yhat, y, audited, frame=frame, target="population")


@pytest.mark.slow
@pytest.mark.skipif(not DLHARD.exists(), reason="needs ../shared/data/runs_dl_hard")
@pytest.mark.parametrize("judge", ["p0.0", "p0.2", "p0.4", "+1"])
def test_ppi_covers_the_human_metric_and_is_narrower(judge: str) -> None:
    from rankscope.io import read_qrels, read_trec_run

    from .test_judge_simulated import RUNS

    human = read_qrels(DLHARD / "dl_hard-passage.qrels")
    runs = {n: read_trec_run(DLHARD / "baselines" / "passage" / f"{n}.run") for n in RUNS}
    ch = compare(human, runs, ["ndcg@10"], relevance_level=2, bootstrap=1)
    cm = compare(simulated(human, judge, 7), runs, ["ndcg@10"], relevance_level=2, bootstrap=1)
    assert list(ch.per_query("ndcg@10")[0]) == list(cm.per_query("ndcg@10")[0])
    y, yhat = ch.per_query("ndcg@10")[1], cm.per_query("ndcg@10")[1]
    a, b = np.triu_indices(len(RUNS), k=1)
    samples, n, alpha = 250, 20, 0.05
    rng = np.random.default_rng(11)
    for what, truth_rows, est_rows in (("runs", y, yhat), ("differences", y[b] - y[a], yhat[b] - yhat[a])):
        truth = truth_rows.mean(axis=1)
        hits = np.zeros(len(truth))
        width = human_width = 0.0
        for _ in range(samples):
            audited = np.sort(rng.choice(y.shape[1], n, replace=False))
            e = ppi_mean(est_rows, truth_rows[:, audited], audited, alpha=alpha)
            hits += (e.low <= truth + 1e-12) & (truth - 1e-12 <= e.high)
            width += float((e.high - e.low).mean()) / samples
            human_width += float((e.human_high - e.human_low).mean()) / samples
        coverage = hits / samples
        floor = 1 - alpha - 2 * np.sqrt(alpha * (1 - alpha) / samples)
        print(f"{judge} {what}: PPI coverage {coverage.mean():.3f} (lowest {coverage.min():.3f}, floor {floor:.3f}); "
              f"mean width {width:.4f} vs human-only {human_width:.4f}")
        assert coverage.mean() >= floor  # over the runs (or pairs); one pair of near-identical runs can dip lower
        assert width < human_width


def test_audit_sample_then_ppi_from_the_command_line(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    qs = [f"q{i:02d}" for i in range(30)]
    human = {q: {f"d{j}": int(rng.integers(0, 4)) for j in range(8)} for q in qs}
    model = {q: {d: int(np.clip(g + rng.integers(-1, 2), 0, 3)) for d, g in docs.items()} for q, docs in human.items()}
    for name in ("a", "b"):
        lines = [f"{q} Q0 d{j} {r + 1} {10 - r + rng.random()} {name}\n"
                 for q in qs for r, j in enumerate(rng.permutation(8))]
        (tmp_path / f"{name}.trec").write_text("".join(lines))
    from rankscope.labels.provenance import Labels

    Labels.from_qrels(Qrels.from_dict(model), "model", model="m", prompt="p").write(tmp_path / "model.qrels")
    runs = [str(tmp_path / "a.trec"), str(tmp_path / "b.trec")]
    code, out, err = outcome(cli("pool", "--runs", *runs, "--depth", "5", "--out", tmp_path / "pool.jsonl",
                               "--audit-sample", "10", "--audit-out", tmp_path / "audit.jsonl", "--seed", "4",
                                 width=80))
    assert code == 0, err
    sample = json.loads((tmp_path / "audit.jsonl.sample.json").read_text())
    assert len(sample["sampled"]) == 10 and len(sample["frame"]) == 30 and sample["seed"] == 4
    assert sample["sampled"] == list(draw_audit(qs, 10, seed=4).sampled)
    audit_pairs = [json.loads(x) for x in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert {r["query_id"] for r in audit_pairs} == set(sample["sampled"])
    people = {q: human[q] for q in sample["sampled"]}  # what people would say in the dashboard
    Qrels.from_dict(people).to_dict()
    (tmp_path / "people.qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in people.items()
                                                   for d, g in docs.items()))
    code, out, err = outcome(cli("agreement", "--qrels", tmp_path / "people.qrels", "--judged",
                                 tmp_path / "model.qrels",
                               "--runs", *runs, "--audit", tmp_path / "audit.jsonl", "-m", "ndcg@5",
                               "--format", "json", width=80))
    assert code == 0, err
    ppi = json.loads(out)["ppi"]
    assert ppi["audited"] == 10 and ppi["queries"] == 30 and ppi["target"] == "queries"
    rows = ppi["metrics"]["ndcg@5"]["runs"]
    assert [r["name"] for r in rows] == ["a", "b"] and len(ppi["metrics"]["ndcg@5"]["differences"]) == 1
    truth = compare(Qrels.from_dict(human), {"a": runs[0], "b": runs[1]}, ["ndcg@5"]).means
    for r in rows:
        lo, hi = r["ppi_interval"]
        assert lo < r["ppi"] < hi and abs(r["ppi"] - truth[r["name"]]["ndcg@5"]) < 0.2
    code, out, err = outcome(cli("agreement", "--qrels", tmp_path / "people.qrels", "--judged",
                                 tmp_path / "model.qrels",
                               "--runs", *runs, "--audit", tmp_path / "audit.jsonl", "-m", "ndcg@5", width=80))
    assert code == 0 and "prediction-powered" in out
