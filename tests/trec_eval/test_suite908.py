"""Byte-identical output to trec_eval 9.0.8's own test suite (expected files in ../shared/data)."""

from __future__ import annotations

import pytest

from conftest import TREC_TESTS_908, require
from rankscope.trec_eval import run_trec_eval

MEAS_PARAMS = [
    "-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000",
    "-m", "Rprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75",
    "-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20,23.4", "-msuccess.2,5,20",
]

# (expected file, flags, qrels, run) exactly as in TESTS.md
CASES = [
    ("out.test", [], "qrels.test", "results.test"),
    ("out.test.a", ["-m", "all_trec"], "qrels.test", "results.test"),
    ("out.test.aq", ["-m", "all_trec", "-q"], "qrels.test", "results.test"),
    ("out.test.aqc", ["-m", "all_trec", "-q", "-c"], "qrels.test", "results.trunc"),
    ("out.test.aqcM", ["-m", "all_trec", "-q", "-c", "-M100"], "qrels.test", "results.trunc"),
    ("out.test.aql", ["-m", "all_trec", "-mrelstring.20", "-q", "-l2"], "qrels.rel_level", "results.test"),
    ("out.test.meas_params", MEAS_PARAMS, "qrels.test", "results.test"),
]


@pytest.mark.parametrize(("expected", "flags", "qrels", "run"), CASES, ids=[c[0] for c in CASES])
def test_byte_identical(expected: str, flags: list[str], qrels: str, run: str) -> None:
    base = require(TREC_TESTS_908)
    want = require(base / expected).read_text()
    got = run_trec_eval([*flags, str(base / qrels), str(base / run)])
    if got != want:  # show the first differing line, not two 30 KB strings
        diff = next((a, b) for a, b in zip([*got.splitlines(), ""], [*want.splitlines(), ""]) if a != b)
        pytest.fail(f"{expected}: first difference (got, expected) = {diff}")


def test_options_after_files_and_clustered_flags() -> None:
    base = require(TREC_TESTS_908)
    want = (base / "out.test.aqc").read_text()
    assert run_trec_eval([str(base / "qrels.test"), "-qc", str(base / "results.trunc"), "-m", "all_trec"]) == want


def test_nosummary_prints_only_queries() -> None:
    base = require(TREC_TESTS_908)
    out = run_trec_eval(["-n", "-q", "-m", "P.5", str(base / "qrels.test"), str(base / "results.test")])
    per_query = [ln for ln in (base / "out.test.aq").read_text().splitlines()
                 if ln.startswith("P_5 ") and not ln.endswith("\tall\t0.2667")]
    assert out.splitlines() == per_query and len(per_query) == 3
