"""Building span judgments from what data sets carry: evidence, answer texts, SQuAD-style offsets.

* :func:`evidence_spans` — test-set items with ``evidence``: a list of
  ``{"doc_id", "start", "end"[, "grade"][, "text"]}`` (``text``, when given, must equal
  the document's text at those offsets);
* :func:`locate_answers` — items with reference answers: every occurrence of every
  answer in the query's judged documents (or the whole corpus) becomes a span; answers
  found no time or several times are counted, never guessed silently;
* :func:`squad_spans` — SQuAD-style data (``data[].paragraphs[].context`` and
  ``qas[].answers[].answer_start``): the text at each offset is checked against the
  answer, offsets are moved onto the corpus' document text when the corpus stores the
  context differently (stripped, or after a title), and an answer whose offset is wrong
  is placed at its nearest occurrence — every case counted in the report.

Each builder returns a :class:`SpanBuild`: the spans, the counts
(:class:`BuildReport`) and, for SQuAD data without a corpus, the documents.

>>> from rankscope.data.testset import Query, TestSet
>>> ts = TestSet([Query("q1", "capital?", answers=("Paris",))], {"q1": {"d1": 1}},
...              corpus={"d1": "Paris is the capital of France. Paris has 2M people."})
>>> built = locate_answers(ts)
>>> [(r["doc_id"], r["start"], r["end"]) for r in built.spans.to_records()]
[('d1', 0, 5), ('d1', 32, 37)]
>>> built.report.counts["found_several"], built.report.counts["spans"]
(1, 2)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rankscope.data._places import place_error
from rankscope.data._spantable import Locator
from rankscope.data.spans import SpanQrels
from rankscope.errors import EmptyInputError, InvalidParameterError, ParseError
from rankscope.i18n import N_, Message, _, gettext, ngettext

__all__ = ["BuildReport", "SpanBuild", "evidence_spans", "locate_answers", "squad_spans"]

MAX_EXAMPLES = 5
#: the line of each builder's report: its head, then each count said
_BUILDS = {"answers": N_("Answer location: "), "squad": N_("SQuAD-style offsets: ")}
_COUNTS: dict[str, Callable[[int], Message]] = {
    "answers": lambda n: ngettext("{n} answer", "{n} answers", n),
    "found_once": lambda n: _("{n} found once", n=n),
    "found_several": lambda n: _("{n} found several times", n=n),
    "not_found": lambda n: _("{n} not found", n=n),
    "exact": lambda n: _("{n} exactly at their offset", n=n),
    "shifted": lambda n: _("{n} moved onto the document text (context stored at another position)", n=n),
    "relocated": lambda n: ngettext("{n} offset wrong, placed at the nearest occurrence",
                                    "{n} offsets wrong, placed at the nearest occurrence", n),
    "failed": lambda n: _("{n} failed (text not in the context)", n=n),
    "merged": lambda n: ngettext("{n} identical span merged", "{n} identical spans merged", n),
    "spans": lambda n: ngettext("{n} span", "{n} spans", n),
    "questions_without_span": lambda n: ngettext("{n} question without a span", "{n} questions without a span", n),
    "queries_without_span": lambda n: ngettext("{n} query without a span", "{n} queries without a span", n),
    "context_not_found": lambda n: ngettext("{n} context not found in the corpus",
                                            "{n} contexts not found in the corpus", n),
}


@dataclass
class BuildReport:
    """What a builder did: named counts and the first few problem cases (``examples``)."""

    kind: str
    counts: dict[str, int] = field(default_factory=dict)
    examples: list[dict[str, Any]] = field(default_factory=list)

    def add(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def example(self, **case: Any) -> None:
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append(case)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "counts": dict(self.counts), "examples": list(self.examples)}

    def message(self, lang: str = "en") -> str:
        """One line with every count, in ``lang``."""
        parts = [_COUNTS[k](v).text(lang) for k, v in self.counts.items()]
        return gettext(_BUILDS[self.kind], lang) + ("; " if lang == "en" else "；").join(parts)


@dataclass
class SpanBuild:
    """The outcome of a builder: ``spans``, ``report`` and (SQuAD without a corpus) ``corpus``."""

    spans: SpanQrels
    report: BuildReport
    corpus: dict[str, str] | None = None


# -- evidence ---------------------------------------------------------------------------------------------
def evidence_spans(items: Sequence[tuple[str, Any, str]], corpus: Mapping[str, str] | None = None,
                   source: str | None = None, lines: Sequence[int | None] | None = None) -> SpanQrels | None:
    """Spans from the ``evidence`` lists of test-set items: ``items`` are ``(query id, evidence, label)``.

    ``label`` names the item in errors (``record 3``); ``lines`` the file line of each
    item (JSONL).  Returns None when no item has evidence.

    >>> evidence_spans([("q1", [{"doc_id": "d", "start": 0, "end": 4, "text": "Pari"}], "record 1")],
    ...                corpus={"d": "Paris"}).to_records()
    [{'query_id': 'q1', 'doc_id': 'd', 'start': 0, 'end': 4, 'grade': 1}]
    """
    recs: list[Any] = []
    labels: list[str] = []
    row_lines: list[int] = []
    texts: list[Any] = []
    for i, (qid, evidence, label) in enumerate(items):
        if evidence is None:
            continue
        line = lines[i] if lines is not None else None
        where = label if line is None else ""
        if not isinstance(evidence, list):
            kind, shape = type(evidence).__name__, "{doc_id, start, end}"
            raise place_error(_("'evidence' must be a list of {shape} objects, got {type}", shape=shape, type=kind),
                              source, where, line)
        for j, ev in enumerate(evidence):
            if not isinstance(ev, Mapping):
                kind = type(ev).__name__
                raise place_error(_("expected an object, got {type}", type=kind), source,
                                  f"{where + ', ' if where else ''}evidence {j + 1}", line)
            recs.append({**ev, "query_id": qid})
            labels.append(f"{where + ', ' if where else ''}evidence {j + 1}")
            row_lines.append(line or 0)
            texts.append(ev.get("text"))
    if not recs:
        return None
    from rankscope.data._spantable import record_columns

    locate = Locator(source, lines=row_lines if lines is not None else None, labels=labels)
    cols = record_columns(recs, ("query_id", "doc_id", "start", "end"), {"grade": 1}, locate)
    spans = SpanQrels(cols["query_id"], cols["doc_id"], cols["start"], cols["end"], cols["grade"], corpus=corpus,
                      _locate=locate)
    if corpus is not None:
        for i, text in enumerate(texts):
            if text is None:
                continue
            doc, s, e = str(cols["doc_id"][i]), int(cols["start"][i]), int(cols["end"][i])
            if corpus[doc][s:e] != text:
                held = corpus[doc][s:e]
                raise locate.error(i, "text",
                                   _("{text!r} differs from the document's text at [{start}, {end}): {held!r}",
                                     text=text, start=s, end=e, held=held))
    return spans


# -- answer location --------------------------------------------------------------------------------------
def _occurrences(text: str, needle: str) -> list[int]:
    """Start of every occurrence of ``needle`` in ``text`` (overlapping occurrences included)."""
    out = []
    pos = text.find(needle)
    while pos >= 0:
        out.append(pos)
        pos = text.find(needle, pos + 1)
    return out


def locate_answers(testset: Any, *, scope: str = "judged", multiple: str = "all", grade: int = 1) -> SpanBuild:
    """Spans at the occurrences of every query's reference answers (exact, case-sensitive text match).

    Parameters
    ----------
    testset : a :class:`~rankscope.data.testset.TestSet` with answers and a corpus
    scope : ``"judged"`` (search the query's relevant documents; the whole corpus when it
        has none) or ``"corpus"`` (every document)
    multiple : what to do with an answer found several times: ``"all"`` (a span at each
        occurrence, the default), ``"first"`` (the first occurrence in the first document)
        or ``"skip"`` (no span)
    grade : the grade of every span

    The report counts ``answers``, ``found_once``, ``found_several``, ``not_found``,
    ``spans`` (after merging identical ones) and ``queries_without_span``.
    """
    if scope not in ("judged", "corpus"):
        raise InvalidParameterError(_("scope must be 'judged' or 'corpus', got {value!r}", value=scope))
    if multiple not in ("all", "first", "skip"):
        raise InvalidParameterError(_("multiple must be 'all', 'first' or 'skip', got {value!r}", value=multiple))
    corpus = getattr(testset, "corpus", None)
    if corpus is None:
        raise InvalidParameterError(_("test set {name!r} has no corpus to find the answers in", name=testset.name))
    if not testset.has_answers:
        raise EmptyInputError(_("test set {name!r} has no reference answers to locate", name=testset.name))
    relevant: dict[str, list[str]] = {}
    for q, docs in testset.judgments().items():
        relevant[q] = [d for d, g in docs.items() if g >= 1 and d in corpus]
    report = BuildReport("answers", {"answers": 0, "found_once": 0, "found_several": 0, "not_found": 0})
    found: dict[tuple[str, str, int, int], int] = {}
    without = 0
    for query in testset.queries:
        docs = relevant.get(query.id) if scope == "judged" else None
        if not docs:
            docs = list(corpus)
        before = len(found)
        for answer in query.answers:
            report.add("answers")
            hits = [(d, s) for d in docs for s in _occurrences(corpus[d], answer)]
            if not hits:
                report.add("not_found")
                report.example(query_id=query.id, answer=answer, problem="not found")
                continue
            if len(hits) > 1:
                report.add("found_several")
                report.example(query_id=query.id, answer=answer, problem=f"found {len(hits)} times")
                if multiple == "skip":
                    continue
                if multiple == "first":
                    hits = hits[:1]
            else:
                report.add("found_once")
            for d, s in hits:
                found[(query.id, d, s, s + len(answer))] = grade
        without += len(found) == before
    report.counts["spans"] = len(found)
    report.counts["queries_without_span"] = without
    spans = _spans_of(found)
    return SpanBuild(spans, report)


def _spans_of(found: Mapping[tuple[str, str, int, int], int]) -> SpanQrels:
    keys = list(found)
    return SpanQrels([k[0] for k in keys], [k[1] for k in keys], [k[2] for k in keys], [k[3] for k in keys],
                     list(found.values()))


# -- SQuAD-style ------------------------------------------------------------------------------------------
def _squad_data(data: Any) -> list[Any]:
    if isinstance(data, (str, Path)):
        from rankscope.io._source import decode, read_bytes

        try:
            data = json.loads(decode(read_bytes(data), str(data)))
        except json.JSONDecodeError as exc:
            raise ParseError(_("invalid JSON: {reason}", reason=exc.msg), source=str(data), line=exc.lineno) from None
    if isinstance(data, Mapping):
        data = data.get("data")
    if not isinstance(data, list):
        shape = "{'data': [{'title', 'paragraphs': [{'context', 'qas'}]}]}"
        raise InvalidParameterError(_("SQuAD-style data is {shape}", shape=shape))
    return data


def _paragraph_id(article: Mapping[str, Any], paragraph: Mapping[str, Any], index: int) -> str:
    pid = paragraph.get("id")
    return str(pid) if pid is not None else f"{article.get('title', 'article')}#{index}"


def _nearest(text: str, needle: str, near: int) -> int | None:
    hits = _occurrences(text, needle) if needle else []
    if not hits:
        return None
    return min(hits, key=lambda s: (abs(s - near), s))


def squad_spans(data: Any, *, corpus: Mapping[str, str] | None = None,
                doc_id: Callable[[Mapping[str, Any], Mapping[str, Any], int], str] | None = None,
                questions: Iterable[str] | None = None, relocate: bool = True) -> SpanBuild:
    """Spans from SQuAD-style data, with every offset checked.

    Parameters
    ----------
    data : the parsed JSON, or a path to it
    corpus : the documents the spans should point into (e.g. a test set's corpus, where a
        document may be ``title + " " + context.strip()``); each paragraph's context is
        found in its document and the answers' offsets moved by that shift.  Without a
        corpus the contexts are the documents (returned in :attr:`SpanBuild.corpus`).
    doc_id : ``(article, paragraph, paragraph index) -> document id``; default: the
        paragraph's ``id``, else ``"<title>#<index>"``
    questions : keep only these question ids
    relocate : an answer whose offset does not hold its text is placed at the nearest
        occurrence of the text in the context (counted as ``relocated``); with False it
        gets no span (counted as ``failed``)

    Report counts: ``answers``; ``exact`` (the text is at the given offset); ``shifted``
    (placed answers whose offset had to move because the document holds the context at
    another position); ``relocated``;
    ``failed`` (the text is not in the context, e.g. ``answer_start`` -1); ``merged``
    (identical spans of one question, e.g. several annotators); ``spans``;
    ``questions_without_span``; ``context_not_found`` (paragraphs whose context is not
    in the corpus document).
    """
    articles = _squad_data(data)
    keep = set(questions) if questions is not None else None
    make_id = doc_id or _paragraph_id
    report = BuildReport("squad", {k: 0 for k in ("answers", "exact", "shifted", "relocated", "failed", "merged")})
    found: dict[tuple[str, str, int, int], int] = {}
    docs: dict[str, str] = {}
    without = 0
    for article in articles:
        for index, para in enumerate(article.get("paragraphs", [])):
            context = str(para.get("context", ""))
            did = make_id(article, para, index)
            shift = 0
            if corpus is not None:
                text = corpus.get(did)
                stripped = context.strip()
                at = text.find(stripped) if text is not None else -1
                if at < 0:
                    n_q = len(para.get("qas", []))
                    report.add("context_not_found")
                    report.example(doc_id=did, problem="context not found in the corpus document")
                    without += n_q
                    continue
                shift = at - (len(context) - len(context.lstrip()))
            else:
                docs[did] = context
            for qa in para.get("qas", []):
                qid = str(qa.get("id"))
                if keep is not None and qid not in keep:
                    continue
                before = len(found)
                for ans in qa.get("answers", []):
                    answer = str(ans.get("text", ""))
                    start = ans.get("answer_start", -1)
                    start = int(start) if isinstance(start, (int, float)) else -1
                    report.add("answers")
                    if start >= 0 and context[start:start + len(answer)] == answer and answer:
                        report.add("exact")
                    else:
                        near = _nearest(context, answer, start) if relocate else None
                        if near is None:
                            report.add("failed")
                            report.example(query_id=qid, answer=answer, answer_start=start,
                                           problem="answer text not at its offset nor in the context")
                            continue
                        report.add("relocated")
                        report.example(query_id=qid, answer=answer, answer_start=start, moved_to=near,
                                       problem="offset does not hold the answer; nearest occurrence used")
                        start = near
                    if shift:
                        report.add("shifted")
                    key = (qid, did, start + shift, start + shift + len(answer))
                    if key in found:
                        report.add("merged")
                    found[key] = 1
                without += len(found) == before
    report.counts["spans"] = len(found)
    report.counts["questions_without_span"] = without
    if not found:
        raise EmptyInputError(_("no answer of the SQuAD-style data could be placed"))
    spans = _spans_of(found)
    if corpus is not None:
        spans.validate(corpus)
    return SpanBuild(spans, report, None if corpus is not None else docs)
