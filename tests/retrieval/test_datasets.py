"""Bundled collections: counts, licence-bearing README, and identity with the shared source data."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import rankscope
from conftest import DATA, require
from rankscope.datasets import dataset_info, list_datasets, load_dataset
from rankscope.errors import InvalidParameterError

PKG = Path(rankscope.__file__).parent / "datasets"


def _beir_qrels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8") as fh:
        rows = csv.reader(fh, delimiter="\t")
        next(rows)
        for q, d, g in rows:
            out.setdefault(q, {})[d] = int(g)
    return out


def test_catalog_lists_both_languages() -> None:
    rows = {d["name"]: d for d in list_datasets()}
    assert set(rows) == {"cranfield", "cmrc2018"}
    assert rows["cranfield"]["language"] == "en" and rows["cmrc2018"]["language"] == "zh"
    with pytest.raises(InvalidParameterError, match="cranfield"):
        dataset_info("msmarco")
    with pytest.raises(InvalidParameterError):
        load_dataset("msmarco")


def test_cranfield_matches_the_shared_source() -> None:
    src = require(DATA / "cranfield")
    ts = load_dataset("cranfield")
    info = dataset_info("cranfield")
    assert (len(ts), len(ts.corpus or {}), len(ts.qrels)) == (info["queries"], info["documents"], info["judgments"])
    assert ts.judgments() == _beir_qrels(src / "qrels.tsv")  # graded 1..4, query ids = ordinal positions
    assert sorted(set(ts.qrels.grades.tolist())) == [1, 2, 3, 4]
    with open(src / "corpus.jsonl", encoding="utf-8") as fh:
        first = json.loads(fh.readline())
    assert ts.corpus is not None and ts.corpus[first["_id"]] == first["text"]
    assert ts["1"].text.startswith("what similarity laws must be obeyed")


def test_cmrc2018_dev_matches_the_shared_source() -> None:
    src = require(DATA / "zh_cmrc2018_retrieval")
    ts = load_dataset("cmrc2018")
    assert (len(ts), len(ts.corpus or {}), len(ts.qrels)) == (3219, 848, 3219)
    judgments = ts.judgments()
    assert judgments == _beir_qrels(src / "qrels" / "dev.tsv")
    assert all(len(docs) == 1 for docs in judgments.values())  # one relevant passage per question
    assert all(q.answers for q in ts.queries)
    q = ts["DEV_0_QUERY_0"]
    assert q.text == "《战国无双3》是由哪两个公司合作开发的？"
    passage = (ts.corpus or {})["DEV_0"]
    assert passage.startswith("战国无双3 《战国无双3》")  # title + text
    assert all(a in passage for a in q.answers)


def test_bundled_data_is_small_and_attributed() -> None:
    size = sum(f.stat().st_size for f in PKG.rglob("*.gz"))
    assert size < 3_000_000
    readme = (PKG / "README.md").read_text(encoding="utf-8")
    for needle in ("CC BY-SA 4.0", "ymcui/cmrc2018", "Cranfield", "ir.dcs.gla.ac.uk"):
        assert needle in readme


def test_top_level_lazy_export() -> None:
    from rankscope.retrieval.fusion import fuse

    assert rankscope.load_dataset is load_dataset
    assert rankscope.fuse is fuse
