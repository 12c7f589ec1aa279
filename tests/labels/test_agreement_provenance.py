"""`agreement` reads the provenance: the model is compared on its own labels, never people's labels with
themselves (a combined human + model file as --judged is refused with a hint)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from clirun import cli
from rankscope.data import Qrels
from rankscope.errors import InvalidParameterError, NoOverlapError
from rankscope.labels.agreement import label_agreement
from rankscope.labels.provenance import Label, Labels, combine


def labels(seed: int = 0, n: int = 400) -> tuple[Qrels, Labels]:
    rng = np.random.default_rng(seed)
    h = rng.choice(4, size=n, p=[0.55, 0.2, 0.15, 0.1])
    m = np.where(rng.random(n) < 0.4, rng.integers(0, 4, n), h)
    qs, ds = [f"q{i % 20}" for i in range(n)], [f"d{i}" for i in range(n)]
    return Qrels(qs, ds, h), Labels.from_qrels(Qrels(qs, ds, m), "model", model="m", prompt="p")


def test_a_mixed_judged_file_is_compared_on_its_model_labels_only() -> None:
    human, model = labels()
    t = human.to_arrow()
    people = Labels.from_records(Label(q, d, int(g), "human", annotator="carol")  # people's labels on new pairs
                                 for q, d, g in zip(t["query_id"].to_pylist()[:50], [f"x{i}" for i in range(50)],
                                                    t["relevance"].to_pylist()[:50]))
    mixed = Labels(pa.concat_tables([model.table, people.table]))
    own = label_agreement(human, model, resamples=50)
    agr = label_agreement(human, mixed, resamples=50)
    assert agr.kappa_weighted.value == own.kappa_weighted.value and agr.pairs == 400
    assert agr.left_out == {"human_side_model_labels": 0, "model_side_human_labels": 50}


def test_a_combined_file_is_refused(tmp_path: Path) -> None:
    human, model = labels()
    extra = Labels.from_records(Label(f"q{i}", f"new{i}", 1, "model", "m", "p") for i in range(30))
    both = combine(human, Labels(pa.concat_tables([model.table, extra.table]))).labels  # people won where both judged
    with pytest.raises(NoOverlapError, match="combined file"):
        label_agreement(human, both)
    with pytest.raises(InvalidParameterError, match="no model label"):
        label_agreement(human, Labels.from_qrels(human, "human"))
    Labels.from_qrels(human, "human").write(tmp_path / "human.qrels")
    both.write(tmp_path / "all.qrels")
    done = cli("agreement", "--qrels", tmp_path / "human.qrels", "--judged", tmp_path / "all.qrels")
    assert done.returncode == 2 and "combined file" in done.stderr and "almost perfect" not in done.stdout
    model.write(tmp_path / "model.qrels")
    done = cli("agreement", "--qrels", tmp_path / "human.qrels", "--judged", tmp_path / "model.qrels", width=200)
    assert done.returncode == 0, done.stderr
