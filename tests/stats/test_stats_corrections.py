"""Multiple-comparison corrections against statsmodels' multipletests."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from rankscope.errors import InvalidParameterError
from rankscope.stats import corrections

METHODS = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh"}


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("method", list(METHODS))
def test_matches_statsmodels(method: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 60))
    p = np.concatenate([rng.random(m) ** 3, rng.random(m // 3) * 0.01])
    p[::7] = p[0]  # ties
    reject_ref, adj_ref, _, _ = multipletests(p, alpha=0.05, method=METHODS[method])
    adj = corrections.adjust(p, method)
    np.testing.assert_allclose(adj, adj_ref, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(corrections.reject(adj, 0.05), reject_ref)


def test_none_keeps_p_values_and_aliases_work() -> None:
    p = np.array([0.2, 0.01, 0.04])
    assert corrections.adjust(p, "none").tolist() == p.tolist()
    assert corrections.adjust(p, "fdr_bh").tolist() == corrections.adjust(p, "bh").tolist()


def test_holm_is_never_above_bonferroni_and_bh_never_above_holm() -> None:
    p = np.random.default_rng(1).random(40) ** 2
    holm, bonf, bh = (corrections.adjust(p, m) for m in ("holm", "bonferroni", "bh"))
    assert np.all(holm <= bonf + 1e-15)
    assert np.all(bh <= holm + 1e-15)


def test_bad_input() -> None:
    with pytest.raises(InvalidParameterError, match="correction must be one of"):
        corrections.adjust(np.array([0.1]), "sidak")
    with pytest.raises(InvalidParameterError, match="between 0 and 1"):
        corrections.adjust(np.array([1.5]))
