"""Fleiss' κ and Krippendorff's α (ordinal) among three or more people: literal published examples, statsmodels,
and `rankscope agreement --annotator` from the command line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from clirun import cli, outcome
from prose import whole_lines
from rankscope.data import Qrels
from rankscope.labels.group_agreement import fleiss_kappa, group_agreement, krippendorff_alpha

N = np.nan
#: Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the worked example C: 4 observers, 12 units
KRIPPENDORFF_2011 = np.array([[1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
                              [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N], [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N]])
#: Fleiss (1971) as worked on Wikipedia's "Fleiss' kappa" page: 10 subjects, 14 raters, 5 categories; κ = 0.210
FLEISS_EXAMPLE = np.array([[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
                           [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]])


def test_published_examples() -> None:
    assert round(krippendorff_alpha(KRIPPENDORFF_2011, "ordinal"), 3) == 0.815
    assert round(krippendorff_alpha(KRIPPENDORFF_2011, "nominal"), 3) == 0.743
    assert round(fleiss_kappa(FLEISS_EXAMPLE), 3) == 0.210


@pytest.mark.parametrize("seed", range(5))
def test_fleiss_matches_statsmodels_and_missing_grades_are_left_out(seed: int) -> None:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 4, 120)
    people = {f"p{k}": np.where(rng.random(120) < 0.3, rng.integers(0, 4, 120), truth) for k in range(4)}
    qs, ds = [f"q{i % 10}" for i in range(120)], [f"d{i}" for i in range(120)]
    qrels = {k: Qrels(qs, ds, g) for k, g in people.items()}
    keep = np.arange(120) % 7 != 0  # p3 skipped some documents
    qrels["p3"] = Qrels([q for q, k in zip(qs, keep) if k], [d for d, k in zip(ds, keep) if k], people["p3"][keep])
    g = group_agreement(qrels, resamples=50)
    grades = np.stack([people[k] for k in sorted(people)])[:, keep]
    table = np.stack([(grades == c).sum(axis=0) for c in range(4)], axis=1)
    assert g.items_all == int(keep.sum()) and g.items == 120
    assert g.fleiss.value == pytest.approx(statsmodels_fleiss(table))
    data = np.stack([people[k].astype(float) for k in sorted(people)])
    data[3, ~keep] = np.nan
    assert g.krippendorff.value == pytest.approx(krippendorff_alpha(data))
    assert g.fleiss.low <= g.fleiss.value <= g.fleiss.high


def test_annotators_from_the_command_line(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    truth = rng.integers(0, 4, 60)
    files = []
    for name in ("alice", "bob", "carol"):
        g = np.where(rng.random(60) < 0.2, rng.integers(0, 4, 60), truth)
        p = tmp_path / f"{name}.qrels"
        p.write_text("".join(f"q{i % 6} 0 d{i} {x}\n" for i, x in enumerate(g)))
        files += ["--annotator", str(p)]
    code, out, err = outcome(cli("agreement", *files, "--bootstrap", "100", width=80))
    assert code == 0, err
    assert whole_lines(out).startswith("3 annotators (alice, bob, carol): 60 documents graded by two or more, "
                                       "60 by all")
    assert "Fleiss' κ = " in out and "Krippendorff's α (ordinal) = " in out
    code, _, err = outcome(cli("agreement", "--qrels", str(tmp_path / "alice.qrels"), width=80))
    assert code == 2 and "give --qrels and --judged" in err
