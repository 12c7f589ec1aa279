"""judged@10, the unjudged-document warnings, model labels and condensed lists in every output: the CLI
(evaluate table / JSON / CSV, compare terminal / JSON and its Markdown, HTML, LaTeX, JSON reports, check),
the one-run report and the gate, in English and Chinese."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clirun import cli, outcome
from rankscope import Qrels, Run, display, evaluate
from rankscope.gate import check
from rankscope.io import write_trec_qrels, write_trec_run
from rankscope.labels.provenance import Label, Labels
from rankscope.report.run_render import render_run_report
from rankscope.report.run_report import build_run_report

# pooled qrels: the old systems' top documents judged, most of them non-relevant
POOL = {f"q{i}": {f"a{i}": 2, **{f"p{i}_{j}": 0 for j in range(12)}} for i in range(6)}
OLD = {q: [f"a{q[1:]}", *[f"p{q[1:]}_{j}" for j in range(9)]] for q in POOL}  # fully judged top 10
NEW = {q: [f"n{j}" for j in range(7)] + [f"a{q[1:]}", "x", "y"] for q in POOL}  # 1 judged in its top 10


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    write_trec_qrels(Qrels.from_dict(POOL), tmp_path / "qrels.txt")
    write_trec_run(Run.from_ranked_lists(OLD, name="old"), tmp_path / "old.trec")
    write_trec_run(Run.from_ranked_lists(NEW, name="new"), tmp_path / "new.trec")
    chunks = {q: [f"{d}#0" for d in docs] for q, docs in OLD.items()}
    write_trec_run(Run.from_ranked_lists(chunks, name="chunks"), tmp_path / "chunks.trec")
    return {"qrels": tmp_path / "qrels.txt", "old": tmp_path / "old.trec", "new": tmp_path / "new.trec",
            "chunks": tmp_path / "chunks.trec", "dir": tmp_path}


def _flat(text: str) -> str:
    """``text`` with every run of whitespace made one space: prose wrapped to the terminal's width, whole again."""
    return " ".join(text.split())


def _run(*args: str | Path) -> tuple[int, str, str]:
    """``rankscope ARGS`` at 80 columns: (exit code, stdout, stderr)."""
    return outcome(cli(*args, width=80))


JUDGED_LINE = "Judged share of each run's top 10"


def test_evaluate_prints_judged_at_10_and_the_warning_in_every_format(files: dict[str, Path]) -> None:
    code, out, err = _run("evaluate", "--qrels", files["qrels"], "--run", files["new"], "-m", "ndcg@10")
    assert code == 0 and err == ""
    assert f"{JUDGED_LINE} (judged@10; unjudged documents count as non-relevant): new 0.100." in _flat(out)
    assert "warning: new: only 10.0% of its top-10 documents are judged" in _flat(out)
    code, out, err = _run("evaluate", "--qrels", files["qrels"], "--run", files["new"], "-m", "ndcg@10",
                          "-f", "json")
    data = json.loads(out)
    assert data["judged"]["judged@10"] == pytest.approx(0.1) and data["warnings"][0]["kind"] == "mostly_unjudged"
    assert "only 10.0%" in err and JUDGED_LINE not in err  # the warning repeated on stderr, the rest is in the JSON
    code, out, err = _run("evaluate", "--qrels", files["qrels"], "--run", files["new"], "-m", "ndcg@10",
                          "-f", "csv")
    assert out.startswith("query_id,ndcg@10") and JUDGED_LINE in err and "only 10.0%" in err
    code, out, _ = _run("evaluate", "--qrels", files["qrels"], "--run", files["old"], "-m", "ndcg@10")
    assert f"{JUDGED_LINE} (judged@10; unjudged documents count as non-relevant): old 1.000." in _flat(out)
    assert "warning" not in out


def test_evaluate_names_chunk_ids_against_document_qrels(files: dict[str, Path]) -> None:
    code, out, _ = _run("evaluate", "--qrels", files["qrels"], "--run", files["chunks"], "-m", "ndcg@10")
    assert code == 0
    assert "none of the documents it retrieved is judged" in out and "chunk ids" in out
    assert "the run has 'a0#0', the qrels judge 'a0'" in out


def test_evaluate_refuses_an_empty_run_or_one_without_a_common_query(files: dict[str, Path]) -> None:
    (files["dir"] / "other.trec").write_text("Q1 Q0 a0 1 1.0 t\n")
    code, out, err = _run("evaluate", "--qrels", files["qrels"], "--run", files["dir"] / "other.trec")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "no query in common" in err and "hint: check that the run answers the topics" in err
    (files["dir"] / "empty.json").write_text("{}")  # the reader already refuses a file without entries
    code, out, err = _run("evaluate", "--qrels", files["qrels"], "--run", files["dir"] / "empty.json")
    assert code == 2 and out == "" and err.count("\n") == 1 and "no entries" in err


def test_evaluate_condensed_lists_say_so(files: dict[str, Path]) -> None:
    code, out, _ = _run("evaluate", "--qrels", files["qrels"], "--run", files["new"], "-m", "ndcg@10",
                        "--unjudged", "condense", "-f", "json")
    data = json.loads(out)
    assert data["policies"]["unjudged"] == "condense" and data["mean"]["ndcg@10"] == 1.0
    assert "condensed" in [w["kind"] for w in data["warnings"]]
    code, _, err = _run("evaluate", "--qrels", files["qrels"], "--run", files["new"], "--unjudged", "drop")
    assert code == 2 and "'drop' is not one of" in " ".join(err.split())


def test_evaluate_reads_the_provenance_sidecar(files: dict[str, Path]) -> None:
    labels = Labels.from_records([Label(q, d, g, "model" if d.startswith("p") else "human",
                                        None if d.startswith("a") else "qwen", None if d.startswith("a") else "p1")
                                  for q, docs in POOL.items() for d, g in docs.items()])
    path = files["dir"] / "judged.qrels"
    side = labels.write(path)
    code, out, _ = _run("evaluate", "--qrels", path, "--run", files["old"], "-m", "ndcg@10")
    nospace = "".join(out.split())  # the long temporary path is cut at the terminal's width
    assert code == 0 and "".join(f"labels with provenance from {side}: 6 human, 72 model".split()) in nospace
    assert "old 1.000 (model@10 0.900)" in _flat(out)
    assert "old: 90.0% of its top-10 documents are judged by a model" in _flat(out)
    elsewhere = files["dir"] / "elsewhere.jsonl"
    side.rename(elsewhere)
    code, out, _ = _run("evaluate", "--qrels", path, "--run", files["old"], "-m", "ndcg@10")
    assert "model" not in out  # no sidecar beside the qrels: human labels
    code, out, _ = _run("evaluate", "--qrels", path, "--run", files["old"], "-m", "ndcg@10",
                        "--provenance", elsewhere, "-f", "json")
    assert json.loads(out)["judged"]["model@10"] == 0.9
    code, _, err = _run("evaluate", "--qrels", path, "--run", files["old"], "--provenance",
                        files["dir"] / "nope.jsonl")
    assert code == 2 and "nope.jsonl: no such provenance file" in err


def test_compare_outputs_and_reports_carry_judged_at_10(files: dict[str, Path]) -> None:
    d = files["dir"]
    reports = [d / "r.md", d / "r.html", d / "r.tex", d / "r.json"]
    code, out, _ = _run("compare", files["old"], files["new"], "--qrels", files["qrels"], "-m", "ndcg@10",
                        *[x for r in reports for x in ("--report", r)])
    assert code == 0
    flat = " ".join(out.split())  # the terminal wraps
    assert "judged@10" in flat and "old 1.000, new 0.100" in flat and "only 10.0% of its top-10" in flat
    for r in reports:  # the JSON report holds the numbers (below), the others print the line
        text = " ".join(r.read_text(encoding="utf-8").split())
        assert r.suffix == ".json" or "old 1.000, new 0.100" in text, r
        assert "only 10.0% of its top-10" in text.replace("\\%", "%"), r
    data = json.loads(reports[-1].read_text(encoding="utf-8"))
    assert data["judged"]["new"]["judged@10"] == pytest.approx(0.1)
    code, out, _ = _run("compare", files["old"], files["new"], "--qrels", files["qrels"], "-m", "ndcg@10",
                        "-f", "json", "--unjudged", "condense")
    data = json.loads(out)
    assert data["policies"]["unjudged"] == "condense" and data["means"]["new"]["ndcg@10"] == 1.0
    assert [w["kind"] for w in data["warnings"]] == ["mostly_unjudged", "condensed"]
    zh = d / "zh.md"
    _run("compare", files["old"], files["new"], "--qrels", files["qrels"], "-m", "ndcg@10", "--lang", "zh",
         "--unjudged", "condense", "--report", zh)
    text = zh.read_text(encoding="utf-8")
    assert "前 10 篇文档中只有 10.0% 已评判" in text and "压缩列表" in text
    assert "各结果前 10 篇文档中已评判的比例" in text


def test_check_states_judged_at_10_and_condense(files: dict[str, Path]) -> None:
    code, out, _ = _run("check", "--qrels", files["qrels"], "--run", files["new"], "--require", "ndcg@10>=0.1",
                        "--unjudged", "condense", "--json", files["dir"] / "g.json")
    assert code == 0
    assert any(ln.startswith("WARNING  new: only 10.0%") for ln in out.splitlines())
    assert any(ln.startswith("WARNING  Condensed lists") for ln in out.splitlines())
    assert out.splitlines()[-2].endswith("new 0.100.")
    g = json.loads((files["dir"] / "g.json").read_text())
    assert g["judged"]["new"]["judged@10"] == pytest.approx(0.1)


def test_the_gate_api_and_its_markdown() -> None:
    qrels = Qrels.from_dict(POOL)
    g = check(qrels, Run.from_ranked_lists(NEW, name="new"), ["ndcg@10>=0.1"],
              baseline=Run.from_ranked_lists(OLD, name="old"), max_drops=["ndcg@10=0.9"])
    assert [w.kind for w in g.warnings] == ["mostly_unjudged"] and g.judged["old"]["judged@10"] == 1.0
    md = g.to_markdown()
    assert "new 0.100, old 1.000" in md and "only 10.0% of its top-10" in md


@pytest.mark.parametrize("fmt", ["markdown", "html", "json"])
def test_the_one_run_report_states_judged_at_10_and_the_warnings(fmt: str) -> None:
    res = evaluate(Qrels.from_dict(POOL), Run.from_ranked_lists(NEW, name="new"), ["ndcg@10"], unjudged="condense")
    for lang, needles in (("en", ["new 0.100", "only 10.0% of its top-10", "Unjudged documents removed"]),
                          ("zh", ["new 0.100", "只有 10.0% 已评判", "排序前已去除未评判文档"])):
        text = render_run_report(build_run_report(res, lang=lang), fmt)
        if fmt == "json":  # the JSON holds the numbers and the policy, not the lines
            data = json.loads(text)
            assert data["judged"]["new"]["judged@10"] == pytest.approx(0.1)
            assert data["policies"]["unjudged"] == "condense"
            text = json.dumps(data, ensure_ascii=False)
            needles = needles[1:2]
        for needle in needles:
            assert needle in text, (lang, fmt, needle)


def test_the_notebook_display_of_a_result_says_judged_at_10_and_its_warnings() -> None:
    from rankscope import Qrels, Run, evaluate

    qrels = Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d2": 1}})
    res = evaluate(qrels, Run.from_ranked_lists({"q1": ["d1#0"], "q2": ["d2#0"]}), ["P@1"])
    html = display.html(res)
    assert "judged@10" in html and "d1#0" in html  # nothing judged: the cause and an id of each side
    cond = evaluate(qrels, Run.from_ranked_lists({"q1": ["x", "d1"], "q2": ["d2"]}), ["P@1"], unjudged="condense")
    assert "unjudged=condense" in display.html(cond)
