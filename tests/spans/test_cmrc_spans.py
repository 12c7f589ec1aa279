"""CMRC 2018's answer spans: built from the raw SQuAD-style file (counts of the evidence) = the bundled ones."""

from __future__ import annotations

from conftest import DATA, require
from rankscope.data.span_build import squad_spans
from rankscope.datasets import load_dataset


def test_cmrc_spans_from_the_raw_offsets():
    raw = require(DATA / "zh_cmrc2018_retrieval" / "raw" / "cmrc2018_dev.json")
    ts = load_dataset("cmrc2018")
    built = squad_spans(raw, corpus=ts.corpus)
    assert built.report.counts == {"answers": 9657, "exact": 9457, "shifted": 9440, "relocated": 7, "failed": 193,
                                   "merged": 5453, "spans": 4011, "questions_without_span": 0}
    assert built.spans == ts.spans  # the bundled spans.tsv.gz is this build
    # every span holds one of the question's reference answers, at the document's offsets
    answers = {q.id: set(q.answers) for q in ts.queries}
    texts = built.spans.texts(ts.corpus)
    assert all(t.strip() in answers[q] or t in answers[q] for q, t in zip(built.spans.query.tolist(), texts))
    # without a corpus the contexts are the documents: no shift
    alone = squad_spans(raw)
    assert alone.report.counts["shifted"] == 0 and alone.report.counts["spans"] == 4011
