"""trec_eval keeps every run score in a C ``float``: scores equal as float32 tie (broken by doc id descending).

Byte-identical ``rankscope trec_eval`` output on runs whose order depends on that rounding: one case
computed by hand, and random cases of the classes met in real runs (reranker probabilities near 1,
large scores differing past the 7th significant digit, negative scores) whose expected text is built
from pytrec_eval's values (trec_eval's own C code).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_agreement_pytrec import float32_case, reordered_queries

from rankscope import Qrels, Run, evaluate
from rankscope.trec_eval import run_trec_eval

pytrec_eval = pytest.importorskip("pytrec_eval")

# q1: probabilities, q2: large scores, q3: negative scores -- each pair equal as float32 and ranked the
# other way by doc id; q4: no tie
QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 1\nq3 0 e 1\nq4 0 g 1\n"
RUN = (
    "q1 Q0 a 1 0.99999952 t\nq1 Q0 b 2 0.99999951 t\n"
    "q2 Q0 c 1 1006.66042232513 t\nq2 Q0 d 2 1006.66039896011 t\n"
    "q3 Q0 e 1 -25.1229997 t\nq3 Q0 f 2 -25.1229998 t\n"
    "q4 Q0 g 1 0.5 t\nq4 Q0 h 2 0.25 t\n"
)
BY_HAND = """\
map                   \tq1\t0.5000
recip_rank            \tq1\t0.5000
P_1                   \tq1\t0.0000
map                   \tq2\t0.5000
recip_rank            \tq2\t0.5000
P_1                   \tq2\t0.0000
map                   \tq3\t0.5000
recip_rank            \tq3\t0.5000
P_1                   \tq3\t0.0000
map                   \tq4\t1.0000
recip_rank            \tq4\t1.0000
P_1                   \tq4\t1.0000
map                   \tall\t0.6250
recip_rank            \tall\t0.6250
P_1                   \tall\t0.2500
"""


def _files(tmp_path: Path, qrels: str, run: str) -> list[str]:
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    return [str(tmp_path / "qrels"), str(tmp_path / "run")]


def test_float32_ties_by_hand(tmp_path: Path) -> None:
    # the pairs differ as doubles and tie as floats
    assert np.float32(0.99999952) == np.float32(0.99999951) and 0.99999952 != 0.99999951
    assert np.float32(1006.66042232513) == np.float32(1006.66039896011)
    assert np.float32(-25.1229997) == np.float32(-25.1229998)
    files = _files(tmp_path, QRELS, RUN)
    assert run_trec_eval(["-q", "-m", "map", "-m", "recip_rank", "-m", "P.1", *files]) == BY_HAND
    # the same rows in another order (the lexsort ranking path)
    shuffled = "".join(reversed(RUN.splitlines(keepends=True)))
    files = _files(tmp_path, QRELS, shuffled)
    assert run_trec_eval(["-q", "-m", "map", "-m", "recip_rank", "-m", "P.1", *files]) == BY_HAND


def test_library_default_is_float32_and_float64_is_a_policy(tmp_path: Path) -> None:
    from rankscope.io import read_qrels, read_run

    files = _files(tmp_path, QRELS, RUN)
    qrels, run = read_qrels(files[0]), read_run(files[1])
    res = evaluate(qrels, run, ["map", "mrr", "P@1"])
    assert res.mean() == {"map": 0.625, "mrr": 0.625, "P@1": 0.25}
    assert res.queries.float32_reordered == 3
    assert res.policies.score_precision == "float32"
    assert res.to_dict()["queries"]["float32_reordered"] == 3
    full = evaluate(qrels, run, ["map", "mrr", "P@1"], score_precision="float64")
    assert full.mean() == {"map": 1.0, "mrr": 1.0, "P@1": 1.0}
    assert full.queries.float32_reordered == 0


TREC_MEASURES = ["num_ret", "num_rel_ret", "map", "Rprec", "recip_rank", "P.1,5", "ndcg_cut.3,10"]
PYTREC = {"num_ret", "num_rel_ret", "map", "Rprec", "recip_rank", "P.1,5", "ndcg_cut.3,10"}
ORDER = ["num_ret", "num_rel_ret", "map", "Rprec", "recip_rank", "P_1", "P_5", "ndcg_cut_3", "ndcg_cut_10"]


def _trec_text(values: dict[str, dict[str, float]]) -> str:
    """trec_eval's -q output for pytrec_eval's per-query values (queries sorted, summary = mean)."""
    lines = []
    queries = sorted(values)
    for q in queries:
        for name in ORDER:
            v = values[q][name]
            cell = str(int(v)) if name.startswith("num_") else f"{v:6.4f}"
            lines.append(f"{name:<22}\t{q}\t{cell}")
    for name in ORDER:
        total = 0.0
        for q in queries:
            total += values[q][name]
        cell = str(int(total)) if name.startswith("num_") else f"{total / len(queries):6.4f}"
        lines.append(f"{name:<22}\tall\t{cell}")
    return "\n".join(lines) + "\n"


def _trec_lines(table: dict[str, dict[str, float]], kind: str) -> str:
    if kind == "qrels":
        return "".join(f"{q} 0 {d} {g}\n" for q, docs in table.items() for d, g in docs.items())
    return "".join(f"{q} Q0 {d} {i} {s!r} t\n" for q, docs in table.items() for i, (d, s) in enumerate(docs.items()))


@pytest.mark.parametrize("level", [1, 2])
def test_float32_cases_byte_identical(tmp_path: Path, level: int) -> None:
    reordered = 0
    for seed in range(40):
        qrels_d, run_d = float32_case(9100 + 100 * level + seed)
        expected = pytrec_eval.RelevanceEvaluator(qrels_d, PYTREC, relevance_level=level).evaluate(run_d)
        want = _trec_text(expected)
        sorted_run = {q: dict(sorted(docs.items(), key=lambda x: -x[1])) for q, docs in run_d.items()}
        for table in (run_d, sorted_run):
            (tmp_path / "qrels").write_text(_trec_lines(qrels_d, "qrels"))
            (tmp_path / "run").write_text(_trec_lines(table, "run"))
            flags = ["-q", f"-l{level}"] + [x for m in TREC_MEASURES for x in ("-m", m)]
            got = run_trec_eval([*flags, str(tmp_path / "qrels"), str(tmp_path / "run")])
            assert got == want, f"seed {seed}"
        reordered += reordered_queries(run_d, set(qrels_d))
    assert reordered > 10  # the cases do exercise float32 ties


def test_fusion_and_chunk_folding_rank_as_trec_eval() -> None:
    from rankscope.engine.ranking import trec_order

    run = Run(["q", "q"], ["a", "b"], np.array([0.99999952, 0.99999951]))
    assert trec_order(run).tolist() == [1, 0]  # float32 tie: doc id descending
    assert trec_order(run, score_precision="float64").tolist() == [0, 1]
    qrels = Qrels.from_dict({"q": {"a": 1}})
    assert evaluate(qrels, run, ["mrr"]).mean()["mrr"] == 0.5
