"""The exact per-query building blocks against plain loops (random segments, fixed seeds)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rankscope.measures import _trec_common as tc


def _segments(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 40, size=int(rng.integers(1, 30)))
    values = rng.normal(size=int(counts.sum())) * 10.0 ** float(rng.integers(-3, 4))
    return values, np.concatenate(([0], np.cumsum(counts))).astype(np.int64)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("limit", [None, 7])  # 7 cells: forces the block-by-block path
def test_segmented_cumsum_is_a_sequential_sum(seed: int, limit: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if limit is not None:
        monkeypatch.setattr(tc, "_PADDED_LIMIT", limit)
    values, offsets = _segments(seed)
    expected = []
    for s, e in itertools.pairwise(offsets):
        acc = 0.0
        for v in values[s:e]:
            acc += float(v)  # the order trec_eval adds in
            expected.append(acc)
    assert tc.segmented_cumsum(values, offsets).tolist() == expected  # bit for bit


@pytest.mark.parametrize("seed", range(10))
def test_suffix_max_matches_a_loop(seed: int) -> None:
    values, offsets = _segments(seed)
    expected = [max(values[i:e]) for s, e in itertools.pairwise(offsets) for i in range(s, e)]
    assert tc.suffix_max(values, offsets).tolist() == expected


def test_log2_int_is_the_c_library_value() -> None:
    ks = np.arange(1, 5000)
    assert tc.log2_int(ks).tolist() == [math.log2(k) for k in ks.tolist()]
