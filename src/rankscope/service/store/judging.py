"""Judging tasks: the items to judge with their texts and pre-labels, and the annotators' judgments.

A judgment is one row per (item, annotator), written with an upsert: judging an item again replaces
the grade and the note.  Whether it is blind is decided here, never by the client: a judgment saved
after the service showed the annotator the item's pre-label (a :class:`PrelabelView`) is marked
``prelabel_shown``, and stays so.

Annotators are invited (:func:`create_annotator`): each gets a random token, shown once; only its
SHA-256 is stored, and :func:`find_annotator` knows them by it.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from typing import Any

from sqlalchemy import delete, func, or_, select
from sqlalchemy.orm import Session

from rankscope.errors import InvalidParameterError
from rankscope.i18n import _
from rankscope.service.db import (
    Annotator,
    Database,
    Document,
    JudgingDoc,
    JudgingItem,
    JudgingQuery,
    JudgingTask,
    Judgment,
    PrelabelView,
    Query,
)
from rankscope.service.db.models import utcnow
from rankscope.service.store.base import NotFound, fetch, insert_rows

__all__ = [
    "create_task", "get_task", "list_tasks", "delete_task", "task_items", "get_item", "next_item", "item_texts",
    "save_judgment", "get_judgment", "task_judgments", "annotator_counts", "query_counts", "testset_texts",
    "item_judgments", "create_annotator", "find_annotator", "list_annotators", "record_views", "was_shown",
    "hash_token", "AnnotatorExists",
]


def create_task(db: Database, name: str, queries: list[tuple[str, str]], docs: list[tuple[str, str, int]],
                items: list[dict[str, Any]], info: dict[str, Any]) -> int:
    """Store a task: its queries ``(id, text)`` in order, documents ``(id, text shown, original length)`` and
    items (dicts of :class:`JudgingItem` columns without ``task_id``; ``position`` gives the order)."""
    with db.write() as s:
        task = JudgingTask(name=name, n_items=len(items), n_queries=len({it["query_id"] for it in items}),
                           n_prelabels=sum(1 for it in items if it.get("prelabel") is not None), info=info)
        s.add(task)
        s.flush()
        insert_rows(db, s, JudgingQuery, [{"task_id": task.id, "position": i, "query_id": q, "text": t}
                                          for i, (q, t) in enumerate(queries)])
        insert_rows(db, s, JudgingDoc, [{"task_id": task.id, "doc_id": d, "text": t, "length": n}
                                        for d, t, n in docs])
        insert_rows(db, s, JudgingItem, [{"task_id": task.id, **it} for it in items])
        return task.id


def get_task(s: Session, task_id: int, field: str = "path") -> JudgingTask:
    return fetch(s, JudgingTask, task_id, "judging task", field)


def list_tasks(s: Session) -> list[JudgingTask]:
    return list(s.scalars(select(JudgingTask).order_by(JudgingTask.id)))


def delete_task(db: Database, task_id: int) -> None:
    """Delete a task with its items, texts and judgments."""
    with db.write() as s:
        get_task(s, task_id)
        s.execute(delete(Judgment).where(Judgment.task_id == task_id))
        s.execute(delete(PrelabelView).where(PrelabelView.task_id == task_id))
        s.execute(delete(Annotator).where(Annotator.task_id == task_id))
        s.execute(delete(JudgingItem).where(JudgingItem.task_id == task_id))
        s.execute(delete(JudgingDoc).where(JudgingDoc.task_id == task_id))
        s.execute(delete(JudgingQuery).where(JudgingQuery.task_id == task_id))
        s.execute(delete(JudgingTask).where(JudgingTask.id == task_id))


def task_items(s: Session, task_id: int, offset: int = 0, limit: int | None = None) -> list[JudgingItem]:
    """Items in the order they are shown."""
    q = select(JudgingItem).where(JudgingItem.task_id == task_id).order_by(JudgingItem.position).offset(offset)
    if limit is not None:
        q = q.limit(limit)
    return list(s.scalars(q))


def get_item(s: Session, task_id: int, item_id: int, field: str = "path") -> JudgingItem:
    """An item of the task (:class:`NotFound` naming ``field`` when it does not exist or belongs to another task)."""
    item = s.get(JudgingItem, item_id)
    if item is None or item.task_id != task_id:
        raise NotFound.of("item", item_id, field, task=task_id)
    return item


def next_item(s: Session, task_id: int, annotator: str, after: int = -1) -> tuple[JudgingItem | None, int]:
    """The first item after position ``after`` (wrapping round) that ``annotator`` has neither judged nor
    skipped, and how many such items there are."""
    mine = select(Judgment.item_id).where(Judgment.task_id == task_id, Judgment.annotator == annotator)
    open_items = select(JudgingItem).where(JudgingItem.task_id == task_id, JudgingItem.id.not_in(mine))
    remaining = s.execute(select(func.count()).select_from(open_items.subquery())).scalar_one()
    if not remaining:
        return None, 0
    ahead = s.scalars(open_items.where(JudgingItem.position > after).order_by(JudgingItem.position).limit(1)).first()
    item = ahead or s.scalars(open_items.order_by(JudgingItem.position).limit(1)).first()
    return item, int(remaining)


def item_texts(s: Session, task_id: int, query_ids: Iterable[str],
               doc_ids: Iterable[str]) -> tuple[dict[str, str], dict[str, tuple[str, int]]]:
    """``({query_id: text}, {doc_id: (text, original length)})`` of the given ids."""
    qids, dids = list(set(query_ids)), list(set(doc_ids))
    queries = dict(s.execute(select(JudgingQuery.query_id, JudgingQuery.text).where(
        JudgingQuery.task_id == task_id, JudgingQuery.query_id.in_(qids))).all()) if qids else {}
    docs = {d: (t, n) for d, t, n in s.execute(select(JudgingDoc.doc_id, JudgingDoc.text, JudgingDoc.length).where(
        JudgingDoc.task_id == task_id, JudgingDoc.doc_id.in_(dids))).all()} if dids else {}
    return queries, docs


def testset_texts(s: Session, test_set_id: int, query_ids: Iterable[str],
                  doc_ids: Iterable[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Query and document texts of a stored test set (those it has, non-empty)."""
    out_q: dict[str, str] = {}
    out_d: dict[str, str] = {}
    qids, dids = sorted(set(query_ids)), sorted(set(doc_ids))
    for i in range(0, len(qids), 2000):
        out_q.update((q, t) for q, t in s.execute(select(Query.query_id, Query.text).where(
            Query.test_set_id == test_set_id, Query.query_id.in_(qids[i:i + 2000]))).all() if t)
    for i in range(0, len(dids), 2000):
        out_d.update((d, t) for d, t in s.execute(select(Document.doc_id, Document.text).where(
            Document.test_set_id == test_set_id, Document.doc_id.in_(dids[i:i + 2000]))).all() if t)
    return out_q, out_d


def save_judgment(db: Database, task_id: int, item_id: int, annotator: str, grade: int | None,
                  note: str) -> Judgment:
    """Store (or replace) ``annotator``'s judgment of an item; ``grade`` None records a skip.  It is not blind
    when the service has shown ``annotator`` the item's pre-label (:func:`was_shown`)."""
    now = utcnow()
    with db.write() as s:
        get_item(s, task_id, item_id, "item_id")
        prelabel_shown = was_shown(s, item_id, annotator)
        stmt = db.insert(Judgment).values(task_id=task_id, item_id=item_id, annotator=annotator, grade=grade,
                                          note=note, prelabel_shown=prelabel_shown, created_at=now, updated_at=now)
        stmt = stmt.on_conflict_do_update(
            index_elements=[Judgment.item_id, Judgment.annotator],
            set_={"grade": stmt.excluded.grade, "note": stmt.excluded.note, "updated_at": stmt.excluded.updated_at,
                  "prelabel_shown": or_(Judgment.prelabel_shown, stmt.excluded.prelabel_shown)})
        s.execute(stmt)
    with db.read() as s:
        found = get_judgment(s, item_id, annotator)
    assert found is not None
    return found


def get_judgment(s: Session, item_id: int, annotator: str) -> Judgment | None:
    return s.scalars(select(Judgment).where(Judgment.item_id == item_id, Judgment.annotator == annotator)).first()


def item_judgments(s: Session, item_id: int) -> list[Judgment]:
    """Every annotator's judgment of one item."""
    return list(s.scalars(select(Judgment).where(Judgment.item_id == item_id).order_by(Judgment.annotator)))


def task_judgments(s: Session, task_id: int, annotator: str | None = None) -> list[tuple[JudgingItem, Judgment]]:
    """``(item, judgment)`` of every judgment of the task (of one annotator), by item position then annotator."""
    q = select(JudgingItem, Judgment).join(Judgment, Judgment.item_id == JudgingItem.id).where(
        Judgment.task_id == task_id)
    if annotator is not None:
        q = q.where(Judgment.annotator == annotator)
    return [(i, j) for i, j in s.execute(q.order_by(JudgingItem.position, Judgment.annotator)).all()]


def annotator_counts(s: Session, task_id: int) -> dict[str, dict[str, int]]:
    """``{annotator: {"judged", "skipped", "prelabel_shown"}}`` (``prelabel_shown`` among the judged)."""
    rows = s.execute(select(Judgment.annotator, Judgment.grade.is_(None), Judgment.prelabel_shown, func.count())
                     .where(Judgment.task_id == task_id)
                     .group_by(Judgment.annotator, Judgment.grade.is_(None), Judgment.prelabel_shown)).all()
    out: dict[str, dict[str, int]] = {}
    for who, skipped, shown, n in rows:
        c = out.setdefault(who, {"judged": 0, "skipped": 0, "prelabel_shown": 0})
        if skipped:
            c["skipped"] += n
        else:
            c["judged"] += n
            c["prelabel_shown"] += n if shown else 0
    return dict(sorted(out.items()))


def query_counts(s: Session, task_id: int) -> list[tuple[str, str, int, dict[str, dict[str, int]]]]:
    """Per query in task order: ``(query_id, text, items, {annotator: {"judged", "skipped"}})``."""
    items = dict(s.execute(select(JudgingItem.query_id, func.count()).where(JudgingItem.task_id == task_id)
                           .group_by(JudgingItem.query_id)).all())
    done: dict[str, dict[str, dict[str, int]]] = {}
    for qid, who, skipped, n in s.execute(
            select(JudgingItem.query_id, Judgment.annotator, Judgment.grade.is_(None), func.count())
            .join(Judgment, Judgment.item_id == JudgingItem.id).where(Judgment.task_id == task_id)
            .group_by(JudgingItem.query_id, Judgment.annotator, Judgment.grade.is_(None))).all():
        c = done.setdefault(qid, {}).setdefault(who, {"judged": 0, "skipped": 0})
        c["skipped" if skipped else "judged"] += n
    order = s.execute(select(JudgingQuery.query_id, JudgingQuery.text).where(JudgingQuery.task_id == task_id)
                      .order_by(JudgingQuery.position)).all()
    return [(q, t, int(items.get(q, 0)), done.get(q, {})) for q, t in order if q in items]



class AnnotatorExists(InvalidParameterError):
    """An annotator of that name is already invited to the task (HTTP 409)."""


def hash_token(token: str) -> str:
    """The stored form of an invitation token: its SHA-256 (hex).  Tokens are 192 random bits: a fast hash is
    enough, there is nothing to guess from it.

    >>> len(hash_token("x")), hash_token("x") == hash_token("x")
    (64, True)
    """
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


def create_annotator(db: Database, task_id: int, name: str, blind: bool) -> tuple[Annotator, str]:
    """Invite ``name`` to judge the task; returns the annotator and the token (shown once, stored hashed)."""
    token = secrets.token_urlsafe(24)
    with db.write() as s:
        get_task(s, task_id)
        if s.scalars(select(Annotator.id).where(Annotator.task_id == task_id, Annotator.name == name)).first():
            raise AnnotatorExists(_("{annotator!r} is already invited to judging task {task}", annotator=name,
                                    task=task_id))
        who = Annotator(task_id=task_id, name=name, token_hash=hash_token(token), blind=blind, created_at=utcnow())
        s.add(who)
        s.flush()
        s.expunge(who)
    return who, token


def find_annotator(s: Session, task_id: int, token: str) -> Annotator | None:
    """The annotator of the task whose invitation token this is, or None."""
    return s.scalars(select(Annotator).where(Annotator.task_id == task_id,
                                             Annotator.token_hash == hash_token(token))).first()


def list_annotators(s: Session, task_id: int) -> list[Annotator]:
    return list(s.scalars(select(Annotator).where(Annotator.task_id == task_id).order_by(Annotator.id)))


def record_views(db: Database, task_id: int, item_ids: Iterable[int], annotator: str | None, via: str) -> None:
    """Record that the service showed the pre-labels of ``item_ids`` to ``annotator`` (None: an administrator)."""
    now = utcnow()
    rows = [{"task_id": task_id, "item_id": i, "annotator": annotator, "via": via, "at": now} for i in item_ids]
    if rows:
        with db.write() as s:
            s.execute(db.insert(PrelabelView), rows)


def was_shown(s: Session, item_id: int, annotator: str) -> bool:
    """Whether the service has shown ``annotator`` the pre-label of the item."""
    return s.scalars(select(PrelabelView.id).where(PrelabelView.item_id == item_id,
                                                   PrelabelView.annotator == annotator).limit(1)).first() is not None
