"""Ceilings built from the qrels index equal the scores of an evaluated perfect run."""

from __future__ import annotations

import numpy as np
import pytest

import rankscope as rs
from rankscope.engine.ceilings import Ceilings, has_ceiling, perfect_run
from rankscope.engine.policies import Policies
from rankscope.engine.prepare import QrelsIndex
from rankscope.errors import RankscopeError
from rankscope.measures import Measure, all_specs, parse_metric


def _bounded_builtin_measures() -> list[Measure]:
    """Every built-in metric with a ceiling, at its default parameters (cutoff 5 where one is needed)."""
    out = []
    for spec in all_specs():
        for text in (spec.name, f"{spec.name}@5"):
            try:
                m = parse_metric(text)
            except RankscopeError:
                continue
            if has_ceiling(m):
                out.append(m)
    return out


MEASURES = _bounded_builtin_measures()


def _random_qrels(seed: int) -> rs.Qrels:
    rng = np.random.default_rng(seed)
    data: dict[str, dict[str, int]] = {}
    for q in range(40):
        n = int(rng.integers(1, 30))
        data[f"q{q}"] = {f"d{q}_{i}": int(g) for i, g in enumerate(rng.integers(-1, 4, size=n))}
    return rs.Qrels.from_dict(data)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("depth", [None, 3])
def test_ceilings_equal_an_evaluated_perfect_run(seed: int, level: int, depth: int | None) -> None:
    qrels = _random_qrels(seed)
    measures = MEASURES
    assert len(measures) >= 20
    ceil = Ceilings(QrelsIndex(qrels), Policies(relevance_level=level, depth=depth), measures)
    res = rs.evaluate(qrels, perfect_run(qrels), measures, relevance_level=level, depth=depth)
    got = dict(zip(ceil.query_ids.tolist(), ceil.values.tolist(), strict=True))
    for j, label in enumerate(res.labels):
        for qid, value in zip(res.per_query.query_ids, res.per_query[label], strict=True):
            assert got[qid][j] == pytest.approx(value, abs=1e-12), (label, qid)



@pytest.mark.parametrize("chunk", [1, 7, 50])
def test_ceilings_scored_in_chunks_of_queries_are_the_same(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    """Large qrels are scored a few judgments at a time (bounded memory): same values as all at once."""
    import rankscope.engine.ceilings as ceilings

    qrels = _random_qrels(3)
    whole = Ceilings(QrelsIndex(qrels), Policies(depth=5), MEASURES).values
    monkeypatch.setattr(ceilings, "CHUNK_JUDGMENTS", chunk)
    chunked = Ceilings(QrelsIndex(qrels), Policies(depth=5), MEASURES).values
    assert chunked.shape == whole.shape and np.array_equal(chunked, whole)
