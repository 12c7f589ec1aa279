"""Agreement of model labels with human labels: κ against scikit-learn, τ against scipy, τ_AP against a
plain implementation of Yilmaz et al. (2008), flipped verdicts against rankscope.compare."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score

from rankscope.comparison import compare
from rankscope.data import Qrels, Run
from rankscope.errors import NoOverlapError
from rankscope.labels.agreement import kappa_from_confusion, label_agreement
from rankscope.labels.system_ranking import ranking_agreement, tau_ap


def noisy(grades: np.ndarray, share: float, rng: np.random.Generator) -> np.ndarray:
    out = grades.copy()
    hit = rng.random(len(out)) < share
    out[hit] = np.clip(out[hit] + rng.choice([-1, 1], hit.sum()), 0, 3)
    return out


def qrels_pair(n: int, share: float, seed: int) -> tuple[Qrels, Qrels, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    h = rng.choice(4, size=n, p=[0.5, 0.25, 0.15, 0.1])
    m = noisy(h, share, rng)
    qs = [f"q{i % 7}" for i in range(n)]
    ds = [f"d{i}" for i in range(n)]
    return Qrels(qs, ds, h), Qrels(qs, ds, m), h, m


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("weights", ["linear", "quadratic", "none"])
def test_kappa_matches_scikit_learn(seed: int, weights: str) -> None:
    human, model, h, m = qrels_pair(300, 0.1 + 0.1 * seed, seed)
    agr = label_agreement(human, model, relevance_level=2, weights=weights, resamples=50)
    labels = list(range(min(h.min(), m.min()), max(h.max(), m.max()) + 1))
    sk_w = cohen_kappa_score(h, m, weights=None if weights == "none" else weights, labels=labels)
    assert agr.kappa_weighted.value == pytest.approx(sk_w, abs=1e-12)
    assert agr.kappa_binary.value == pytest.approx(cohen_kappa_score(h >= 2, m >= 2), abs=1e-12)
    assert agr.confusion.sum() == 300 and agr.pairs == 300
    assert agr.exact == pytest.approx(float(np.mean(h == m)))


def test_kappa_of_gapped_grades_uses_grade_distances() -> None:
    h, m = np.array([0, 0, 3, 3, 1, 0]), np.array([0, 1, 3, 0, 1, 0])
    agr = label_agreement(Qrels(["q"] * 6, list("abcdef"), h), Qrels(["q"] * 6, list("abcdef"), m), resamples=10)
    assert agr.grades == (0, 1, 2, 3)
    assert agr.kappa_weighted.value == pytest.approx(cohen_kappa_score(h, m, weights="linear", labels=[0, 1, 2, 3]))


def test_bootstrap_interval_is_reproducible_and_covers_the_value() -> None:
    human, model, _, _ = qrels_pair(500, 0.3, 1)
    a = label_agreement(human, model, resamples=400, rng=3, over="pairs")
    b = label_agreement(human, model, resamples=400, rng=3, over="pairs")
    assert a.kappa_weighted == b.kappa_weighted
    for iv in (a.kappa_binary, a.kappa_weighted):
        assert iv.low < iv.value < iv.high and iv.high - iv.low < 0.2
    # the multinomial draw of cells is the item bootstrap: compare with resampling the pairs themselves
    _, _, h, m = qrels_pair(500, 0.3, 1)
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 500, size=(400, 500))
    ref = np.array([cohen_kappa_score(h[i], m[i], weights="linear", labels=[0, 1, 2, 3]) for i in idx])
    lo, hi = np.quantile(ref, [0.025, 0.975])
    assert abs(lo - a.kappa_weighted.low) < 0.03 and abs(hi - a.kappa_weighted.high) < 0.03


def test_undefined_kappa_and_counts() -> None:
    human = Qrels.from_dict({"q": {"a": 1, "b": 1, "c": -1, "h": 0}})
    model = Qrels.from_dict({"q": {"a": 1, "b": 1, "c": 1, "m": 2}})
    agr = label_agreement(human, model, resamples=20)
    assert np.isnan(agr.kappa_binary.value) and agr.kappa_binary.to_dict()["value"] is None
    assert (agr.pairs, agr.negative, agr.human_only, agr.model_only) == (2, 1, 1, 1)
    with pytest.raises(NoOverlapError):
        label_agreement(Qrels.from_dict({"q": {"a": 1}}), Qrels.from_dict({"q": {"b": 1}}))
    assert float(kappa_from_confusion(np.array([[5, 0], [0, 5]]))) == 1.0


def tau_ap_reference(reference: list[float], estimate: list[float]) -> float:
    """Yilmaz, Aslam & Robertson (2008), as written in the paper, for untied scores."""
    ranked = sorted(range(len(estimate)), key=lambda i: -estimate[i])
    n = len(ranked)
    total = 0.0
    for i in range(1, n):
        item = ranked[i]
        correct = sum(1 for j in ranked[:i] if reference[j] > reference[item])
        total += correct / i
    return 2.0 / (n - 1) * total - 1.0


@pytest.mark.parametrize("seed", range(20))
def test_tau_ap_matches_the_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 12))
    ref = rng.permutation(n).astype(float)
    est = ref + rng.normal(0, 2, n)
    assert tau_ap(ref, est) == pytest.approx(tau_ap_reference(list(ref), list(est)))
    assert tau_ap(-ref, -est, higher_is_better=False) == pytest.approx(tau_ap_reference(list(ref), list(est)))
    assert tau_ap(ref, ref) == pytest.approx(1.0) and tau_ap(ref, -ref) == pytest.approx(-1.0)


def make_runs(qrels: Qrels, n_runs: int, seed: int) -> dict[str, Run]:
    """Runs of increasing quality: each ranks the relevant documents higher with more weight."""
    rng = np.random.default_rng(seed)
    t = qrels.to_arrow()
    qs, ds, gs = t["query_id"].to_pylist(), t["doc_id"].to_pylist(), t["relevance"].to_numpy()
    runs = {}
    for r in range(n_runs):
        scores = gs * (0.2 + 0.25 * r) + rng.normal(0, 1, len(gs))
        runs[f"sys{r}"] = Run(qs, ds, scores, name=f"sys{r}")
    return runs


def test_ranking_agreement_matches_compare_and_scipy() -> None:
    human, model, _, _ = qrels_pair(700, 0.4, 2)
    runs = make_runs(human, 5, 0)
    ra = ranking_agreement(human, model, runs, ["ndcg@10", "map"], test="t", alpha=0.05)
    ch = compare(human, runs, ["ndcg@10", "map"], test="t", alpha=0.05)
    cm = compare(model, runs, ["ndcg@10", "map"], test="t", alpha=0.05)
    for r in ra.rankings:
        hm = [ch.means[s][r.metric] for s in ch.systems]
        mm = [cm.means[s][r.metric] for s in ch.systems]
        assert r.human_means == pytest.approx(hm) and r.model_means == pytest.approx(mm)
        assert r.tau == pytest.approx(kendalltau(hm, mm).statistic)
        assert r.tau_ap == pytest.approx(tau_ap_reference(hm, mm))
    assert len(ra.verdicts) == 10 * 2 and ra.queries == 7
    for v in ra.verdicts:
        ph, pm = ch.pair(v.a, v.b, v.metric), cm.pair(v.a, v.b, v.metric)
        assert v.human == (int(np.sign(ph.diff)) if ph.significant else 0)
        assert v.model == (int(np.sign(pm.diff)) if pm.significant else 0)
        assert (v.kind is None) == (v.human == v.model)


def test_identical_labels_agree_perfectly() -> None:
    human, _, _, _ = qrels_pair(200, 0.0, 4)
    ra = ranking_agreement(human, human, make_runs(human, 4, 1))
    assert ra.rankings[0].tau == pytest.approx(1.0) and ra.rankings[0].tau_ap == pytest.approx(1.0)
    assert ra.flips == []
    agr = label_agreement(human, human, resamples=10)
    assert agr.kappa_weighted.value == 1.0 and agr.kappa_binary.value == 1.0


def test_ranking_agreement_uses_the_common_queries_only() -> None:
    human, model, _, _ = qrels_pair(140, 0.2, 5)
    t = model.to_arrow()
    keep = [q != "q0" for q in t["query_id"].to_pylist()]
    partial = Qrels(t["query_id"].filter(keep), t["doc_id"].filter(keep), t["relevance"].to_numpy()[keep])
    ra = ranking_agreement(human, partial, make_runs(human, 3, 2))
    assert (ra.queries, ra.human_only_queries, ra.model_only_queries) == (6, 1, 0)
