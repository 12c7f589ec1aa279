"""Alembic environment: migrate the connection handed over by :func:`rankscope.service.migrations.upgrade`."""

from __future__ import annotations

from alembic import context

from rankscope.service.db.models import Base

connection = context.config.attributes["connection"]
context.configure(
    connection=connection, target_metadata=Base.metadata, render_as_batch=connection.dialect.name == "sqlite"
)
with context.begin_transaction():
    context.run_migrations()
