"""Label-free signals against hand-computed values and their defining properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankscope.monitor.events import parse_event
from rankscope.monitor.signals import ks_test, latency_percentiles, psi, rbo
from rankscope.monitor.windows import WindowStats, aggregate, version_overlap


def test_rbo_by_hand() -> None:
    # depth 2, p = 0.5: X_1 = 0, X_2 = 2 -> (2/2)(0.25) + (0.5/0.5)(0/1 * 0.5 + 2/2 * 0.25) = 0.5
    assert rbo(["a", "b"], ["b", "a"], p=0.5) == pytest.approx(0.5)
    # one of three in common at depth 3 (c at rank 3 on both): A_3 = 1/3
    p = 0.9
    expected = (1 / 3) * p**3 + (1 - p) / p * ((1 / 3) * p**3)
    assert rbo(["a", "b", "c"], ["x", "y", "c"], p) == pytest.approx(expected)


@settings(deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=15, unique=True),
       st.lists(st.integers(0, 30), min_size=1, max_size=15, unique=True))
def test_rbo_is_symmetric_bounded_and_one_on_itself(a: list[int], b: list[int]) -> None:
    k = min(len(a), len(b))
    a, b = a[:k], b[:k]
    assert 0 <= rbo(a, b) <= 1
    assert rbo(a, b) == pytest.approx(rbo(b, a))
    assert rbo(a, a) == pytest.approx(1.0)


def test_psi_by_hand_and_ks() -> None:
    ref = np.repeat([1.0, 2.0], 50)  # one inner edge at 1.5
    cur = np.repeat([1.0, 2.0], [25, 75])
    expected = (0.25 - 0.5) * math.log(0.25 / 0.5) + (0.75 - 0.5) * math.log(0.75 / 0.5)
    assert psi(ref, cur, bins=2) == pytest.approx(expected)
    assert psi([], cur) is None
    same = ks_test(ref, ref)
    assert same is not None and same.statistic == 0.0
    shifted = ks_test(np.linspace(0, 1, 200), np.linspace(0.5, 1.5, 200))
    assert shifted is not None and shifted.p_value < 1e-6


def test_latency_percentiles() -> None:
    assert latency_percentiles([]) is None
    lat = latency_percentiles([10.0] * 99 + [1000.0])
    assert lat is not None and lat["p50"] == 10.0 and lat["max"] == 1000.0 and lat["p99"] > 10


def _events(n: int, *, t0: float = 0.0, score: float = 1.0, empty_every: int = 0) -> list:
    out = []
    for i in range(n):
        results = [] if empty_every and i % empty_every == 0 else [{"id": f"d{i}", "score": score + i % 7},
                                                                   {"id": "zz"}, {"id": "d1"}]
        out.append(parse_event({"query": f"q{i}", "results": results, "time": t0 + i, "latency_ms": float(i % 50)}))
    return out


def test_windows_count_rates_and_merge_in_any_order() -> None:
    evs = _events(300, empty_every=10)
    (w,) = aggregate(evs, 3600, known_ids={"d1", "d2"}).values()
    s = w.signals()
    assert s["events"] == 300 and s["empty_rate"] == pytest.approx(0.1)
    # 270 non-empty events of 3 results each: "zz" is unknown, "d1" known, "d{i}" known for i in (1, 2)
    known = sum(1 for i in range(300) if i % 10 and i in (1, 2))
    assert s["unknown_rate"] == pytest.approx((270 * 3 - 270 - known) / (270 * 3))
    halves = [aggregate(part, 3600)[(0.0, "default")] for part in (evs[150:], evs[:150])]
    merged = halves[0].merge(halves[1])
    whole = aggregate(evs, 3600)[(0.0, "default")]
    assert merged.events == whole.events and np.array_equal(np.sort(merged.scores), np.sort(whole.scores))
    again = WindowStats.from_dict(merged.to_dict())
    assert again.signals() == merged.signals()


def test_a_shifted_score_distribution_shows_in_psi_and_ks() -> None:
    ref = aggregate(_events(500), 3600)[(0.0, "default")]
    same = aggregate(_events(500, t0=3600), 3600)[(3600.0, "default")]
    moved = aggregate(_events(500, t0=7200, score=4.0), 3600)[(7200.0, "default")]
    assert same.signals(ref)["psi"] < 0.05 < 0.25 < moved.signals(ref)["psi"]
    assert moved.signals(ref)["ks_p_value"] < 1e-6 < same.signals(ref)["ks_p_value"]


def test_version_overlap() -> None:
    evs = [parse_event({"query": "Q one", "results": ["a", "b", "c"]}),
           parse_event({"query": "q two", "results": ["x"]})]
    out = version_overlap(evs, {"q one": ["a", "c", "b"], "q three": ["z"]})
    assert out["queries"] == 1 and 0 < out["rbo"] < 1
