"""Labels for teams that have none: pooling, an LLM judge, provenance, agreement, synthetic questions.

* :mod:`~rankscope.labels.pool` — what needs judging (:func:`build_pool`) and judged@k per run;
* :mod:`~rankscope.llm_client` — a small client of the OpenAI-compatible chat API (httpx);
* :mod:`~rankscope.labels.prompts` — versioned prompts (UMBRELA-style judge, question writer), en / zh;
* :mod:`~rankscope.labels.parse` — reading replies, leniently in form and strictly in content;
* :mod:`~rankscope.labels.judge` — one judgment, a plain function (:func:`judge_one`);
* :mod:`~rankscope.labels.batch` — many judgments: cache, concurrency, progress, dry-run cost;
* :mod:`~rankscope.labels.cache` — the SQLite answer cache;
* :mod:`~rankscope.labels.provenance` — labels with their origin, the qrels sidecar, human-wins merge;
* :mod:`~rankscope.labels.agreement` / :mod:`~rankscope.labels.system_ranking` — bias, κ, τ, τ_AP with intervals
  over queries, flipped verdicts;
* :mod:`~rankscope.labels.ppi` — prediction-powered metrics from a random human audit of queries;
* :mod:`~rankscope.labels.group_agreement` — Fleiss' κ and Krippendorff's α among three or more people;
* :mod:`~rankscope.labels.synth` — synthetic questions that keep their chunk id.

See ``docs/labels.md``.  Names are imported lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rankscope._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Pool": "rankscope.labels.pool",
    "RunJudged": "rankscope.labels.pool",
    "build_pool": "rankscope.labels.pool",
    "judged_at_k": "rankscope.labels.pool",
    "read_pool": "rankscope.labels.pool",
    "read_pool_records": "rankscope.labels.pool",
    "top_k": "rankscope.labels.pool",
    "Endpoint": "rankscope.llm_client",
    "ChatClient": "rankscope.llm_client",
    "EndpointError": "rankscope.llm_client",
    "JudgeSettings": "rankscope.labels.judge",
    "Judgment": "rankscope.labels.judge",
    "judge_one": "rankscope.labels.judge",
    "JudgePlan": "rankscope.labels.batch",
    "JudgeReport": "rankscope.labels.batch",
    "judge_pairs": "rankscope.labels.batch",
    "plan_judging": "rankscope.labels.batch",
    "LabelCache": "rankscope.labels.cache",
    "Label": "rankscope.labels.provenance",
    "Labels": "rankscope.labels.provenance",
    "combine": "rankscope.labels.provenance",
    "read_labels": "rankscope.labels.provenance",
    "label_agreement": "rankscope.labels.agreement",
    "stuart_maxwell": "rankscope.labels.agreement",
    "group_agreement": "rankscope.labels.group_agreement",
    "draw_audit": "rankscope.labels.ppi",
    "ppi_mean": "rankscope.labels.ppi",
    "prediction_powered": "rankscope.labels.ppi",
    "read_audit": "rankscope.labels.ppi",
    "ranking_agreement": "rankscope.labels.system_ranking",
    "tau_ap": "rankscope.labels.system_ranking",
    "synthesize": "rankscope.labels.synth",
    "read_texts": "rankscope.labels.texts",
    "get_prompt": "rankscope.labels.prompts",
    "parse_grade": "rankscope.labels.parse",
}

__all__ = [
    "ChatClient",
    "Endpoint",
    "EndpointError",
    "JudgePlan",
    "JudgeReport",
    "JudgeSettings",
    "Judgment",
    "Label",
    "LabelCache",
    "Labels",
    "Pool",
    "RunJudged",
    "build_pool",
    "combine",
    "draw_audit",
    "get_prompt",
    "group_agreement",
    "judge_one",
    "judge_pairs",
    "judged_at_k",
    "label_agreement",
    "parse_grade",
    "plan_judging",
    "ppi_mean",
    "prediction_powered",
    "ranking_agreement",
    "read_audit",
    "read_labels",
    "read_pool",
    "read_pool_records",
    "read_texts",
    "stuart_maxwell",
    "synthesize",
    "tau_ap",
    "top_k",
]

if TYPE_CHECKING:
    from rankscope.labels.agreement import label_agreement, stuart_maxwell
    from rankscope.labels.batch import JudgePlan, JudgeReport, judge_pairs, plan_judging
    from rankscope.labels.cache import LabelCache
    from rankscope.labels.group_agreement import group_agreement
    from rankscope.labels.judge import JudgeSettings, Judgment, judge_one
    from rankscope.labels.parse import parse_grade
    from rankscope.labels.pool import Pool, RunJudged, build_pool, judged_at_k, read_pool, read_pool_records, top_k
    from rankscope.labels.ppi import draw_audit, ppi_mean, prediction_powered, read_audit
    from rankscope.labels.prompts import get_prompt
    from rankscope.labels.provenance import Label, Labels, combine, read_labels
    from rankscope.labels.synth import synthesize
    from rankscope.labels.system_ranking import ranking_agreement, tau_ap
    from rankscope.labels.texts import read_texts
    from rankscope.llm_client import ChatClient, Endpoint, EndpointError

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
