"""Chinese as a first language on the command line (issue 17 §5).

Every command that prints prose takes ``--lang zh|en``; the default comes from ``RANKSCOPE_LANG``, else a
``zh_*`` locale, else English (:func:`rankscope.choices.resolve_lang`).  In Chinese, sentences use full-width
punctuation (no ASCII ``:`` or ``,`` right after a Chinese character) and lines fit the terminal measured in
display cells; ``rankscope trec_eval`` prints the same bytes whatever the language.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from rich.cells import cell_len

from clirun import cli
from prose import unwrap
from rankscope.choices import TERMS, resolve_lang, term
from rankscope.i18n import gettext
from rankscope.report.wrap import wrap_cells

WIDTH = 60
CJK = re.compile(r"[\u4e00-\u9fff]")
#: an ASCII colon, comma, semicolon or parenthesis right after a Chinese character (mixed punctuation)
MIXED = re.compile(r"[\u4e00-\u9fff][:,;()]")
SRC = Path(__file__).resolve().parents[2] / "src"


def _cli(*args: str | Path, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return cli(*args, env=env, cwd=cwd, width=WIDTH)


def _flat(text: str) -> str:
    """``text`` with its line breaks (and the indentation after them) read as a reader reads them: wrapped sentences
    whole again (:func:`prose.unwrap`)."""
    return unwrap(text)


def _typography(text: str) -> None:
    """Chinese output: no mixed punctuation, every line within the terminal width in cells."""
    for line in text.splitlines():
        assert not MIXED.search(line), line
        assert cell_len(line) <= WIDTH, (cell_len(line), line)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("zh")
    qids = [f"q{i}" for i in range(12)]
    (d / "qrels.txt").write_text("".join(f"{q} 0 d{q}a 1\n{q} 0 d{q}b 1\n" for q in qids))
    # bm25 finds the first relevant document at rank 1 or 3, dense at rank 2 or 4
    (d / "bm25.trec").write_text("".join(
        f"{q} Q0 {doc} {r + 1} {10 - r} bm25\n"
        for i, q in enumerate(qids)
        for r, doc in enumerate([f"d{q}a", "x1", "x2", f"d{q}b"] if i % 2 else ["x1", "x2", f"d{q}a", "x3"])))
    (d / "dense.trec").write_text("".join(
        f"{q} Q0 {doc} {r + 1} {10 - r} dense\n"
        for i, q in enumerate(qids)
        for r, doc in enumerate(["x1", f"d{q}a", "x2", f"d{q}b"] if i % 2 else ["x1", "x2", "x3", f"d{q}a"])))
    (d / "ts.jsonl").write_text("".join(json.dumps({"id": q, "query": f"问题 {q}", "relevant_doc_ids": [f"d{q}a"]},
                                                   ensure_ascii=False) + "\n" for q in qids))
    return {"dir": d, "qrels": d / "qrels.txt", "bm25": d / "bm25.trec", "dense": d / "dense.trec",
            "ts": d / "ts.jsonl"}


def test_the_language_is_decided_in_one_place(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_lang() == "en"
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert resolve_lang() == "zh"
    monkeypatch.setenv("LC_ALL", "en_US.UTF-8")  # LC_ALL wins over LANG, as gettext reads them
    assert resolve_lang() == "en"
    monkeypatch.setenv("RANKSCOPE_LANG", "zh")  # RANKSCOPE_LANG wins over the locale
    assert resolve_lang() == "zh"
    assert resolve_lang("en") == "en"  # an explicit --lang / lang= wins over everything
    from rankscope.report.notebook import notebook_lang

    assert notebook_lang() == "zh"
    monkeypatch.setenv("RANKSCOPE_LANG", "fr")
    from rankscope.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="RANKSCOPE_LANG"):
        resolve_lang()


def test_the_term_table_names_values_in_chinese_with_their_english_name() -> None:
    from rankscope.choices import CORRECTIONS, MISSING_POLICIES, TESTS

    for value in (*TESTS, *CORRECTIONS):
        assert f"（{value}）" in term(value, "zh") and term(value, "en") == value
    for value in MISSING_POLICIES:
        assert term(value, "zh", "missing").endswith(f"（missing={value}）")
    for key in TERMS:
        text = gettext(key, "zh", context="term")
        assert CJK.search(text) and not MIXED.search(text), key


def test_the_summary_line_counts_one_query_in_the_singular(tmp_path: Path) -> None:
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 2.0 a\nq3 Q0 d1 1 2.0 a\n")
    en = _cli("evaluate", tmp_path / "qrels.txt", tmp_path / "run.trec", "-m", "mrr", "--missing", "ignore")
    assert en.returncode == 0, en.stderr
    assert ("1 query evaluated (missing=ignore); 1 qrels query missing from the run; 1 run query not in the qrels"
            in _flat(en.stdout)), en.stdout
    zh = _cli("evaluate", tmp_path / "qrels.txt", tmp_path / "run.trec", "-m", "mrr", "--missing", "ignore", "--lang",
              "zh")
    said = re.sub(r"\s", "", zh.stdout)  # wrapped at the spaces between Chinese and numbers
    assert "共评估1个查询，" in said and "qrels中有1个查询不在结果中；结果中有1个查询不在qrels中" in said, zh.stdout


def test_evaluate_in_chinese_and_english(files: dict[str, Path]) -> None:
    zh = _cli("evaluate", files["qrels"], files["bm25"], "--lang", "zh")
    assert zh.returncode == 0, zh.stderr
    assert "指标" in zh.stdout and "评级" in zh.stdout and "建议" in zh.stdout
    assert "缺失查询计零（missing=zero）" in _flat(zh.stdout)
    _typography(zh.stdout)
    en = _cli("evaluate", files["qrels"], files["bm25"])
    assert "queries evaluated (missing=zero)" in en.stdout and "rating" in en.stdout
    assert not CJK.search(en.stdout)


def test_the_language_default_follows_rankscope_lang_then_the_locale(files: dict[str, Path]) -> None:
    args = ("evaluate", files["qrels"], files["bm25"], "-m", "mrr")
    by_env = _cli(*args, env={"RANKSCOPE_LANG": "zh"}).stdout
    by_locale = _cli(*args, env={"LANG": "zh_CN.UTF-8"}).stdout
    explicit = _cli(*args, "--lang", "zh").stdout
    assert "共评估" in explicit and by_env == explicit == by_locale
    assert "共评估" not in _cli(*args, "--lang", "en", env={"LANG": "zh_CN.UTF-8"}).stdout


def test_compare_in_chinese(files: dict[str, Path]) -> None:
    zh = _cli("compare", files["bm25"], files["dense"], "--qrels", files["qrels"], "-m", "mrr", "--lang", "zh")
    assert zh.returncode == 0, zh.stderr
    flat = _flat(zh.stdout)
    assert "配对比较：" in flat and "配对 t 检验（t）" in flat and "Holm 校正（holm）" in flat
    assert "（基线）" in flat and "缺失查询计零（missing=zero）" in flat
    _typography(zh.stdout)
    en = _cli("compare", files["bm25"], files["dense"], "--qrels", files["qrels"], "-m", "mrr")
    assert "paired t test" in en.stdout and not CJK.search(en.stdout)


def test_check_gate_lines_in_chinese(files: dict[str, Path], tmp_path: Path) -> None:
    args = ["check", "--qrels", files["qrels"], "--run", files["dense"], "-r", "mrr>=0.9",
            "--baseline", files["bm25"], "--max-drop", "mrr=0.01", "--summary", tmp_path / "s.md"]
    zh = _cli(*args, "--lang", "zh")
    assert zh.returncode == 1, zh.stderr
    assert "未通过  mrr >= 0.9" in zh.stdout and "门禁未通过" in zh.stdout
    assert "下注法置信界（betting）" in _flat(zh.stdout)
    _typography(zh.stdout)
    md = (tmp_path / "s.md").read_text(encoding="utf-8")
    assert md.startswith("## rankscope 门禁未通过：") and "| | 要求 | 实测 | 详情 |" in md
    en = _cli(*args)
    assert "FAIL  mrr >= 0.9: " in en.stdout and "gate FAILED: 2 of 2 requirements not met" in en.stdout
    assert (tmp_path / "s.md").read_text(encoding="utf-8").startswith("## rankscope gate FAILED: ")


def test_testset_check_and_convert_in_chinese(files: dict[str, Path]) -> None:
    zh = _cli("testset", "check", files["ts"], "--lang", "zh")
    assert zh.returncode == 0, zh.stderr
    assert "测试集" in zh.stdout and "有标注的查询" in zh.stdout
    _typography(zh.stdout)
    assert "judged queries" in _cli("testset", "check", files["ts"]).stdout
    out = _cli("testset", "convert", files["ts"], files["dir"] / "ts.json", "--lang", "zh").stdout
    assert "12 个查询，12 条标注" in out


def test_power_in_chinese() -> None:
    zh = _cli("power", "--delta", "0.02", "--sd", "0.15", "--lang", "zh")
    assert zh.returncode == 0 and "所需查询数：444" in _flat(zh.stdout) and "双侧（two-sided）" in _flat(zh.stdout)
    _typography(zh.stdout)
    assert _cli("power", "--delta", "0.02", "--sd", "0.15").stdout.startswith("queries needed: 444 ")
    err = _cli("power", "--sd", "0.1", "--lang", "zh")
    assert err.returncode == 2 and err.stderr.startswith("rankscope：错误：必须给出 --delta")


@pytest.mark.parametrize("case", ["missing", "metric", "swapped", "empty", "no_common", "ambiguous"])
def test_first_hour_errors_in_chinese(files: dict[str, Path], case: str) -> None:
    d = files["dir"]
    (d / "empty.trec").write_text("")
    (d / "other.trec").write_text("z1 Q0 a 1 1.0 t\n")
    (d / "shuffled.tsv").write_text("q1\tda\t2\nq1\tdb\t1\nq1\tdc\t3\n")
    args, expect = {
        "missing": ((files["qrels"], d / "nope.trec"), "nope.trec：文件不存在"),
        "metric": ((files["qrels"], files["bm25"], "-m", "ndcg10"), "未知指标 'ndcg10'；是否想写：ndcg@10"),
        "swapped": ((files["bm25"], files["qrels"]), "位置颠倒了"),
        "empty": ((files["qrels"], d / "empty.trec"), "没有任何条目（空文件）"),
        "no_common": ((files["qrels"], d / "other.trec"), "没有共同的查询"),
        "ambiguous": ((files["qrels"], d / "shuffled.tsv"),
                      "2、1、3；请指明它是哪一种：--columns qid,docid,rank（或 qid,docid,score）"),
    }[case]
    res = _cli("evaluate", *args, "--lang", "zh")
    assert res.returncode == 2 and res.stderr.startswith("rankscope：错误：") and expect in res.stderr, res.stderr
    assert res.stderr.count("\n") == 1 and not MIXED.search(res.stderr)
    en = _cli("evaluate", *args)
    assert en.returncode == 2 and en.stderr.startswith("rankscope: error: ") and not CJK.search(en.stderr)


def test_unknown_key_error_in_chinese(tmp_path: Path) -> None:
    from rankscope.data.testset import TestSet
    from rankscope.errors import ParseError

    path = tmp_path / "t.jsonl"
    path.write_text('{"id": "q1", "query": "x", "relevant_doc_idz": ["d1"]}\n')
    with pytest.raises(ParseError) as info:
        TestSet.from_file(path, strict=True)
    assert "relevant_doc_ids" in info.value.text("zh") and "未知字段" in info.value.text("zh")
    assert info.value.text("en") == str(info.value)


def test_trec_eval_output_never_changes_with_the_language(files: dict[str, Path]) -> None:
    args = ("trec_eval", "-q", "-m", "all_trec", files["qrels"], files["bm25"])
    en = _cli(*args)
    assert en.returncode == 0 and en.stdout
    for env in ({"RANKSCOPE_LANG": "zh"}, {"LANG": "zh_CN.UTF-8"}, {"LC_ALL": "zh_CN.UTF-8"}):
        assert _cli(*args, env=env).stdout == en.stdout
    bad = ("trec_eval", files["qrels"], files["dir"] / "nope.trec")
    assert _cli(*bad, env={"RANKSCOPE_LANG": "zh"}).stderr == _cli(*bad).stderr


@pytest.mark.parametrize("width", [10, 17, 24, 40])
def test_wrapping_by_cells_never_splits_a_word(width: int) -> None:
    text = ("评级和生产标准将每个均值与完美排序在这些qrels上能达到的最佳值（可达上限）比较：查询的相关文档多于k个时"
            "Recall@k小于1，没有相关文档的查询在所有指标上都是0。")
    lines = wrap_cells(text, width)
    assert "".join(lines) == text
    for i, line in enumerate(lines):
        assert cell_len(line) <= width
        assert not line.startswith(("，", "。", "：", "）")) and not line.endswith("（")
        if i:
            assert not (lines[i - 1].endswith("评") and line.startswith("级"))
            assert not (lines[i - 1][-1:].isascii() and lines[i - 1][-1:].isalnum() and line[:1].isascii()
                        and line[:1].isalnum())  # a Latin word or number is never cut


def test_wrapping_counts_the_space_before_a_word() -> None:
    # a space before a word that ends just at the width once pushed the line over it, and the cut by cells then
    # started the next line with 、 (seen in `check --lang zh` at 200 columns)
    text = "请评判它的候选池（rankscope pool、rankscope judge），或用 unjudged=condense（压缩列表）进行比较。"
    for width in range(12, 60):
        lines = wrap_cells(text, width)
        assert "".join("".join(lines).split()) == "".join(text.split())
        for line in lines:
            assert cell_len(line) <= width
            assert not line.startswith(("，", "。", "、", "：", "）")), (width, lines)


def test_the_demo_legend_follows_its_table(capsys: pytest.CaptureFixture[str]) -> None:
    from rankscope import Qrels, Run
    from rankscope.cli.demo_cmd import METRICS, SYSTEMS, print_table
    from rankscope.comparison import compare

    qids = [f"q{i}" for i in range(6)]
    qrels = Qrels.from_dict({q: {f"{q}a": 1} for q in qids})
    runs = {s: Run.from_dict({q: {f"{q}a": 1.0 / (1 + (i + k) % 3), "x": 0.5} for i, q in enumerate(qids)},
                             name=s) for k, s in enumerate(SYSTEMS)}
    comparison = compare(qrels, runs, METRICS, baseline="bm25")
    summary = {"_comparison": comparison, "_notes": {s: [] for s in SYSTEMS}, "documents": 7, "queries": 6,
               "dense": {"model": "m"},
               "systems": {s: {"metrics": comparison.results[s].mean(), "latency_ms": {}, "warnings": []}
                           for s in SYSTEMS}}
    for lang, legend in (("en", "▲/▼: significantly better/worse than bm25"), ("zh", "▲/▼：显著优于/差于 bm25")):
        print_table("t", {"title": "T", "language": "en"}, summary, lang)
        lines = capsys.readouterr().out.splitlines()
        last_row = max(i for i, ln in enumerate(lines) if ln.startswith("hybrid"))
        assert lines[last_row + 1].startswith(legend)


def _zh_sentence(text: str) -> None:
    assert CJK.search(text) and not MIXED.search(text), text


def test_retriever_warnings_say_themselves_in_chinese() -> None:
    """Every warning of a retriever evaluation is keyed: Chinese in a zh session, the same English otherwise."""
    import warnings

    from rankscope.data.testset import Query, TestSet
    from rankscope.retrieval import Hit
    from rankscope.retrieval.evaluation import RetrieverWarning
    from rankscope.retrieval.runner import evaluate_retriever

    def search(query: str, k: int) -> list[Hit]:
        n = int(query.split()[-1])
        if n == 0:
            raise RuntimeError("boom")
        # few hits, repeated ids, increasing scores (distances), ids no judgment knows
        return [Hit(f"zz{n}", 1.0), Hit(f"zz{n}", 1.0), Hit(f"d{n}", 2.0)] if n == 1 else []

    ts = TestSet([Query(f"q{i}", f"question {i}") for i in range(8)], {f"q{i}": {f"d{i}": 1} for i in range(6)},
                 name="t")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ev = evaluate_retriever(search, ts, ["mrr", "ndcg@20"], k=10, retries=0, workers=1)
    codes = {w.code for w in ev.warnings}
    assert {"unscored", "failed", "empty", "duplicates", "scores_replaced", "cutoff"} <= codes, codes
    issued = [w.message for w in caught if issubclass(w.category, RetrieverWarning)]
    assert [str(w) for w in issued] == [n.message for n in ev.warnings]
    for notice, warning in zip(ev.warnings, issued):
        assert isinstance(warning, RetrieverWarning) and warning.text("zh") == notice.text("zh")
        _zh_sentence(notice.text("zh"))
        assert notice.text("en") == notice.message


def test_warnings_of_a_command_are_one_line_in_its_language(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"id": "q1", "query": "x", "relevant_doc_ids": ["d1"], "relevant_doc_idz": ["d2"]}\n')
    zh = _cli("testset", "convert", path, tmp_path / "t.json", "--lang", "zh")
    assert zh.returncode == 0, zh.stderr
    assert zh.stderr.startswith("rankscope：警告：") and "未知字段 'relevant_doc_idz'" in _flat(zh.stderr), zh.stderr
    assert "第 1 行" in zh.stderr and "Warning" not in zh.stderr and not MIXED.search(zh.stderr)
    _typography(zh.stderr)
    en = _cli("testset", "convert", path, tmp_path / "t.json")
    assert _flat(en.stderr).startswith("rankscope: warning: ") and "unknown key 'relevant_doc_idz'" in _flat(en.stderr)
    assert en.stderr.count("rankscope") == 1 and not CJK.search(en.stderr)  # one warning, wrapped to the terminal
    assert all(line.startswith("    ") for line in en.stderr.splitlines()[1:])


@pytest.mark.parametrize("case", ["option", "choice", "number", "missing", "command", "needs_value", "two_files"])
def test_usage_errors_in_chinese(files: dict[str, Path], case: str) -> None:
    """click's usage errors (typer parses with click) in the command's language: one line, the hint, exit 2."""
    args, expect, hint = {
        "option": (("evaluate", files["qrels"], files["bm25"], "--lng", "zh"), "没有选项 --lng（可能的选项：",
                   "rankscope evaluate --help"),
        "choice": (("evaluate", files["qrels"], files["bm25"], "-f", "xml"), "'xml' 不是 'table'、'json'、'csv' 之一",
                   "rankscope evaluate --help"),
        "number": (("power", "--delta", "abc"), "'--delta' 的值无效：'abc' 不是数字", "rankscope power --help"),
        "missing": (("testset", "convert"), "缺少参数 'source'", "rankscope testset convert --help"),
        "command": (("evaluat",), "没有命令 'evaluat'（是否想写：'evaluate'？）", "rankscope --help"),
        "needs_value": (("evaluate", files["qrels"], files["bm25"], "-m"), "选项 -m 需要一个值",
                        "rankscope evaluate --help"),
        "two_files": (("evaluate", files["qrels"]), "需要两个文件，实际给了 1 个", ""),
    }[case]
    zh = _cli(*args, env={"RANKSCOPE_LANG": "zh"})
    assert zh.returncode == 2, zh.stderr
    assert zh.stderr.startswith("rankscope：错误：") and expect in zh.stderr and hint in zh.stderr, zh.stderr
    assert zh.stderr.count("\n") == 1 and not MIXED.search(zh.stderr)
    en = _cli(*args)
    assert en.returncode == 2 and en.stderr.startswith("rankscope: error: ") and not CJK.search(en.stderr)
    if case == "option":
        assert "No such option: --lng (Possible options: " in en.stderr and "--lang" in en.stderr
        assert en.stderr.endswith(") (see 'rankscope evaluate --help')\n") and "、--lang" in zh.stderr
    if case not in ("command", "needs_value"):  # --lang zh on the command line decides too, though it does not parse
        assert _cli(*args, "--lang", "zh").stderr.startswith("rankscope：错误：")


def test_run_pool_and_datasets_in_chinese(files: dict[str, Path]) -> None:
    """``--lang`` on run, pool and datasets: their summary lines and notices in Chinese, English unchanged."""
    d = files["dir"]
    docs = [{"_id": f"dq{i}a", "text": f"问题 q{i} 的答案"} for i in range(12)]
    (d / "corpus.jsonl").write_text("".join(json.dumps(doc, ensure_ascii=False) + "\n" for doc in docs), "utf-8")
    args = ("run", "bm25", "--testset", files["ts"], "--corpus", d / "corpus.jsonl", "--out", d / "b.trec", "-k", "5",
            "-m", "ndcg@10", "-m", "mrr")
    zh = _cli(*args, "--lang", "zh")
    assert zh.returncode == 0, zh.stderr
    flat = _flat(zh.stdout)
    assert "bm25：评分了 12 个查询，k=5，相关性来自相关性标注" in flat
    assert "检索结果层（按相关性标注，12 个查询）" in flat
    assert "警告：ndcg@10：截断值大于 k=5" in flat and "结果文件已写入" in flat
    _typography(zh.stdout)
    en = _cli(*args)
    assert en.stdout.startswith("bm25: 12 queries scored, k=5, relevance from qrels\n  retrieved (qrels, 12 queries): ")
    assert " warning: ndcg@10: cutoff above k=5; each ranking holds at most 5 hits run written to " in _flat(en.stdout)
    assert not CJK.search(en.stdout)
    no_corpus = _cli("run", "bm25", "--testset", files["ts"], "--out", d / "x.trec", "--lang", "zh")
    assert no_corpus.returncode == 2
    assert no_corpus.stderr.startswith("rankscope：错误：bm25 需要文档：请用 --corpus FILE")

    pool = ("pool", "--runs", files["bm25"], "--qrels", files["qrels"], "-k", "4")
    zh = _cli(*pool, "--lang", "zh")
    assert zh.returncode == 0, zh.stderr
    assert "评判前的 judged@4" in zh.stdout
    assert "大多未评判" in cli(*pool, "--lang", "zh", width=120).stdout  # a table cell, whole when there is room
    prose = zh.stdout[zh.stdout.index("标注："):]
    assert "候选池：12 个查询共" in _flat(prose)
    _typography(prose)
    en = _cli(*pool).stdout
    assert "labels: 24 human, 0 model, 0 failed model judgments (counted as unjudged) pool: " in _flat(en)

    zh = _cli("datasets", "list", "--lang", "zh")
    assert "自带数据集" in zh.stdout and "来源：" in zh.stdout
    assert "Bundled datasets" in _cli("datasets", "list").stdout


@pytest.mark.parametrize("case", ["width", "score", "grade", "columns", "json", "directory"])
def test_file_errors_in_chinese_keep_file_and_line(files: dict[str, Path], case: str) -> None:
    d = files["dir"]
    name, text, expect = {
        "width": ("w.trec", "q1 Q0 d1 1 2.0\n", "w.trec 第 1 行：至少应有 6 列"),
        "score": ("s.trec", "q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 high t\n", "s.trec 第 2 行：得分必须是数字，实际为 'high'"),
        "grade": ("g.qrels", "q1 0 d1 1\nq1 0 d2 yes\n", "g.qrels 第 2 行：相关性等级必须是整数，实际为 'yes'"),
        "columns": ("c.tsv", "q1\td1\t1.0\nq1\td2\n", "c.tsv 第 2 行：应有 3 列，实际 2 列"),
        "json": ("j.json", '{"q1": {"d1": 1.0,}}', "j.json 第 1 行：JSON 无效："),
        "directory": ("folder", None, "folder：是一个文件夹"),
    }[case]
    path = d / name
    if text is None:
        path.mkdir(exist_ok=True)
    else:
        path.write_text(text)
    args = (path, files["bm25"]) if case == "grade" else (files["qrels"], path)
    res = _cli("evaluate", *args, "--lang", "zh")
    assert res.returncode == 2 and res.stderr.startswith("rankscope：错误：") and expect in res.stderr, res.stderr
    assert not MIXED.search(res.stderr)
    en = _cli("evaluate", *args)
    assert en.returncode == 2 and f"{path.name}" in en.stderr and not CJK.search(en.stderr)


def test_test_set_record_errors_in_chinese(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('[{"id": "q1", "question": "x"}, {"id": "q2"}]')
    zh = _cli("testset", "convert", path, tmp_path / "out.jsonl", "--lang", "zh")
    en = _cli("testset", "convert", path, tmp_path / "out.jsonl")
    assert zh.returncode == en.returncode == 2, zh.stderr
    assert "第 1 条记录：没有查询文本（尝试过的字段：" in zh.stderr and not MIXED.search(zh.stderr), zh.stderr
    assert "record 1: no query text (keys tried: " in en.stderr and not CJK.search(en.stderr)
    check = cli("testset", "check", path, "--lang", "zh", width=120)  # the lenient reading lists it in the table
    assert "没有查询文本" in check.stdout and "no query text" not in check.stdout, check.stdout


@pytest.mark.parametrize("case", ["one_run", "no_qrels", "max_drop"])
def test_command_checks_in_chinese(files: dict[str, Path], case: str) -> None:
    args, expect = {
        "one_run": (("compare", files["bm25"], "--qrels", files["qrels"]), "compare 至少需要 2 个结果文件"),
        "no_qrels": (("compare", files["bm25"], files["dense"]), "需要 --qrels 才能为结果文件评分"),
        "max_drop": (("check", "--qrels", files["qrels"], "--run", files["bm25"], "--max-drop", "mrr=0.01"),
                     "--max-drop 需要 --baseline RUN"),
    }[case]
    zh = _cli(*args, "--lang", "zh")
    assert zh.returncode == 2 and zh.stderr.startswith("rankscope：错误：") and expect in zh.stderr, zh.stderr
    en = _cli(*args)
    assert en.returncode == 2 and en.stderr.startswith("rankscope: error: ") and not CJK.search(en.stderr)


def test_wrapping_keeps_a_quotation_mark_with_its_words() -> None:
    text = ("策略：缺失查询计零（missing=zero）；“缺失”指 qrels 中有而结果中没有的查询，"
            "“不在 qrels 中”指结果中有而没有标注的查询")
    for width in range(16, 80):
        lines = wrap_cells(text, width)
        assert not any(line.endswith(("“", "‘")) or line.startswith(("”", "’")) for line in lines), (width, lines)


def test_a_commands_language_reaches_what_the_library_says_for_it(monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """--lang is settled once (cli.app.user_errors) and the library asks resolve_lang() for it: a progress bar's
    label said inside evaluate_retriever or judge_pairs follows the command, not only the environment."""
    import typer

    from rankscope.cli.app import user_errors
    from rankscope.i18n import _

    @user_errors
    def command(lang: str | None = None) -> str:
        return _("retrieving ({name})", name="bm25").text(resolve_lang())

    assert command(lang="zh") == "检索中（bm25）" and command() == "retrieving (bm25)"
    monkeypatch.setenv("RANKSCOPE_LANG", "zh")
    assert command() == "检索中（bm25）" and command(lang="en") == "retrieving (bm25)"
    assert resolve_lang() == "zh"  # nothing is left behind once the command returns
    monkeypatch.setenv("RANKSCOPE_LANG", "fr")  # a wrong default: said in English, exit 2
    with pytest.raises(typer.Exit) as done:
        command()
    assert done.value.exit_code == 2 and "RANKSCOPE_LANG must be one of" in capsys.readouterr().err


def test_one_query_is_said_in_the_singular(tmp_path: Path) -> None:
    """The English of a count of one: "1 query", never "1 queries" (the Chinese has one form)."""
    from rankscope import Qrels, Run
    from rankscope.data.testset import TestSet
    from rankscope.gate import check
    from rankscope.retrieval import evaluate_retriever

    path = tmp_path / "t.jsonl"
    path.write_text('{"id": "q1", "query": "x", "relevant_doc_ids": ["d1"]}\n')
    en = _cli("testset", "convert", path, tmp_path / "t.json")
    assert en.returncode == 0 and _flat(en.stdout).startswith("1 query, 1 judgment -> "), en.stdout
    zh = _cli("testset", "convert", path, tmp_path / "t.json", "--lang", "zh")
    assert _flat(zh.stdout).startswith("1 个查询，1 条标注 → "), zh.stdout

    ts = TestSet.from_annotations(["x"], [["d1"]], ids=["q1"])
    ev = evaluate_retriever(lambda query, k: ["d1"], ts, ["mrr"], k=1, progress=False)
    assert ev.summary().startswith("<lambda>: 1 query scored, k=1"), ev.summary()
    assert ev.summary("zh").startswith("<lambda>：评分了 1 个查询，k=1"), ev.summary("zh")

    gate = check(Qrels.from_dict({"q1": {"d1": 1}}), Run.from_ranked_lists({"q1": ["d1"]}), ["mrr>=0.5"])
    assert "1 query." in gate.to_markdown() and "1 queries" not in gate.to_markdown()
    assert "共 1 个查询。" in gate.to_markdown("zh")
