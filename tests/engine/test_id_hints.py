"""Hints about ids that do not match claim only what was checked: a named prefix or chunk relation must make the
ids match once it is stripped (or folded), on the real inputs where a false prefix was named before."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from clirun import cli
from conftest import DATA, require
from rankscope import Qrels, Run, evaluate
from rankscope.engine.judged import id_relation
from rankscope.errors import NoOverlapError
from rankscope.io import read_qrels, write_trec_run


def _cranfield_run() -> Run:
    """A run on Cranfield's ids: each query's judged documents ranked by grade."""
    q = read_qrels(require(DATA / "cranfield" / "qrels.trec"))
    return Run(list(q.query_column()), q.doc_column().to_pylist(), q.grades.astype(np.float64), "cranfield")


def _nothing_judged_text(qrels: Qrels, run: Run) -> tuple[str, str]:
    res = evaluate(qrels, run, ["ndcg@10"])
    assert res.judged is not None and res.judged.mismatch is not None
    [w] = [w for w in res.warnings() if w.kind == "nothing_judged"]
    return res.judged.mismatch.cause, w.text()


def test_beir_folder_against_a_cranfield_run_names_no_prefix() -> None:
    cause, text = _nothing_judged_text(read_qrels(require(DATA / "beir_scifact")), _cranfield_run())
    assert cause == "collection" and "prefix" not in text  # it said: "The ids differ by a prefix, '31715'"


def test_other_qrels_against_a_cranfield_run_names_no_prefix() -> None:
    cause, text = _nothing_judged_text(read_qrels(require(DATA / "vaswani_npl" / "qrels.tsv")), _cranfield_run())
    assert cause == "elsewhere" and "prefix" not in text  # it said: "The ids differ by a prefix, '1'"
    assert "131 of the 924 document ids" in text and "do not line up, or the ids come from two collections" in text


def test_query_ids_of_other_qrels_name_no_prefix() -> None:
    dl_hard = read_qrels(require(DATA / "runs_dl_hard" / "dataset" / "dl_hard-passage.qrels"))
    with pytest.raises(NoOverlapError) as caught:
        evaluate(dl_hard, _cranfield_run(), ["ndcg@10"])
    assert "prefix" not in str(caught.value)  # it said: "the query ids differ by the prefix '10495'"


def test_the_command_line_names_no_prefix_for_a_beir_folder(tmp_path: Path) -> None:
    write_trec_run(_cranfield_run(), tmp_path / "cranfield.run")
    done = cli("evaluate", require(DATA / "beir_scifact"), tmp_path / "cranfield.run", "-m", "ndcg@10", width=200)
    assert done.returncode == 0, done.stderr
    assert "None of the run's document ids occurs in the qrels" in done.stdout + done.stderr
    assert "prefix" not in done.stdout + done.stderr


@pytest.mark.parametrize(("run_docs", "qrels_docs", "fixed"), [
    (["msmarco_D1", "msmarco_D7", "msmarco_D2"], ["D1", "D2"], lambda d: d.removeprefix("msmarco_")),
    (["D1", "D7", "D2"], ["doc:D1", "doc:D2"], lambda d: "doc:" + d),
    (["D1#0", "D7#3", "D2#1"], ["D1", "D2"], lambda d: d.split("#")[0]),
])
def test_a_named_relation_makes_the_ids_match(run_docs: list[str], qrels_docs: list[str], fixed: object) -> None:
    qrels = Qrels.from_dict({"q1": {qrels_docs[0]: 1}, "q2": {qrels_docs[1]: 1}})
    run = Run.from_ranked_lists({"q1": run_docs, "q2": run_docs[::-1]})
    cause, _ = _nothing_judged_text(qrels, run)
    assert cause in ("prefix", "chunk")
    repaired = Run.from_ranked_lists({q: [fixed(d) for d in docs] for q, docs in  # type: ignore[operator]
                                      (("q1", run_docs), ("q2", run_docs[::-1]))})
    assert evaluate(qrels, repaired, ["ndcg@10"]).judged.matched > 0


def test_a_prefix_few_ids_carry_is_no_relation() -> None:
    robust = np.array([str(q) for q in [*range(301, 451), *range(601, 701)]], dtype=object)
    cranfield = np.array([str(q) for q in range(1, 226)], dtype=object)
    assert id_relation(robust, cranfield) is None and id_relation(cranfield, robust) is None
    assert id_relation(np.array([f"q{i}" for i in range(30)], dtype=object),
                       np.array([str(i) for i in range(30)], dtype=object)) == ("prefix", "q")
