"""The gate counts its requirements in words: "1 requirement holds", not "1 requirement(s)"."""

from __future__ import annotations

from pathlib import Path

from clirun import cli


def test_one_requirement_in_the_singular(tmp_path: Path) -> None:
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "run.trec").write_text("q1 Q0 a 1 2.0 t\nq2 Q0 x 1 2.0 t\nq2 Q0 b 2 1.0 t\n")
    ok = cli("check", "--qrels", tmp_path / "qrels.txt", "--run", tmp_path / "run.trec", "--require", "mrr>=0.5",
             width=200)
    assert ok.returncode == 0 and "gate passed: 1 requirement holds" in ok.stdout, ok.stdout
    bad = cli("check", "--qrels", tmp_path / "qrels.txt", "--run", tmp_path / "run.trec", "--require", "mrr>=0.99",
              "--require", "P@1>=0.99", width=200)
    assert "gate FAILED: 2 of 2 requirements not met" in bad.stdout + bad.stderr
    assert "(s)" not in ok.stdout + bad.stdout
