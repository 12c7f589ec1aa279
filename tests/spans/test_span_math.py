"""The span arithmetic: hand-computed cases and an independent set-of-character-positions check."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

from rankscope.measures._spans import SpanArrays, omega_counts, ratio, span_counts


def arrays(spans, rows, chunks, n=1):
    """spans: (q, doc, start, end, grade); rows: (q, rank, doc, start, end); chunks: (doc, start, end)."""
    def cols(items, width):
        return [np.array([it[i] for it in items], dtype=np.int64) for i in range(width)] if items else \
            [np.empty(0, dtype=np.int64)] * width
    sq, sd, ss, se, sg = cols(spans, 5)
    rq, rr, rd, rs, re = cols(rows, 5)
    cd, cs, ce = cols(chunks, 3)
    return SpanArrays(n=n, span_q=sq, span_doc=sd, span_start=ss, span_end=se, span_grade=sg, row_q=rq,
                      row_rank=rr, row_doc=rd, row_start=rs, row_end=re, chunk_doc=cd, chunk_start=cs,
                      chunk_end=ce)


def measures(a, k, rel=1, graded=False):
    inter, relevant, retrieved = span_counts(a, k, rel, graded)
    return (ratio(inter, relevant).tolist(), ratio(inter, retrieved).tolist(),
            ratio(inter, relevant + retrieved - inter).tolist())


def test_overlapping_chunks_count_shared_text_each_time():
    chunks = [(0, 0, 10), (0, 5, 20)]
    a = arrays([(0, 0, 5, 15, 1)], [(0, 0, 0, 0, 10), (0, 1, 0, 5, 20)], chunks)
    recall, precision, iou = measures(a, 2)
    assert recall == [1.0] and precision == [10 / 25] and iou == [10 / 25]


def test_adjacent_spans_binary_and_graded():
    a = arrays([(0, 0, 0, 5, 1), (0, 0, 5, 10, 2)], [(0, 0, 0, 3, 8)], [(0, 3, 8)])
    assert measures(a, 1) == ([0.5], [1.0], [0.5])
    # graded: [0,5) weighs 1/2, [5,10) weighs 2/2; retrieved [3,8): 2 * 0.5 + 3 * 1 = 4 of 7.5
    recall, precision, iou = measures(a, 1, graded=True)
    assert recall == [4 / 7.5] and precision == [4 / 5] and iou == [4 / (7.5 + 5 - 4)]
    # rel=2 keeps only the grade-2 span
    assert measures(a, 1, rel=2) == ([3 / 5], [3 / 5], [3 / 7])


def test_span_crossing_a_chunk_boundary():
    chunks = [(0, 0, 10), (0, 10, 20)]
    a = arrays([(0, 0, 8, 14, 1)], [(0, 0, 0, 10, 20), (0, 1, 0, 0, 10)], chunks)
    assert measures(a, 1) == ([4 / 6], [4 / 10], [4 / 12])
    assert measures(a, 2) == ([1.0], [6 / 20], [6 / 20])


def test_chunks_of_other_documents_hold_no_judged_text():
    a = arrays([(0, 0, 0, 10, 1)], [(0, 0, 1, 0, 10), (0, 1, 0, 0, 4)], [(0, 0, 10), (1, 0, 10)])
    assert measures(a, 1) == ([0.0], [0.0], [0.0])
    assert measures(a, 2) == ([0.4], [4 / 14], [4 / 20])


def test_unknown_rows_and_queries_without_spans_score_zero():
    a = arrays([(1, 0, 0, 10, 1)], [(0, 0, 0, 0, 10), (1, 0, -1, 0, 0)], [(0, 0, 10)], n=2)
    assert measures(a, 5) == ([0.0, 0.0], [0.0, 0.0], [0.0, 0.0])


def test_omega_is_the_cheapest_full_cover():
    # overlapping chunking: [0,10) + [10,20) cover [2,18) with 20 characters; all three would cost 30
    chunks = [(0, 0, 10), (0, 5, 15), (0, 10, 20)]
    a = arrays([(0, 0, 2, 18, 1)], [], chunks)
    reach, relevant, cost = omega_counts(a, 1, False)
    assert (reach.tolist(), relevant.tolist(), cost.tolist()) == ([16.0], [16.0], [20.0])


def test_omega_when_part_of_the_span_is_in_no_chunk():
    a = arrays([(0, 0, 5, 25, 1)], [], [(0, 0, 10), (0, 20, 30)])
    reach, relevant, cost = omega_counts(a, 1, False)
    assert (reach.tolist(), relevant.tolist(), cost.tolist()) == ([10.0], [20.0], [20.0])


# -- independent check: plain sets of character positions ------------------------------------------------
def reference(spans, rows, chunks, n, k, rel, graded):
    """Per query: recall, precision, iou, precision_omega, iou_omega from sets of (doc, position)."""
    out = []
    for q in range(n):
        grade: dict[tuple[int, int], int] = {}
        for sq, d, s, e, g in spans:
            if sq == q and g >= rel:
                for p in range(s, e):
                    grade[(d, p)] = max(grade.get((d, p), g), g)
        gmax = max(grade.values()) if grade else 1
        weights = {c: Fraction(g, gmax) if graded else Fraction(1) for c, g in grade.items()}
        top = [r for r in rows if r[0] == q and r[1] < k and r[2] >= 0]
        retrieved_chars = {(d, p) for _, _, d, s, e in top for p in range(s, e)}
        total = sum(e - s for _, _, _, s, e in top)
        inter = sum((weights[c] for c in retrieved_chars & set(grade)), Fraction(0))
        relevant = sum((weights[c] for c in grade), Fraction(0))
        # omega: brute force over sets of the chunks that overlap R (character sets as bit masks)
        cand = [c for c in chunks if any((c[0], p) in grade for p in range(c[1], c[2]))]
        everything = {(d, p) for d, s, e in chunks for p in range(s, e)}
        reach = set(grade) & everything
        need = mask(reach)
        cand_masks = [mask((d, p) for p in range(s, e)) for d, s, e in cand]
        best = 0 if not need else None
        for size in range(1, len(cand) + 1 if len(cand) <= 12 else 0):
            for combo in itertools.combinations(range(len(cand)), size):
                held = 0
                for i in combo:
                    held |= cand_masks[i]
                if held & need == need:
                    cost = sum(cand[i][2] - cand[i][1] for i in combo)
                    best = cost if best is None else min(best, cost)
        reach_w = sum((weights[c] for c in reach), Fraction(0))
        out.append((inter, relevant, Fraction(total), reach_w, None if best is None else Fraction(best)))
    return out


def mask(chars):
    """A set of (doc, position) as an integer bit mask."""
    return sum(1 << (d * 64 + p) for d, p in chars)


def random_case(rng):
    n_docs = int(rng.integers(1, 4))
    lengths = rng.integers(5, 40, size=n_docs)
    chunks = []
    for d in range(n_docs):
        size = int(rng.integers(3, 15))
        step = max(1, size - int(rng.integers(0, size)))  # overlap 0 .. size-1
        kind = rng.integers(0, 3)
        if kind == 0:  # fixed windows with overlap
            for s in range(0, int(lengths[d]), step):
                chunks.append((d, s, min(s + size, int(lengths[d]))))
        elif kind == 1:  # random cut points, no overlap, some gaps
            cuts = sorted(set(rng.integers(1, int(lengths[d]), size=int(rng.integers(1, 5))).tolist()))
            bounds = [0, *cuts, int(lengths[d])]
            for s, e in itertools.pairwise(bounds):
                if rng.random() < 0.85:
                    chunks.append((d, s, e))
        else:  # random intervals
            for _ in range(int(rng.integers(1, 6))):
                s = int(rng.integers(0, lengths[d] - 1))
                chunks.append((d, s, int(rng.integers(s + 1, lengths[d] + 1))))
    chunks = sorted(set(chunks))
    spans = []
    for _ in range(int(rng.integers(0, 4))):
        d = int(rng.integers(0, n_docs))
        s = int(rng.integers(0, lengths[d] - 1))
        spans.append((0, d, s, int(rng.integers(s + 1, min(lengths[d], s + 15) + 1)), int(rng.integers(0, 4))))
    spans = sorted({(q, d, s, e): g for q, d, s, e, g in spans}.items())
    spans = [(*key, g) for key, g in spans]
    order = rng.permutation(len(chunks))[: int(rng.integers(0, len(chunks) + 1))]
    rows = [(0, r, *chunks[i]) for r, i in enumerate(order.tolist())]
    return spans, rows, chunks


def test_200_random_query_chunking_pairs_agree_with_character_sets():
    rng = np.random.default_rng(18)
    checked = omega_checked = 0
    for _ in range(200):
        spans, rows, chunks = random_case(rng)
        a = arrays(spans, rows, chunks)
        for k, rel, graded in ((1, 1, False), (3, 1, False), (5, 2, False), (3, 1, True), (10, 2, True)):
            inter, relevant, retrieved = span_counts(a, k, rel, graded)
            ref = reference(spans, rows, chunks, 1, k, rel, graded)[0]
            r_inter, r_rel, r_ret = ref[0], ref[1], ref[2]
            assert inter[0] == float(r_inter) and relevant[0] == float(r_rel) and retrieved[0] == float(r_ret)
            if ref[4] is not None:  # brute force done (at most 12 candidate chunks)
                reach, _, cost = omega_counts(a, rel, graded)
                assert reach[0] == float(ref[3]) and cost[0] == float(ref[4]), (spans, chunks, rel)
                omega_checked += 1
        checked += 1
    assert checked == 200 and omega_checked > 600


def test_200_random_evaluations_through_the_engine_agree_with_character_sets():
    """The whole path: SpanQrels + Chunking + Run -> rs.evaluate, several queries sharing a chunking."""
    import rankscope as rs
    from rankscope.data.chunking import Chunking
    from rankscope.data.spans import SpanQrels

    rng = np.random.default_rng(2018)
    metrics = ["span_recall@2", "span_precision@2", "span_iou@3", "span_recall", "span_precision_omega",
               "span_iou_omega", "span_recall(weight=graded)@3", "span_iou(rel=2)@4", "context_size@2"]
    pairs = 0
    while pairs < 200:
        spans, rows, chunks = random_case(rng)
        queries = []
        for qi in range(int(rng.integers(1, 4))):
            q_spans, q_rows, _ = random_case(rng) if qi else (spans, rows, chunks)
            q_spans = [s for s in q_spans if s[1] <= max(c[0] for c in chunks)]
            order = rng.permutation(len(chunks))[: int(rng.integers(0, len(chunks) + 1))]
            queries.append(([(qi, *s[1:]) for s in q_spans], [(qi, r, *chunks[i]) for r, i in enumerate(order)]))
        all_spans = [s for q, _ in queries for s in q]
        if not all_spans:
            continue
        chunking = Chunking.from_records([{"chunk_id": f"c{d}_{s}_{e}", "doc_id": f"d{d}", "start": s, "end": e}
                                          for d, s, e in chunks])
        span_qrels = SpanQrels.from_records([{"query_id": f"q{q}", "doc_id": f"d{d}", "start": s, "end": e,
                                              "grade": g} for q, d, s, e, g in all_spans])
        run = rs.Run.from_ranked_lists({f"q{q}": [f"c{d}_{s}_{e}" for _, _, d, s, e in r] for q, (_, r) in
                                        enumerate(queries) if r and queries[q][0]})
        res = rs.evaluate(span_qrels, run, metrics, chunking=chunking) if len(run) else None
        for q, (q_spans, q_rows) in enumerate(queries):
            if not q_spans or res is None:
                continue
            pairs += 1
            row = res.per_query.row(f"q{q}")
            local_spans = [(0, *s[1:]) for s in q_spans]
            local_rows = [(0, *r[1:]) for r in q_rows]

            def ref(k, rel, graded, spans=local_spans, rows=local_rows, chunks=chunks):
                return reference(spans, rows, chunks, 1, k, rel, graded)[0]

            def div(a, b):
                return float(a) / float(b) if b else 0.0

            i, r, t, _, _ = ref(2, 1, False)
            assert row["span_recall@2"] == div(i, r)
            assert row["span_precision@2"] == (div(i, t) if r else 0.0)
            assert row["context_size@2"] == float(t)
            i, r, t, _, _ = ref(3, 1, False)
            assert row["span_iou@3"] == (div(i, r + t - i) if r else 0.0)
            i, r, _, _, _ = ref(10**6, 1, False)
            assert row["span_recall"] == div(i, r)
            i, r, _, _, _ = ref(3, 1, True)
            assert row["span_recall(weight=graded)@3"] == div(i, r)
            i, r, t, _, _ = ref(4, 2, False)
            assert row["span_iou(rel=2)@4"] == (div(i, r + t - i) if r else 0.0)
            _, r, _, reach, cost = ref(1, 1, False)
            if cost is not None:
                assert row["span_precision_omega"] == div(reach, cost)
                assert row["span_iou_omega"] == (div(reach, r + cost - reach) if r else 0.0)
