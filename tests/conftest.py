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
