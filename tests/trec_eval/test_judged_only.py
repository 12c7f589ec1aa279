"""trec_eval -J (condensed lists): a query left with no judged document, against pytrec_eval (trec_eval 9.0.8).

trec_eval computes the interpolated precision of such a query as 0/0: ``iprec_at_recall`` levels whose
count of relevant documents rounds to 0 (level 0.00, every level when the query has no relevant
document) and ``11pt_avg`` are NaN, printed ``-nan`` per query and in the ``all`` line (the NaN enters
the sum).  A query the run lacks is not such a query: it scores 0 (``-c``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rankscope import Qrels, Run, evaluate
from rankscope.trec_eval import run_trec_eval

pytrec_eval = pytest.importorskip("pytrec_eval")

QRELS = {"1": {"a": 1, "n": 0}, "2": {"b": 1, "c": 1}, "3": {"n": 0}, "4": {"d": 1}}
RUN = {"1": {"x": 3.0, "a": 2.0}, "2": {"y": 1.0, "z": 0.5}, "3": {"y": 1.0}}  # 2 and 3: nothing judged retrieved
LEVELS = [f"iprec_at_recall_{x / 10:.2f}" for x in range(11)]


def _files(tmp_path: Path) -> list[str]:
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} {i} {s} t\n" for q, docs in RUN.items()
                                          for i, (d, s) in enumerate(docs.items())))
    return [str(tmp_path / "qrels"), str(tmp_path / "run")]


def _pytrec() -> dict[str, dict[str, float]]:
    ev = pytrec_eval.RelevanceEvaluator(QRELS, {"iprec_at_recall", "11pt_avg", "map", "P.5"},
                                        judged_docs_only_flag=True)
    return ev.evaluate(RUN)  # type: ignore[no-any-return]


def test_nan_per_query_as_pytrec_eval() -> None:
    expected = _pytrec()
    res = evaluate(Qrels.from_dict(QRELS), Run.from_dict(RUN), [*LEVELS, "11pt_avg", "map", "P_5"],
                   unjudged="condense")
    got = res.per_query.to_dict()
    for q, values in expected.items():
        for name, value in values.items():
            mine = got[q][name]
            if math.isnan(value):
                assert math.isnan(mine), (q, name, mine)
            else:
                assert mine == pytest.approx(value, abs=1e-12), (q, name)
    assert math.isnan(got["2"]["iprec_at_recall_0.00"]) and got["2"]["iprec_at_recall_0.10"] == 0.0
    assert all(math.isnan(got["3"][name]) for name in LEVELS)  # no relevant document: every level is 0/0
    assert got["4"]["iprec_at_recall_0.00"] == 0.0  # not in the run: an empty ranking scores 0, as with -c
    means = res.mean()
    assert math.isnan(means["iprec_at_recall_0.00"]) and math.isnan(means["11pt_avg"])  # trec_eval's sum
    assert means["map"] == pytest.approx(0.25)


def test_keeping_unjudged_documents_never_gives_nan() -> None:
    res = evaluate(Qrels.from_dict(QRELS), Run.from_dict(RUN), [*LEVELS, "11pt_avg"])
    assert not np.isnan(res.per_query.values).any()


def test_trec_eval_prints_minus_nan(tmp_path: Path) -> None:
    out = run_trec_eval(["-J", "-q", "-m", "iprec_at_recall.0,.1", "-m", "11pt_avg", *_files(tmp_path)])
    lines = out.splitlines()
    assert "iprec_at_recall_0.00  \t2\t  -nan" in lines
    assert "iprec_at_recall_0.10  \t2\t0.0000" in lines
    assert "iprec_at_recall_0.10  \t3\t  -nan" in lines
    assert "11pt_avg              \t3\t  -nan" in lines
    assert "iprec_at_recall_0.00  \tall\t  -nan" in lines and "11pt_avg              \tall\t  -nan" in lines
    assert "iprec_at_recall_0.00  \t1\t1.0000" in lines
    # without -J no query is empty: no nan anywhere
    assert "nan" not in run_trec_eval(["-q", "-m", "iprec_at_recall", "-m", "11pt_avg", *_files(tmp_path)])


def test_evaluate_json_says_null_for_nan(tmp_path: Path) -> None:
    import json

    from clirun import cli

    qrels, run = _files(tmp_path)
    done = cli("evaluate", qrels, run, "-m", "iprec_at_recall_0.00,P@5", "--unjudged", "condense", "--format",
               "json", "--per-query")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["mean"]["iprec_at_recall_0.00"] is None and out["per_query"]["2"]["iprec_at_recall_0.00"] is None
    assert out["per_query"]["1"]["iprec_at_recall_0.00"] == 1.0
