"""Simulated judges of known quality on DL-HARD (random grades with probability p, or every grade one step up):
the intervals resample queries, the readings follow the intervals, the biased judge is flagged.  Also the query
bootstrap against a plain resampling of queries and the Stuart–Maxwell test against statsmodels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.contingency_tables import SquareTable

from rankscope.data import Qrels
from rankscope.io import read_qrels, read_trec_run
from rankscope.labels.agreement import label_agreement, stuart_maxwell
from rankscope.labels.reading import read_bias, read_label_agreement, read_ranking_agreement
from rankscope.labels.system_ranking import ranking_agreement

DLHARD = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "runs_dl_hard" / "dataset"
RUNS = ["bm25", "bm25+rm3", "bm25+bert(zs)", "bm25+t5(zs)", "bm25+rm3+bert(zs)", "bm25+rm3+t5(zs)"]
needs_data = pytest.mark.skipif(not DLHARD.exists(), reason="needs ../shared/data/runs_dl_hard")


def simulated(human: Qrels, judge: str, seed: int) -> Qrels:
    """A judge of known quality: ``p0.2`` random grades for 20% of the pairs, ``+1`` every grade one step up."""
    t = human.to_arrow()
    g = t["relevance"].to_numpy().copy()
    if judge == "+1":
        g = np.clip(g + 1, 0, 3)
    else:
        rng = np.random.default_rng(seed)
        hit = rng.random(len(g)) < float(judge[1:])
        g[hit] = rng.integers(0, 4, int(hit.sum()))
    return Qrels(t["query_id"], t["doc_id"], g)


@pytest.mark.parametrize("seed", range(4))
def test_the_query_bootstrap_is_a_plain_resampling_of_queries(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, nq = 600, 12
    q = rng.integers(0, nq, n)
    h = rng.choice(4, size=n, p=[0.5, 0.25, 0.15, 0.1])
    m = np.where(rng.random(n) < 0.2 + 0.3 * (q % 3 == 0), rng.integers(0, 4, n), h)  # some queries judged worse
    ids = [f"q{x:02d}" for x in q]
    docs = [f"d{i}" for i in range(n)]
    agr = label_agreement(Qrels(ids, docs, h), Qrels(ids, docs, m), resamples=2000, rng=seed)
    # the reference: 2,000 resamples of whole queries, each one's linearly weighted kappa from the sum of the picked
    # queries' 4x4 tables of grades (scikit-learn's kappa of the resampled pairs, checked equal on the first ten)
    gen = np.random.default_rng(100 + seed)
    picks = gen.integers(0, nq, (2000, nq))
    tables = np.zeros((nq, 4, 4))
    np.add.at(tables, (q, h, m), 1)
    observed = tables[picks].sum(axis=1)  # (2000, 4, 4)
    total = observed.sum(axis=(1, 2))
    expected = observed.sum(axis=2)[:, :, None] * observed.sum(axis=1)[:, None, :] / total[:, None, None]
    weights = np.abs(np.subtract.outer(np.arange(4), np.arange(4)))
    ref = 1 - (weights * observed).sum(axis=(1, 2)) / (weights * expected).sum(axis=(1, 2))
    for pick, kappa in zip(picks[:10], ref[:10]):
        rows = np.concatenate([np.flatnonzero(q == k) for k in pick])
        assert kappa == pytest.approx(cohen_kappa_score(h[rows], m[rows], weights="linear", labels=[0, 1, 2, 3]))
    lo, hi = np.quantile(ref, [0.025, 0.975])
    assert abs(lo - agr.kappa_weighted.low) < 0.03 and abs(hi - agr.kappa_weighted.high) < 0.03
    assert agr.queries == nq and agr.to_dict()["bootstrap"]["over"] == "queries"


@pytest.mark.parametrize("seed", range(8))
def test_stuart_maxwell_matches_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 5))
    table = rng.integers(1, 40, size=(k, k))
    chi2, df, p = stuart_maxwell(table)
    ref = SquareTable(table, shift_zeros=False).homogeneity(method="stuart_maxwell")
    assert (chi2, df, p) == pytest.approx((ref.statistic, ref.df, ref.pvalue))
    assert stuart_maxwell(np.diag([5, 3, 2])) == (0.0, 0, 1.0)  # the two sides agree on every pair


@pytest.fixture(scope="module")
def dlhard() -> tuple[Qrels, dict]:
    if not DLHARD.exists():
        pytest.skip("needs ../shared/data/runs_dl_hard")
    human = read_qrels(DLHARD / "dl_hard-passage.qrels")
    runs = {name: read_trec_run(DLHARD / "baselines" / "passage" / f"{name}.run") for name in RUNS}
    return human, runs


@needs_data
@pytest.mark.slow
@pytest.mark.parametrize("judge", ["p0.0", "p0.2", "p0.4", "+1"])
def test_simulated_judges_on_dl_hard(dlhard: tuple[Qrels, dict], judge: str) -> None:
    human, runs = dlhard
    model = simulated(human, judge, seed=7)
    agr = label_agreement(human, model, relevance_level=2, resamples=500, rng=1)
    bias = " ".join(read_bias(agr))
    assert agr.biased == (judge != "p0.0"), bias  # random grades are uniform, so they shift the grades up too
    if judge == "+1":
        assert agr.shift.low > 0.5 and "the model grades higher than people" in bias
    ra = ranking_agreement(human, model, runs, ["ndcg@10", "map", "mrr"], relevance_level=2, resamples=500, rng=1)
    lines = read_ranking_agreement(ra) + read_label_agreement(agr)
    for r, line in zip(ra.rankings, lines):
        practically = "practically as the human labels do" in line
        assert practically == (r.tau_interval[0] >= 0.9), line  # never from the point value alone
        assert r.tau_interval[0] <= r.tau <= r.tau_interval[1]
    if judge == "p0.0":
        assert all(r.tau == 1.0 and r.tau_interval == (1.0, 1.0) for r in ra.rankings)
    if judge == "p0.4":
        assert not any("practically" in line for line in lines)
    if judge == "+1":
        mrr = next(r for r in ra.rankings if r.metric == "mrr")
        assert all(d > 0.03 and lo > 0 for d, lo, _ in mrr.shifts)  # the bias moves every run's MRR up
