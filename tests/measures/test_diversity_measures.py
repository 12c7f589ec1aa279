"""ndeval's diversity measures, bit for bit against pyndeval (ndeval.c), and subtopic judgments in and out.

The literal values are those of ir_measures' test of its pyndeval provider (terrierteam/ir_measures
test/test_pyndeval.py::test_ERR_IA, 4 decimals); the oracle test compares every measure and cutoff
with pyndeval on random subtopic judgments, for exact equality (ndeval's order of operations).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from clirun import cli
from rankscope import Qrels, Run, evaluate
from rankscope.data.subtopics import SubtopicQrels
from rankscope.errors import DuplicateEntryError, InvalidParameterError, ParseError, RankscopeWarning
from rankscope.io.subtopics import read_subtopic_qrels

IRM_QRELS = [("0", "0", "D0", 0), ("0", "0", "D1", 1), ("0", "0", "D2", 1), ("0", "1", "D2", 1), ("0", "1", "D3", 2),
             ("0", "0", "D4", 0), ("1", "0", "D0", 1), ("1", "0", "D3", 2), ("1", "1", "D5", 2)]
IRM_RUN = {"0": {"D0": 0.8, "D2": 0.7, "D1": 0.3, "D3": 0.4, "D4": 0.1},
           "1": {"D1": 0.8, "D3": 0.7, "D4": 0.3, "D2": 0.4}}


def test_err_ia_is_the_value_ir_measures_holds() -> None:
    # terrierteam/ir_measures test/test_pyndeval.py::test_ERR_IA: ERR_IA@20 = 0.4659 (query 0), 0.1803 (query 1)
    res = evaluate(SubtopicQrels.from_records(IRM_QRELS), Run.from_dict(IRM_RUN), ["ERR_IA@20"])
    assert res.per_query.values[:, 0].round(4).tolist() == [0.4659, 0.1803]
    assert round(res.mean()["ERR_IA@20"], 4) == 0.3231


def _random_judgments(seed: int, n_queries: int = 25) -> tuple[list[tuple[str, str, str, int]], dict]:
    rng = random.Random(seed)
    rows: list[tuple[str, str, str, int]] = []
    run: dict[str, list[str]] = {}
    for q in range(n_queries):
        docs = [f"d{i:02d}" for i in range(35)]
        for s in range(1, rng.randint(1, 5) + 1):
            rows += [(str(q), str(s), d, rng.choice([0, 0, 1, 1, 2])) for d in rng.sample(docs, rng.randint(0, 12))]
        if not any(r[0] == str(q) for r in rows):
            rows.append((str(q), "1", "d00", 0))
        ranked = rng.sample(docs, rng.randint(0, 30))
        if ranked:
            run[str(q)] = ranked
    return rows, run


NDEVAL = {"ERR-IA": "err_ia", "nERR-IA": "nerr_ia", "alpha-DCG": "alpha_dcg", "alpha-nDCG": "alpha_ndcg",
          "P-IA": "p_ia", "strec": "subtopic_recall"}


@pytest.mark.parametrize(("seed", "alpha", "beta", "level"), [(0, 0.5, 0.5, 1), (1, 0.3, 0.7, 1), (2, 0.5, 0.5, 2),
                                                              (3, 0.9, 0.2, 1)])
def test_every_measure_equals_pyndeval_bit_for_bit(seed: int, alpha: float, beta: float, level: int) -> None:
    pyndeval = pytest.importorskip("pyndeval")
    rows, run = _random_judgments(seed)
    cuts = (1, 2, 5, 10, 20)
    theirs_names = [f"{n}@{k}" for n in NDEVAL for k in cuts] + ["NRBP", "nNRBP", "MAP-IA"]
    ours_names = [f"{NDEVAL[n]}(alpha={alpha},rel={level})@{k}" if n in ("ERR-IA", "nERR-IA", "alpha-DCG",
                                                                        "alpha-nDCG")
                  else f"{NDEVAL[n]}(rel={level})@{k}" for n in NDEVAL for k in cuts]
    ours_names += [f"nrbp(alpha={alpha},beta={beta},rel={level})", f"nnrbp(alpha={alpha},beta={beta},rel={level})",
                   f"map_ia(rel={level})"]
    # pyndeval numbers subtopics in the order they first appear: give them in ndeval's numeric order
    evaluator = pyndeval.RelevanceEvaluator(sorted(rows, key=lambda r: int(r[1])), theirs_names,
                                            relevance_level=level, alpha=alpha, beta=beta)
    theirs = evaluator.evaluate([(q, d, float(100 - i)) for q, ds in run.items() for i, d in enumerate(ds)])
    res = evaluate(SubtopicQrels.from_records(rows), Run.from_ranked_lists(run), ours_names, missing="ignore")
    at = {q: i for i, q in enumerate(res.per_query.query_ids.tolist())}
    assert set(at) == set(theirs)
    for j, name in enumerate(theirs_names):
        if name in ("ERR-IA@1", "alpha-DCG@1"):  # ndeval leaves them undivided by their normaliser (documented)
            continue
        for q, values in theirs.items():
            want = values[name]
            got = res.per_query.values[at[q], j]
            assert got == want or (np.isnan(want) and got == 0.0), (name, q, got, want)


def test_at_rank_one_alpha_dcg_and_err_ia_are_normalised_like_every_other_cutoff() -> None:
    sq = SubtopicQrels.from_records([("q", "1", "a", 1), ("q", "2", "a", 1), ("q", "3", "b", 1)])
    res = evaluate(sq, Run.from_ranked_lists({"q": ["a", "b"]}), ["alpha_dcg@1", "err_ia@1", "alpha_ndcg@1"]).mean()
    assert res == {"alpha_dcg@1": 2 / 3, "err_ia@1": 2 / 3, "alpha_ndcg@1": 1.0}


def test_judged_only_drops_the_documents_without_a_subtopic_judgment() -> None:
    sq = SubtopicQrels.from_records([("q", "1", "a", 1), ("q", "2", "b", 1)])
    run = Run.from_ranked_lists({"q": ["x", "a", "y", "b"]})
    res = evaluate(sq, run, ["P_IA@2", "P_IA(judged_only=True)@2", "alpha_nDCG(judged_only=True)@2"]).mean()
    assert res == {"P_IA@2": 0.25, "P_IA(judged_only=True)@2": 0.5, "alpha_nDCG(judged_only=True)@2": 1.0}


def test_the_other_measures_score_the_documents_best_grade_over_the_subtopics() -> None:
    sq = SubtopicQrels.from_records([("q", "1", "a", 2), ("q", "2", "a", 0), ("q", "2", "b", 1), ("q", "1", "c", 0)])
    assert sq.to_qrels().to_dict() == {"q": {"a": 2, "b": 1, "c": 0}}
    res = evaluate(sq, Run.from_ranked_lists({"q": ["c", "b"]}), ["P@2", "StRecall@2", "strec@1"]).mean()
    assert res == {"P@2": 0.5, "StRecall@2": 0.5, "strec@1": 0.0}


def test_a_diversity_measure_with_ordinary_qrels_says_what_it_needs() -> None:
    qrels = Qrels.from_dict({"q": {"a": 1}})
    with pytest.raises(InvalidParameterError, match=r"alpha_nDCG@20 needs subtopic judgments \(query subtopic doc "
                                                    r"grade, as ndeval reads them\), and these qrels have none"):
        evaluate(qrels, Run.from_ranked_lists({"q": ["a"]}), ["ndcg@10", "alpha_nDCG@20"])


def test_judgments_with_one_subtopic_per_query_are_warned_about() -> None:
    sq = SubtopicQrels.from_records([("q", "0", "a", 1), ("r", "0", "b", 1)])
    with pytest.warns(RankscopeWarning, match="every query of the subtopic judgments has a single subtopic"):
        evaluate(sq, Run.from_ranked_lists({"q": ["a"]}), ["alpha_nDCG@5"])


def test_spellings_of_ndeval_and_ir_measures_parse_to_one_measure() -> None:
    from rankscope.measures import parse_metric

    assert parse_metric("alpha-nDCG@20") == parse_metric("α_nDCG@20") == parse_metric("alpha_ndcg@20")
    assert parse_metric("MAP-IA") == parse_metric("AP_IA") == parse_metric("map_ia")
    assert parse_metric("strec@10") == parse_metric("StRecall@10") == parse_metric("subtopic_recall@10")
    assert str(parse_metric("nERR-IA@5")) == "nerr_ia@5" and str(parse_metric("ERR-IA@20")) == "err_ia@20"


# -- the file format and the command line ----------------------------------------------------
def test_the_reader_names_the_file_and_line_of_a_bad_judgment(tmp_path: Path) -> None:
    path = tmp_path / "qrels.diversity"
    path.write_text("1 1 d1 1\n1 2 d1\n")
    with pytest.raises(ParseError, match=r"qrels.diversity:2: expected 4 fields \(topic subtopic docno judgment\), "
                                         r"got 3"):
        read_subtopic_qrels(path)
    path.write_text("# a comment\n1 1 d1 1\n\n1 1 d1 x\n")
    with pytest.raises(ParseError, match=r":4: judgment must be an integer, got 'x'"):
        read_subtopic_qrels(path)
    path.write_text("1 1 d1 1\n1 2 d1 0\n1 1 d1 0\n")
    with pytest.raises(DuplicateEntryError, match=r":3: 1 1 d1 is judged twice \(first at line 1\)"):
        read_subtopic_qrels(path)
    path.write_text("1 2 d1 1\n2 1 d2 0\n")
    sq = read_subtopic_qrels(path)
    assert (len(sq), sq.queries) == (2, ["1", "2"])


def test_rankscope_evaluate_reads_the_qrels_as_subtopic_judgments_for_a_diversity_measure(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.diversity"
    qrels.write_text("".join(f"{q} {s} {d} {g}\n" for q, s, d, g in IRM_QRELS))
    run = tmp_path / "run.txt"
    run.write_text("".join(f"{q} Q0 {d} {i + 1} {s} r\n" for q, ds in IRM_RUN.items()
                           for i, (d, s) in enumerate(sorted(ds.items(), key=lambda x: -x[1]))))
    done = cli("evaluate", "--qrels", qrels, "--run", run, "-m", "ERR-IA@20", "-m", "alpha-nDCG@20", "-m", "P@5",
               "--format", "json")
    assert done.returncode == 0, done.stderr
    means = json.loads(done.stdout)["mean"]
    assert round(means["ERR-IA@20"], 4) == 0.3231 and set(means) == {"ERR-IA@20", "alpha-nDCG@20", "P@5"}
    derived = SubtopicQrels.from_records(IRM_QRELS).to_qrels()
    assert means["P@5"] == evaluate(derived, Run.from_dict(IRM_RUN), ["P@5"]).mean()["P@5"]
    # without a diversity measure the file is ordinary qrels: a document judged for two subtopics is a repeat
    again = cli("evaluate", "--qrels", qrels, "--run", run, "-m", "P@5")
    assert again.returncode == 2 and "duplicate qrels entry for query '0', document 'D2'" in again.stderr


def test_rankscope_evaluate_says_so_when_the_qrels_file_is_not_in_ndeval_format(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.json"
    qrels.write_text('{"q": {"a": 1}}')
    run = tmp_path / "run.txt"
    run.write_text("q Q0 a 1 1.0 r\n")
    done = cli("evaluate", "--qrels", qrels, "--run", run, "-m", "alpha_nDCG@20")
    assert done.returncode == 2
    assert "qrels.json:1: expected 4 fields (topic subtopic docno judgment), got 3" in done.stderr
