"""Shared fixtures: the real evaluation data in ../shared/data (relative to the repo root)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = (REPO / ".." / "shared" / "data").resolve()
TREC_TESTS = DATA / "trec_eval_tests"
TREC_TESTS_908 = TREC_TESTS / "v9.0.8"


def require(path: Path) -> Path:
    """Return ``path``; fail (not skip) when the shared data is missing."""
    if not path.exists():
        pytest.fail(f"test data missing: {path} (the tests need ../shared/data beside the repo)")
    return path


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return require(DATA)


@pytest.fixture(scope="session")
def trec908() -> Path:
    return require(TREC_TESTS_908)


@pytest.fixture(autouse=True)
def _english_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests see English prose whatever the machine's locale: the language default (``RANKSCOPE_LANG``, else a
    ``zh_*`` locale) is cleared; a test that checks the default sets these itself."""
    for var in ("RANKSCOPE_LANG", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
