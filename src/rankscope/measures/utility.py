r"""Set utility and the relevance string (trec_eval ``utility``, ``relstring``).

* ``utility`` (trec_eval ``utility``, ``utility.2,-1,0,0``): a linear utility of
  the retrieved set's contingency table, a·rel_ret + b·nonrel_ret +
  c·rel_not_ret + d·nonrel_not_ret, where "non-relevant" includes unjudged
  documents and nonrel_not_ret = n_docs + rel_ret − ret − R (``n_docs`` is the
  collection size, trec_eval ``-N``, default 0).  Defaults a=1, b=−1, c=0, d=0
  (relevant retrieved minus non-relevant retrieved).  Not bounded; a query with
  no relevant document still scores its non-relevant retrievals.  No cutoff:
  the whole ranking is the set (use the evaluation ``depth`` to cut it).
* ``relstring`` (trec_eval ``relstring``, ``relstring.20``): **string-valued**,
  one character per document of the top ``length`` (default 10): the grade if
  0-9, ``>`` above 9, ``-`` not in the qrels, ``.`` pooled but unjudged
  (negative grade).  It has no numeric value, so ``evaluate`` rejects it with a
  clear error; get the strings with :func:`relstrings` or ``rankscope trec_eval
  -m relstring`` (printed per query only, like trec_eval).

>>> from rankscope import evaluate, Qrels, Run
>>> from rankscope.engine.prepare import QrelsIndex, prepare
>>> from rankscope.measures.utility import relstrings
>>> qrels = Qrels.from_dict({"q": {"a": 2, "b": 0, "c": -1}})
>>> run = Run.from_ranked_lists({"q": ["a", "x", "b", "c"]})
>>> evaluate(qrels, run, ["utility", "utility(a=2,b=-1)"]).mean()
{'utility': -2.0, 'utility(a=2,b=-1)': -1.0}
>>> relstrings(prepare(QrelsIndex(qrels), run)[0], 10)
['2-0.']
"""

from __future__ import annotations

import numpy as np

from rankscope.i18n import N_
from rankscope.measures.base import Measure, MeasureSpec, Param, TrecName
from rankscope.measures.counts import REL
from rankscope.measures.kernel_input import KernelInput
from rankscope.measures.registry import register

__all__ = ["relstrings"]


def _utility(p: KernelInput, m: Measure) -> np.ndarray:
    level = m.param("rel")
    rel_ret = p.count(p.is_rel(level) & p.judged & (p.grade >= 0)).astype(np.float64)
    ret = p.num_ret.astype(np.float64)
    num_rel = p.num_rel(level).astype(np.float64)
    a, b, c, d = (float(m.param(k)) for k in "abcd")
    n_docs = float(m.param("n_docs"))
    return a * rel_ret + b * (ret - rel_ret) + c * (num_rel - rel_ret) + d * (n_docs + rel_ret - ret - num_rel)


def relstrings(p: KernelInput, length: int = 10) -> list[str]:
    """The relevance string of each evaluated query (``p.query_ids`` order).

    >>> from rankscope import Qrels, Run
    >>> from rankscope.engine.prepare import QrelsIndex, prepare
    >>> p, _ = prepare(QrelsIndex(Qrels.from_dict({"q": {"a": 12}})), Run.from_ranked_lists({"q": ["a", "b"]}))
    >>> relstrings(p, 1)
    ['>']
    """
    p = p.complete_view()
    top = p.rank < max(int(length), 0)
    g = p.grade[top]
    codes = np.where(g > 9, ord(">"), ord("0") + np.clip(g, 0, 9))
    codes = np.where(g < 0, ord("."), np.where(p.judged[top], codes, ord("-"))).astype(np.uint8)
    text = codes.tobytes().decode("ascii")
    counts = np.bincount(p.qidx[top], minlength=p.n)
    ends = np.cumsum(counts)
    starts = ends - counts
    return [text[s:e] for s, e in zip(starts.tolist(), ends.tolist())]


def _relstring(p: KernelInput, m: Measure) -> np.ndarray:
    return np.array(relstrings(p, int(m.param("length"))), dtype=object)


_DOC = __doc__ or ""
_COEF = "utility coefficient of"
for spec in (
    MeasureSpec("utility", N_("linear utility a*rel_ret + b*nonrel_ret + c*rel_missed + d*nonrel_missed"), _utility,
                params=(Param("a", float, 1.0, f"{_COEF} relevant retrieved"),
                        Param("b", float, -1.0, f"{_COEF} non-relevant retrieved"),
                        Param("c", float, 0.0, f"{_COEF} relevant not retrieved"),
                        Param("d", float, 0.0, f"{_COEF} non-relevant not retrieved"),
                        Param("n_docs", int, 0, "documents in the collection (trec_eval -N)", minimum=0), REL),
                trec=(TrecName("utility", "list", ("a", "b", "c", "d"), arity=4, options=(("n_docs", "num_docs"),)),),
                bounds=None, family="set", doc=_DOC, judged_view=True),
    MeasureSpec("relstring", N_("STRING: relevance codes of the top documents (trec_eval only)"), _relstring,
                params=(Param("length", int, 10, "number of documents shown", minimum=0),),
                trec=(TrecName("relstring", "list", ("length",)),), bounds=None, aggregate="none", family="trec",
                doc=_DOC, text=True),
):
    register(spec)
