"""Chunk -> document folding, checked against hand-computed rankings and metric values."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest

from rankscope import Qrels, Run, evaluate
from rankscope.data.testset import TestSet
from rankscope.errors import InvalidParameterError
from rankscope.retrieval import Hit, evaluate_retriever, fold_chunks, map_chunk_ids

CHUNKS = {
    "q1": ["A#0", "B#1", "A#2", "C#0", "B#0"],
    "q2": ["C#3", "C#1", "B#7"],
}
DOC_QRELS = {"q1": {"A": 1, "C": 1}, "q2": {"B": 2}}


def _ranking(run: Run) -> dict[str, list[str]]:
    """trec_eval's ranking: score descending, ties by doc id descending."""
    return {q: sorted(sorted(d, reverse=True), key=lambda doc: -d[doc]) for q, d in run.to_dict().items()}


def test_document_takes_the_rank_of_its_first_chunk() -> None:
    folded = fold_chunks(Run.from_ranked_lists(CHUNKS, "r"), "{doc_id}#{chunk}")
    assert _ranking(folded) == {"q1": ["A", "B", "C"], "q2": ["C", "B"]}
    assert folded.name == "r"
    # scores strictly decrease after folding, so the best chunk's score is kept
    assert folded.to_dict()["q1"] == {"A": 5.0, "B": 4.0, "C": 2.0}


def test_folded_metrics_match_hand_computed_values() -> None:
    folded = fold_chunks(Run.from_ranked_lists(CHUNKS), "{doc_id}#{chunk}")
    res = evaluate(Qrels.from_dict(DOC_QRELS), folded, ["mrr", "recall@2", "P@3", "ndcg@2"]).per_query.to_dict()
    assert res["q1"]["mrr"] == 1.0 and res["q2"]["mrr"] == 0.5
    assert res["q1"]["recall@2"] == 0.5  # A at 1, C at 3
    assert res["q1"]["P@3"] == pytest.approx(2 / 3)
    # q2: grade 2 at rank 2 -> (2 / log2 3) / 2
    assert res["q2"]["ndcg@2"] == pytest.approx((2 / math.log2(3)) / 2)


def test_ties_keep_the_chunk_ranking_not_the_doc_id_order() -> None:
    # equal scores: trec_eval ranks y#1 before x#9 (id descending); y#1 belongs to A, x#9 to B
    run = Run.from_dict({"q": {"x#9": 1.0, "y#1": 1.0, "z#0": 0.5}})
    folded = fold_chunks(run, {"x#9": "B", "y#1": "A", "z#0": "A"})
    assert _ranking(folded) == {"q": ["A", "B"]}
    assert folded.to_dict() == {"q": {"A": 2.0, "B": 1.0}}  # rank-based, since raw scores would tie


def test_mappings_pattern_dict_function() -> None:
    ids = pa.array(["doc#a#3", "plain", "d1::chunk7"])
    docs, unmapped = map_chunk_ids(ids, "{doc_id}#{chunk}")
    assert docs.to_pylist() == ["doc#a", "plain", "d1::chunk7"] and unmapped == 2
    docs, _ = map_chunk_ids(ids, "{doc_id}::chunk{n}")
    assert docs.to_pylist() == ["doc#a#3", "plain", "d1"]
    docs, unmapped = map_chunk_ids(ids, {"plain": "P"})
    assert docs.to_pylist() == ["doc#a#3", "P", "d1::chunk7"] and unmapped == 2
    docs, unmapped = map_chunk_ids(ids, lambda c: c.split("#")[0] if "#" in c else None)
    assert docs.to_pylist() == ["doc", "plain", "d1::chunk7"] and unmapped == 2
    with pytest.raises(InvalidParameterError, match="doc_id"):
        map_chunk_ids(ids, "{chunk}")
    with pytest.raises(InvalidParameterError, match="not a pattern"):
        map_chunk_ids(ids, "#")


def test_empty_run_folds_to_empty() -> None:
    assert len(fold_chunks(Run([], [], []), "{doc_id}#{chunk}")) == 0


def _chunk_retriever(query: str, k: int) -> list[Hit]:
    return [Hit(c, 10.0 - i, text=None, metadata={"source": c.split("#")[0]})
            for i, c in enumerate(CHUNKS[query])][:k]


def test_evaluate_retriever_reports_chunk_and_document_level_side_by_side() -> None:
    ts = TestSet.from_annotations(["q1", "q2"], [DOC_QRELS["q1"], DOC_QRELS["q2"]], ids=["q1", "q2"])
    ev = evaluate_retriever(_chunk_retriever, ts, ["mrr", "recall@2"], k=5, chunk_to_doc="{doc_id}#{chunk}",
                            progress=False)
    assert ev.result.mean() == {"mrr": 0.0, "recall@2": 0.0}  # chunk ids never match document judgments
    assert ev.doc_result is not None and ev.doc_run is not None
    assert ev.doc_result.mean() == {"mrr": 0.75, "recall@2": 0.75}  # q1: 1, 1/2; q2: 1/2, 1
    assert ev.chunk_relevance is None and ev.mean()["retrieved"] == {"mrr": None, "recall@2": None}  # not judged
    assert ev.coverage == {"retrieved": 0, "document": 2}
    assert ev.unknown_ids.unknown == 0  # checked after folding
    by_meta = evaluate_retriever(_chunk_retriever, ts, ["mrr", "recall@2"], chunk_to_doc="metadata:source",
                                 progress=False)
    assert by_meta.doc_result is not None and by_meta.doc_result.mean() == ev.doc_result.mean()


def test_without_mapping_the_unknown_ids_point_at_the_bug() -> None:
    ts = TestSet.from_annotations(["q1", "q2"], [DOC_QRELS["q1"], DOC_QRELS["q2"]], ids=["q1", "q2"])
    with pytest.warns(UserWarning, match="100% of retrieved ids"):
        ev = evaluate_retriever(_chunk_retriever, ts, ["mrr"], progress=False)
    assert ev.unknown_ids.unknown == 8 and ev.unknown_ids.suspicious and ev.doc_run is ev.run
    # one level: the warning names the retriever, not a level ("retrieved level: ..." says nothing here)
    [judged] = [w for w in ev.warnings if w.code == "nothing_judged"]
    assert judged.text().startswith("_chunk_retriever: none of the documents it retrieved is judged"), judged.text()
    assert judged.text("zh").startswith("_chunk_retriever："), judged.text("zh")


def test_real_chunked_retrieval_folds_like_a_naive_reference_and_scores_like_pytrec_eval() -> None:
    """CMRC 2018 passages cut into 80-character chunks, a character-bigram retriever over chunks."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from conftest import DATA, require

    ts_full = TestSet.from_beir(require(DATA / "zh_cmrc2018_retrieval"), split="dev")
    ts = ts_full.subset(ts_full.query_ids[:40])
    assert ts.corpus is not None
    chunks = {f"{pid}#{i // 80}": text[i:i + 80] for pid, text in ts.corpus.items() for i in range(0, len(text), 80)}

    def bigrams(s: str) -> set[str]:
        return {s[i:i + 2] for i in range(len(s) - 1)}

    grams = {cid: bigrams(t) for cid, t in chunks.items()}

    def search(query: str, k: int) -> list[Hit]:
        qg = bigrams(query)
        best = sorted(((len(qg & g), cid) for cid, g in grams.items()), key=lambda x: (-x[0], x[1]))[:k]
        return [Hit(cid, float(s), text=chunks[cid]) for s, cid in best]

    ev = evaluate_retriever(search, ts, ["ndcg@10", "recall@10", "mrr"], k=30, chunk_to_doc="{doc_id}#{chunk}",
                            workers=2, progress=False)
    assert ev.doc_run is not None and ev.doc_result is not None
    # naive reference: walk each query's chunk list in order, keep a document's first appearance
    expected: dict[str, list[str]] = {}
    for qid, ranked in _ranking(ev.run).items():
        assert len(ranked) == 30
        seen: list[str] = []
        for chunk_id in ranked:
            doc = chunk_id.rsplit("#", 1)[0]
            if doc not in seen:
                seen.append(doc)
        expected[qid] = seen
    assert _ranking(ev.doc_run) == expected
    # the document-level numbers agree with pytrec_eval on the folded run
    ev_trec = pytrec_eval.RelevanceEvaluator(ts.qrels.to_dict(), {"ndcg_cut.10", "recall.10", "recip_rank"})
    ref = ev_trec.evaluate(ev.doc_run.to_dict())
    ours = ev.doc_result.per_query.to_dict()
    for qid, vals in ref.items():
        assert ours[qid]["ndcg@10"] == pytest.approx(vals["ndcg_cut_10"], abs=1e-12)
        assert ours[qid]["recall@10"] == pytest.approx(vals["recall_10"], abs=1e-12)
        assert ours[qid]["mrr"] == pytest.approx(vals["recip_rank"], abs=1e-12)
    assert 0.3 < ev.doc_result.mean()["mrr"] <= 1.0  # bigram overlap finds many gold passages


def test_chunk_level_from_answers_beside_document_judgments() -> None:
    texts = {"A#0": "nothing", "B#1": "the answer is 42", "A#2": "also 42 here", "C#0": "x", "B#0": "y",
             "C#3": "no", "C#1": "no", "B#7": "forty-two"}

    def search(query: str, k: int) -> list[Hit]:
        return [Hit(c, 10.0 - i, text=texts[c]) for i, c in enumerate(CHUNKS[query])][:k]

    ts = TestSet.from_annotations(["q1", "q2"], [DOC_QRELS["q1"], DOC_QRELS["q2"]], ids=["q1", "q2"],
                                  answers=[["42"], ["forty-two"]])
    ev = evaluate_retriever(search, ts, ["mrr"], chunk_to_doc="{doc_id}#{chunk}", progress=False)
    assert ev.relevance == "qrels" and ev.chunk_relevance == "answers"
    # chunk level (answers): q1 first containing chunk B#1 at rank 2, q2 B#7 at rank 3
    assert ev.mean() == {"retrieved": {"mrr": pytest.approx((1 / 2 + 1 / 3) / 2)}, "document": {"mrr": 0.75}}
    assert ev.to_dict()["judged_by"] == {"retrieved": "answers", "document": "qrels"}
