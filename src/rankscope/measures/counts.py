"""Counting measures (trec_eval's ``num_*``), summed over queries like trec_eval.

* ``num_q``: number of evaluated queries.
* ``num_ret``: documents retrieved (after the depth cut).
* ``num_rel``: relevant documents in the qrels (grade >= relevance level),
  whether retrieved or not.
* ``num_rel_ret``: relevant documents retrieved.
* ``num_nonrel_judged_ret``: retrieved documents judged non-relevant.

The per-query value is the count for that query; the aggregate is the sum
(``num_q``: the number of queries).  Queries missing from the run count 0 retrieved.

>>> from rankscope import evaluate, Qrels, Run
>>> r = evaluate(Qrels.from_dict({"q": {"a": 1, "b": 1, "c": 0}}),
...              Run.from_ranked_lists({"q": ["a", "c", "x"]}), ["num_ret", "num_rel", "num_rel_ret"])
>>> r.mean()
{'num_ret': 3.0, 'num_rel': 2.0, 'num_rel_ret': 1.0}
"""

from __future__ import annotations

import numpy as np

from rankscope.i18n import N_
from rankscope.measures._kernel import rel_ret_at
from rankscope.measures.base import Measure, MeasureSpec, Param, TrecName
from rankscope.measures.kernel_input import KernelInput
from rankscope.measures.registry import register

REL = Param("rel", int, None, "minimum grade that counts as relevant (default: the evaluation's relevance level)")
JUDGED_ONLY = Param("judged_only", bool, False,
                    "score the ranking with its unjudged documents removed before ranking (ir_measures' judged_only, "
                    "trec_eval -J for this measure alone)")


def _num_q(p: KernelInput, m: Measure) -> np.ndarray:
    return np.ones(p.n)


def _num_ret(p: KernelInput, m: Measure) -> np.ndarray:
    return p.num_ret.astype(np.float64)


def _num_rel(p: KernelInput, m: Measure) -> np.ndarray:
    return p.num_rel(m.param("rel")).astype(np.float64)


def _num_rel_ret(p: KernelInput, m: Measure) -> np.ndarray:
    return rel_ret_at(p, None, m.param("rel"))


def _num_nonrel_judged_ret(p: KernelInput, m: Measure) -> np.ndarray:
    return p.count(p.judged & ~p.is_rel(m.param("rel"))).astype(np.float64)


for _name, _fn, _summary, _params in (
    ("num_q", _num_q, N_("number of evaluated queries"), ()),
    ("num_ret", _num_ret, N_("number of retrieved documents"), ()),
    ("num_rel", _num_rel, N_("number of relevant documents in the qrels"), (REL,)),
    ("num_rel_ret", _num_rel_ret, N_("number of relevant documents retrieved"), (REL,)),
    ("num_nonrel_judged_ret", _num_nonrel_judged_ret, N_("number of judged non-relevant documents retrieved"), (REL,)),
):
    register(
        MeasureSpec(
            name=_name,
            summary=_summary,
            kernel=_fn,
            params=_params,
            trec=(TrecName(_name),),
            ir_measures={"num_q": "NumQ", "num_ret": "NumRet", "num_rel": "NumRel", "num_rel_ret": "NumRelRet"}.get(
                _name
            ),
            bounds=None,
            aggregate="count" if _name == "num_q" else "sum",
            family="counts",
            doc=__doc__ or "",
            judged_view=True,
        )
    )
