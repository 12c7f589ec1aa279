"""Who is judging: an annotator the service knows by their invitation token, or the task's administrator.

The administrator (anyone who passes the service's own token check; everyone when the service runs
without ``--token``) creates a task and invites annotators by name
(``POST /api/v1/judging/{task}/annotators``, or the task page): each invitation is a random token,
shown once in an invitation link and stored only as its SHA-256.  An annotator proves who they are
with it: the ``X-Annotator-Token`` header in the API, a cookie set by the invitation link
(``/judging/{task}/join?token=…``) in the dashboard.

* Judgments are saved only under an annotator's identity, with the name the service knows: nobody
  can judge, or overwrite a grade, under another annotator's name.
* A request that carries an annotator's token sees only that annotator's judgments and notes.
* With ``--token``, an annotator's token opens only the judging routes of their task
  (:data:`ANNOTATOR_ROUTES`): the judging page and, in the API, ``next``, ``items`` and
  ``judgments``; everything else still needs the service's token.
* A pre-label is served only when the service records that it showed it (:class:`PrelabelView`): on
  the judging page when the annotator asks for it, in the API with ``items?prelabels=true``; a
  *blind* annotator (the default) is never shown one.  The judgments saved after that are not blind,
  in the agreement and in the export.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fastapi import Request

from rankscope.i18n import _
from rankscope.service import store
from rankscope.service.db import Annotator, Database

__all__ = ["ANNOTATOR_HEADER", "ANNOTATOR_ROUTES", "Identity", "identify", "judge_cookie", "annotator_token",
           "require_annotator"]

ANNOTATOR_HEADER = "X-Annotator-Token"
ANNOTATOR_ROUTES = re.compile(r"^/(?:api/v1/judging/(\d+)/(?:next|items|judgments)|judging/(\d+)/(?:judge|judge/"
                              r"reveal|join))$")
"""The paths an annotator's token opens when the service runs with ``--token`` (the task id is in the path)."""


def judge_cookie(task_id: int | str) -> str:
    """The dashboard cookie that holds an annotator's invitation token for one task."""
    return f"rankscope_judge_{task_id}"


def annotator_token(headers: dict[str, str] | object, cookies: dict[str, str], task_id: int | str) -> str | None:
    """The annotator's token a request carries for the task: the header, else the task's cookie."""
    get = getattr(headers, "get", None)
    value = get(ANNOTATOR_HEADER.lower()) if callable(get) else None
    return str(value) if value else cookies.get(judge_cookie(task_id)) or None


@dataclass(frozen=True)
class Identity:
    """An annotator (``annotator`` set: name and whether blind) or the administrator (``annotator`` None)."""

    annotator: Annotator | None

    @property
    def name(self) -> str | None:
        return self.annotator.name if self.annotator is not None else None

    @property
    def blind(self) -> bool:
        return bool(self.annotator.blind) if self.annotator is not None else False


def identify(request: Request, db: Database, task_id: int) -> Identity:
    """Who sends ``request`` for the task: the annotator whose token it carries (401 for a token the task does
    not know), else the administrator."""
    from rankscope.service.problems import FieldError

    token = annotator_token(request.headers, dict(request.cookies), task_id)
    if token is None:
        return Identity(None)
    with db.read() as s:
        store.get_task(s, task_id)
        who = store.find_annotator(s, task_id, token)
    if who is None:
        raise FieldError(ANNOTATOR_HEADER, _("not an invitation token of judging task {task} (ask the task's "
                                             "administrator for a new invitation link)", task=task_id),
                                           status=401)
    return Identity(who)


def require_annotator(identity: Identity, task_id: int) -> Annotator:
    """The annotator, or 401 saying how judging works (an administrator does not judge under a name)."""
    from rankscope.service.problems import FieldError

    if identity.annotator is None:
        raise FieldError(ANNOTATOR_HEADER, _("judging needs an annotator's invitation token: invite annotators "
                                             "(POST /api/v1/judging/{task}/annotators) and send their token as "
                                             "{header}", task=task_id, header=ANNOTATOR_HEADER),
                                           status=401)
    return identity.annotator
