"""Reading the judgments an evaluation command scores against, and the lines that say what its numbers rest on.

``--qrels FILE`` reads the qrels; when a provenance sidecar sits beside it
(``FILE.provenance.jsonl``, written by ``rankscope judge`` / ``pool --combined-out``)
or ``--provenance`` names one, the labels keep their origin and every run's share
of model labels in its top k is reported (:mod:`rankscope.labels.provenance`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rankscope.i18n import _

__all__ = ["read_judgments", "result_lines"]

def read_judgments(qrels: Path, provenance: Path | None = None,
                   lang: str | None = None, metrics: Any = None) -> tuple[Any, Any, str | None]:
    """``(judgments, qrels, note)``: what the engine scores against (Labels when a provenance sidecar is found
    or given, else Qrels), the plain qrels (for reports), and a line saying where the provenance came from, in
    ``lang`` (default: the language of the command running).

    When ``metrics`` ask for a diversity measure the file is read as subtopic judgments (ndeval's
    ``topic subtopic docno judgment``), their derived document qrels beside them."""
    from rankscope.cli.app import command_lang
    from rankscope.labels.provenance import read_labels, sidecar_path

    if metrics:
        from rankscope.measures import parse_metrics

        if any(m.spec.family == "diversity" for __, m in parse_metrics(list(metrics))):
            from rankscope.io.subtopics import read_subtopic_qrels

            sub = read_subtopic_qrels(qrels)
            return sub, sub.to_qrels(), None

    side = provenance if provenance is not None else sidecar_path(qrels)
    if provenance is None and not side.exists():
        from rankscope.io import read_qrels

        q = read_qrels(qrels)
        return q, q, None
    labels = read_labels(qrels, sidecar=side)
    c = labels.counts()
    note = (_("labels with provenance from {side}: {human} human, {model} model, {failed} failed judgments "
               "(unjudged)", side=side, **c) if c["failed"]
            else _("labels with provenance from {side}: {human} human, {model} model", side=side, **c))
    return labels, labels.qrels, note.text(lang or command_lang())


def result_lines(result: Any, lang: str = "en") -> tuple[list[str], list[str]]:
    """judged@k of the result's run, and its warnings (queries missing from the run too: they are scored 0 or left
    out, which can change the conclusion); run queries the qrels lack are said on the query-count line only."""
    from rankscope.engine.coverage import judged_line

    judged = judged_line({result.run_name: result.judged.to_dict()}, lang) if result.judged is not None else ""
    # queries the run lacks are counted on the summary line and warned about here, as compare and check do
    warnings = [_("warning: {text}", text=w.text(lang)).text(lang) for w in result.warnings()
                if w.kind != "not_in_qrels"]
    return ([judged] if judged else []), warnings
