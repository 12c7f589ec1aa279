"""A run of a TREC archive (``input.aplrob03a.gz``) is known by its run tag, not as "input"."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from clirun import cli


def test_archive_runs_are_named_by_what_follows_input(tmp_path: Path) -> None:
    (tmp_path / "qrels.txt").write_text("601 0 d1 1\n602 0 d2 1\n")
    for tag, docs in (("aplrob03a", ("d1", "d2")), ("pircRB03t3", ("d2", "d1"))):
        with gzip.open(tmp_path / f"input.{tag}.gz", "wt") as fh:
            fh.write(f"601 Q0 {docs[0]} 1 2.0 {tag}\n602 Q0 {docs[1]} 1 1.0 {tag}\n")
    one = cli("evaluate", tmp_path / "qrels.txt", tmp_path / "input.aplrob03a.gz", "-m", "mrr", "--format", "json",
              "--report", tmp_path / "r.md", width=200)
    assert one.returncode == 0, one.stderr
    assert json.loads(one.stdout)["run"] == "aplrob03a"
    assert "aplrob03a" in (tmp_path / "r.md").read_text() and "report: input" not in (tmp_path / "r.md").read_text()
    both = cli("compare", tmp_path / "input.aplrob03a.gz", tmp_path / "input.pircRB03t3.gz", "--qrels",
               tmp_path / "qrels.txt", "-m", "mrr", "--format", "json", width=200)
    assert both.returncode == 0, both.stderr
    assert json.loads(both.stdout)["systems"] == ["aplrob03a", "pircRB03t3"]
