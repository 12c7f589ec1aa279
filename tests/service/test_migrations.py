"""The service's Alembic migrations: one chain with one head, applied from an empty database or from an older one."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import inspect


def test_the_migrations_form_one_chain_with_one_head() -> None:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from rankscope.service.migrations import HERE

    cfg = Config()
    cfg.set_main_option("script_location", str(HERE))
    script = ScriptDirectory.from_config(cfg)
    assert len(script.get_heads()) == 1, script.get_heads()
    chain = [r.revision for r in script.walk_revisions()]  # from the head down
    assert chain == sorted(chain, reverse=True) and len(set(chain)) == len(chain)
    files = sorted(p.name.split("_", 1)[0] for p in (HERE / "versions").glob("0*.py"))
    assert files == sorted(chain), "a file's number is its revision id"


def test_an_empty_and_an_older_database_reach_the_same_tables(tmp_path: Path) -> None:
    from rankscope.service.db import Base, Database
    from rankscope.service.migrations import upgrade

    tables = {}
    for name, start in (("empty", None), ("old", "0005")):
        db = Database(f"sqlite:///{tmp_path / f'{name}.sqlite3'}")
        if start:
            upgrade(db, start)
        upgrade(db)
        upgrade(db)  # a second start is a no-op
        tables[name] = set(inspect(db.engine).get_table_names()) - {"alembic_version"}
    assert tables["empty"] == tables["old"] == set(Base.metadata.tables)
