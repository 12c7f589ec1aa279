"""People judging a pool in the dashboard: a task from uploads (:mod:`.ingest`), and what the judgments add
up to — agreement between annotators and labels to export (:mod:`.results`).  The rows live in
:mod:`rankscope.service.store.judging`; the API in :mod:`rankscope.service.api.judging`, the pages in
:mod:`rankscope.service.web.judging`."""

from __future__ import annotations
