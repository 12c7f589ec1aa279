"""What the judging pages show, computed from the store (no HTML here)."""

from __future__ import annotations

from typing import Any

from rankscope.service import store
from rankscope.service.db import Database

__all__ = ["judging_list_view", "task_view", "judge_view", "check_annotator", "fmt_kappa"]


def check_annotator(value: str | None) -> str:
    """An annotator name from a form or URL, checked as the API checks it (422 naming ``annotator``)."""
    from pydantic import TypeAdapter, ValidationError

    from rankscope.service.api.errors import FieldError, Invalid
    from rankscope.service.api.schemas import Annotator

    try:
        return str(TypeAdapter(Annotator).validate_python(value or ""))
    except ValidationError as exc:
        raise FieldError("annotator", Invalid(dict(exc.errors()[0]))) from None


def fmt_kappa(k: dict[str, Any] | None) -> str:
    """``0.812 [0.70, 0.90]``; ``–`` when undefined.

    >>> fmt_kappa({"value": 0.8123, "low": 0.7, "high": 0.9}), fmt_kappa(None)
    ('0.812 [0.700, 0.900]', '–')
    """
    if not k or k.get("value") is None:
        return "–"
    if k.get("low") is None:
        return f"{k['value']:.3f}"
    return f"{k['value']:.3f} [{k['low']:.3f}, {k['high']:.3f}]"


def judging_list_view(db: Database) -> dict[str, Any]:
    from rankscope.service.api.judging import task_out

    with db.read() as s:
        tasks = [task_out(s, t) for t in store.list_tasks(s)]
        testsets = store.list_testsets(s)
    return {"tasks": tasks, "testsets": testsets}


def task_view(db: Database, task_id: int, relevance_level: int, annotator: str | None, merge: str,
              prelabels: bool, lang: str = "en") -> dict[str, Any]:
    """The overview of a task: progress per annotator and per query, agreement, the export and what it holds (a
    problem of the export said in ``lang``)."""
    from rankscope.service.api.errors import FieldError
    from rankscope.service.api.judging import agreement_of, export_for, task_out

    with db.read() as s:
        task = task_out(s, store.get_task(s, task_id))
        queries = store.query_counts(s, task_id)
    names = [a["annotator"] for a in task["annotators"]]
    export: dict[str, Any] = {"annotator": annotator if annotator in names else "", "merge": merge,
                              "prelabels": prelabels, "summary": None, "problem": None}
    try:
        _, _, export["summary"] = export_for(db, task_id, export["annotator"] or None, merge, prelabels)
    except FieldError as exc:
        export["problem"] = exc.text(lang)
    agr = agreement_of(db, task_id, relevance_level)
    for row in agr["pairs"] + agr["prelabels"]:
        row["kb"], row["kw"] = fmt_kappa(row["kappa_binary"]), fmt_kappa(row["kappa_weighted"])
    if agr["group"] is not None:
        g = agr["group"]
        g["fleiss"], g["krippendorff"] = fmt_kappa(g["fleiss_kappa"]), fmt_kappa(g["krippendorff_alpha_ordinal"])
    for a in task["annotators"]:
        a["pct"] = 100.0 * (a["judged"] + a["skipped"]) / task["n_items"] if task["n_items"] else 0.0
    return {"task": task, "queries": queries, "names": names, "agreement": agr, "export": export,
            "relevance_level": relevance_level}


def judge_view(db: Database, task_id: int, annotator: str, item_id: int | None, *,
               blind: bool = True) -> dict[str, Any]:
    """One item for ``annotator``: the given one, or the next they have neither judged nor skipped.

    The pre-label is in the page only when the service has recorded showing it to ``annotator``
    (``prelabel``); otherwise a blind annotator's page holds nothing of it, and another's holds a button that
    asks for it (``can_reveal``)."""
    from rankscope.service.api.judging import items_out, prelabel_out, task_out

    with db.read() as s:
        task = task_out(s, store.get_task(s, task_id))
        found, remaining = store.next_item(s, task_id, annotator)
        item = store.get_item(s, task_id, item_id, "item") if item_id is not None else found
        ctx: dict[str, Any] = {"task": task, "annotator": annotator, "remaining": remaining, "item": None}
        mine = next((a for a in task["annotators"] if a["annotator"] == annotator),
                    {"annotator": annotator, "judged": 0, "skipped": 0, "remaining": task["n_items"],
                     "prelabel_shown": 0})
        ctx["mine"] = mine
        ctx["pct"] = 100.0 * (mine["judged"] + mine["skipped"]) / task["n_items"] if task["n_items"] else 0.0
        if item is None:
            return ctx
        view = items_out(s, task_id, [item], annotator, prelabels=False)[0]
        ctx["item"] = view
        has = item.prelabel_source is not None
        shown = has and not blind and store.was_shown(s, item.id, annotator)
        ctx["prelabel"] = prelabel_out(item) if shown else None
        ctx["can_reveal"] = has and not blind and not shown
        ctx["blind"] = blind
        neighbours = store.task_items(s, task_id, max(item.position - 1, 0), 3)
        ctx["prev"] = next((i.id for i in neighbours if i.position == item.position - 1), None)
        ctx["next"] = next((i.id for i in neighbours if i.position == item.position + 1), None)
        per_query = next((q for q in store.query_counts(s, task_id) if q[0] == item.query_id), None)
        done = per_query[3].get(annotator, {}) if per_query else {}
        ctx["query_progress"] = {"items": per_query[2] if per_query else 0, "judged": done.get("judged", 0),
                                 "skipped": done.get("skipped", 0)}
    return ctx
