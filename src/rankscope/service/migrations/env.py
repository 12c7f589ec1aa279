"""Alembic environment: migrate the connection handed over by :func:`rankscope.service.migrations.upgrade`."""

from __future__ import annotations

from typing import Any

from alembic import context

from rankscope.service.db.models import Base


def run_migrations(connection: Any) -> None:
    context.configure(
        connection=connection, target_metadata=Base.metadata, render_as_batch=connection.dialect.name == "sqlite"
    )
    with context.begin_transaction():
        context.run_migrations()


_config: Any
try:
    _config = context.config
except (AttributeError, NameError):  # imported outside an Alembic command (e.g. by doctest collection)
    _config = None
if _config is not None:
    run_migrations(_config.attributes["connection"])
