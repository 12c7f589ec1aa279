"""The metric parser, the engine, the reports and ``rankscope metrics`` in Chinese (issue 17 §5).

The errors a user meets first (an unknown metric, a bad cutoff, a bad parameter) say themselves in Chinese with
``text("zh")`` and keep their English ``str()``; ``rankscope metrics --lang zh`` prints its table in Chinese, a
Chinese summary for every built-in measure (from the catalog), a plugin metric's own summary otherwise.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from clirun import cli
from prose import assert_chinese
from rankscope.errors import RankscopeError
from rankscope.measures import all_specs, parse_metric, parse_metrics

SRC = Path(__file__).resolve().parents[2] / "src"

#: (metric text, its English error, a piece of the Chinese one)
PARSER_ERRORS = [
    ("ndgc@10", "unknown metric 'ndgc@10'; did you mean: ndcg@10, rndcg?",
     "未知指标 'ndgc@10'；是否想写：ndcg@10、rndcg？"),
    ("xyzzy", "unknown metric 'xyzzy'; run `rankscope metrics` to list the known metrics", "查看所有已知指标"),
    ("ndcg@ten", "the cutoff in 'ndcg@ten' must be a positive integer, got 'ten' (several cutoffs are written "
                 "ndcg@1,3,5)", "截断值必须是正整数，实际为 'ten'（多个截断值写作 ndcg@1,3,5）"),
    ("precision", "metric 'precision' needs a cutoff, e.g. precision@10", "需要截断值，例如 precision@10"),
    ("num_q@3", "metric 'num_q' takes no cutoff, got @3", "不接受截断值"),
    ("set_f(x=1)", "metric 'set_f' has no parameter 'x' (allowed: rel, beta, judged_only)",
     "没有参数 'x'（可用参数：rel、beta、judged_only）"),
    ("num_q(x=1)", "metric 'num_q' has no parameter 'x' (allowed: none)", "（可用参数：无）"),
    ("precision(rel=x)@5", "parameter 'rel' of metric 'precision' must be int, got 'x'", "必须是整数（int）"),
    ("iprec_at_recall(recall=-1)", "parameter 'recall' of metric 'iprec_at_recall' must be >= 0, got '-1'",
     "必须 >= 0"),
    ("ndcg(rel)", "malformed parameter 'rel' in metric 'ndcg(rel)' (expected name=value); did you mean: ndcg, rndcg, "
                  "dcg, sdcg@10, ndcg_rel?", "格式有误（应写作 name=value）"),
    ("P.0", "measure 'P': cutoffs must be positive, got '0'; run `rankscope metrics` to list the known metrics",
     "截断值必须是正数"),
    ("P.a", "cutoff 'a' of measure 'P' is not an integer; run `rankscope metrics` to list the known metrics",
     "不是整数"),
    ("map.3", "measure 'map' takes no parameters, got '3'; did you mean: map?", "不接受参数"),
    ("utility.1,2,3,4,5", "measure 'utility' needs exactly 4 parameters (a,b,c,d), got '1,2,3,4,5'; run `rankscope "
                          "metrics` to list the known metrics", "恰好需要 4 个参数（a,b,c,d）"),
    ("ndcg(gains=1:3)", "gain map '1:3': expected grade=gain pairs such as '1=3,2=9', got '1:3'", "增益映射"),
    ("iprec_11pt(levels=a)", "recall levels must be comma-separated numbers, got 'a'", "召回率水平"),
    ("span_recall(weight=x)@3", "parameter 'weight' of metric 'span_recall' must be 'binary' or 'graded', got 'x'",
     "必须是 'binary' 或 'graded'"),
    ("", "empty metric name; run `rankscope metrics` to list the known metrics", "指标名为空"),
]


@pytest.mark.parametrize(("text", "english", "chinese"), PARSER_ERRORS, ids=[c[0] or "empty" for c in PARSER_ERRORS])
def test_the_metric_parser_errors_say_themselves_in_chinese(text: str, english: str, chinese: str) -> None:
    with pytest.raises(RankscopeError) as info:
        parse_metrics(text)
    assert str(info.value) == english and info.value.text("en") == english
    zh = info.value.text("zh")
    assert chinese in zh, zh
    assert_chinese(zh)


def test_parse_metric_of_a_list_and_of_a_non_string_in_chinese() -> None:
    with pytest.raises(RankscopeError) as info:
        parse_metric("P.5,10")
    assert str(info.value) == "'P.5,10' denotes 2 metrics; use parse_metrics"
    assert_chinese(info.value.text("zh"))
    with pytest.raises(RankscopeError) as info:
        parse_metric(3)  # type: ignore[arg-type]
    assert str(info.value).startswith("a metric name must be a string, got int; ")
    assert info.value.text("zh").startswith("指标名必须是字符串，实际为 int；")


def test_registry_errors_in_chinese() -> None:
    from rankscope.measures import get_spec, register_metric, unregister_metric

    cases = [lambda: register_metric("1x", lambda p, m: None), lambda: unregister_metric("ndcg"),
             lambda: get_spec("ndgc"), lambda: register_metric("ndcg", lambda p, m: None)]
    english = ["metric name must start with a letter and hold only letters, digits and '_', got '1x'",
               "'ndcg' is not a registered custom metric", "unknown metric 'ndgc'; did you mean: ndcg, rndcg?",
               "metric 'ndcg' is already registered (names taken: ['ndcg'])"]
    for case, en in zip(cases, english):
        with pytest.raises(RankscopeError) as info:
            case()
        assert str(info.value) == en
        assert_chinese(info.value.text("zh"))


@pytest.fixture()
def qrels_and_run() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    return {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 1}}, {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d9": 1.0}}


def test_engine_errors_in_chinese(qrels_and_run: tuple[dict, dict]) -> None:
    import rankscope
    from rankscope.engine.stream import parse_size

    qrels, run = qrels_and_run
    result = rankscope.evaluate(qrels, run, ["ndcg@10", "mrr"])
    checks = [
        (lambda: result.per_query["map"], "no metric 'map' in this result (it holds: ndcg@10, mrr)", "ndcg@10、mrr"),
        (lambda: result.per_query.row("q7"), "no query 'q7' in this result (2 queries)", "（共 2 个查询）"),
        (lambda: parse_size("lots"), "memory limit 'lots': expected a size such as 1GiB, 512MB or 2G", "内存上限"),
        (lambda: rankscope.evaluate(qrels, run, []), "no metric given", "没有给出任何指标"),
        (lambda: rankscope.evaluate(qrels, run, ["relstring"]), "relstring is string-valued and has no numeric "
         "score; use `rankscope trec_eval -q -m relstring` to see it", "没有数值得分"),
        (lambda: rankscope.evaluate(qrels, run, ["span_recall@5"]), "span_recall@5 needs span judgments: "
         "evaluate(span_qrels, run, metrics, chunking=chunking) (SpanQrels + Chunking), or --span-qrels and --chunks "
         "on the command line", "需要片段标注"),
    ]
    for call, english, chinese in checks:
        with pytest.raises(RankscopeError) as info:
            call()
        assert str(info.value) == english
        zh = info.value.text("zh")
        assert chinese in zh, zh
        assert_chinese(zh)
    with pytest.raises(RankscopeError) as info:
        rankscope.evaluate(qrels, {}, ["mrr"])
    assert str(info.value).startswith("the run ") and "holds no ranking" in str(info.value)
    assert_chinese(info.value.text("zh"))


def test_span_errors_in_chinese() -> None:
    import rankscope
    from rankscope.data.chunking import Chunking
    from rankscope.data.spans import SpanQrels

    text = {"d1": "0123456789" * 2}
    chunks = Chunking.from_records([{"chunk_id": "a", "doc_id": "d1", "start": 0, "end": 10}], corpus=text,
                                   name="hand")
    spans = SpanQrels.from_records([{"query_id": "q1", "doc_id": "d1", "start": 2, "end": 6}], corpus=text)
    checks = [
        (lambda: rankscope.evaluate(spans, {"q1": {"a": 2.0, "zz": 1.0}}, ["span_recall@2"], chunking=chunks),
         "1 of 2 retrieved ids are not chunks of chunking 'hand' (e.g. 'zz'); span measures need the place of every "
         "retrieved chunk: use the chunk ids of that chunking in the run", "不是分块方案 'hand' 的块（例如 'zz'）"),
        (lambda: rankscope.evaluate(spans, {"q1": {"a": 1.0}}, ["span_recall@2"], chunking=chunks, unjudged="condense"),
         "unjudged='condense' needs judgments of documents: with span judgments every chunk outside the judged "
         "text is unjudged, and condensing would drop them all", "需要文档级标注"),
        (lambda: rankscope.evaluate({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, ["mrr"], chunking=chunks),
         "chunking= goes with span judgments: pass SpanQrels as the qrels", "要与片段标注一起使用"),
    ]
    for call, english, chinese in checks:
        with pytest.raises(RankscopeError) as info:
            call()
        assert str(info.value) == english
        zh = info.value.text("zh")
        assert chinese in zh, zh
        assert_chinese(zh)


def test_report_errors_in_chinese(qrels_and_run: tuple[dict, dict], tmp_path: Path) -> None:
    import rankscope
    from rankscope.report import write_report

    qrels, run = qrels_and_run
    result = rankscope.evaluate(qrels, run, ["mrr"])
    checks = [
        (lambda: write_report(result, tmp_path / "r.docx"), "cannot tell the report format from", ".json、.md"),
        (lambda: write_report(result, tmp_path / "nope" / "r.md"), "cannot write the report: folder", "不存在"),
        (lambda: write_report(object(), tmp_path / "r.md"), "write_report takes a Comparison", "实际为 object"),
        (lambda: rankscope.plot(result, kind="pie"), "unknown plot kind 'pie'; choose one of: curves, ",
         "未知的图表类型"),
    ]
    for call, english, chinese in checks:
        with pytest.raises(RankscopeError) as info:
            call()
        assert str(info.value).startswith(english), str(info.value)
        zh = info.value.text("zh")
        assert chinese in zh, zh
        assert_chinese(zh)


# -- the summaries of `rankscope metrics` -------------------------------------------------------------------------
def test_every_built_in_measure_has_a_chinese_summary() -> None:
    untranslated = []
    for spec in all_specs():
        if spec.builtin:
            assert spec.summary_in("en") == spec.summary
            if spec.summary_in("zh") == spec.summary:  # its English is not marked N_() or not translated
                untranslated.append(spec.name)
            else:
                assert_chinese(spec.summary_in("zh"))
    assert not untranslated, untranslated


def test_a_plugin_metric_without_a_translation_shows_its_own_summary() -> None:
    from rankscope.measures import register_metric, unregister_metric

    spec = register_metric("zh_probe", lambda p, m: p.sum(p.is_rel().astype(float), p.rank < 1), cutoff="none",
                           summary="relevant at rank 1")
    try:
        assert spec.summary_in("zh") == spec.summary_in("en") == "relevant at rank 1"
    finally:
        unregister_metric("zh_probe")


def _cli(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``rankscope ARGS`` in this process; in a subprocess when it loads a plugin (whose metric would stay in this
    process's registry)."""
    if not env or "PLUGIN_PATH" not in env:
        return cli(*args, env=env, width=200)
    base = {k: v for k, v in os.environ.items() if k not in ("RANKSCOPE_LANG", "LC_ALL", "LC_MESSAGES")}
    base.update({"LANG": "C.UTF-8", "COLUMNS": "200", "PYTHONPATH": os.pathsep.join([str(SRC), *(
        [env.pop("PLUGIN_PATH")] if env and "PLUGIN_PATH" in env else [])]), "PYTHONIOENCODING": "utf-8",
        **(env or {})})
    return subprocess.run([sys.executable, "-c", "from rankscope.cli.app import main; main()", *map(str, args)],
                          capture_output=True, text=True, encoding="utf-8", env=base, timeout=120)


@pytest.mark.slow
def test_metrics_command_in_chinese_and_english(tmp_path: Path) -> None:
    zh = _cli("metrics", "--lang", "zh")
    assert zh.returncode == 0, zh.stderr
    assert_chinese(zh.stdout)
    assert "衡量什么" in zh.stdout and "归一化折损累计增益" in zh.stdout and "必需" in zh.stdout
    assert _cli("metrics", env={"RANKSCOPE_LANG": "zh"}).stdout == zh.stdout
    en = _cli("metrics", "--lang", "en")
    assert en.returncode == 0 and "what it measures" in en.stdout and "required" in en.stdout
    assert "normalised discounted cumulative gain (trec_eval gains = grades)" in en.stdout
    assert _cli("metrics").stdout == en.stdout
    # a plugin metric registered without a Chinese summary shows its own
    (tmp_path / "zhplugin.py").write_text(
        "from rankscope.measures import register_metric\n"
        "register_metric('probe_at_1', lambda p, m: p.sum(p.is_rel().astype(float), p.rank < 1), cutoff='none',\n"
        "                summary='relevant at rank one')\n")
    plug = _cli("metrics", "--plugin", "zhplugin", "--lang", "zh", env={"PLUGIN_PATH": str(tmp_path)})
    assert plug.returncode == 0, plug.stderr
    assert "relevant at rank one" in plug.stdout
    assert_chinese(plug.stdout, allowed=("relevant at rank one",))


def test_an_unknown_metric_on_the_command_line_in_chinese(tmp_path: Path) -> None:
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 1.0 t\n")
    args = ("evaluate", tmp_path / "qrels.txt", tmp_path / "run.trec", "-m", "ndcg@ten")
    zh = _cli(*args, "--lang", "zh")
    assert zh.returncode == 2 and zh.stderr.startswith("rankscope：错误：'ndcg@ten' 中的截断值必须是正整数"), zh.stderr
    assert_chinese(zh.stderr)
    en = _cli(*args)
    assert en.returncode == 2 and en.stderr == (
        "rankscope: error: the cutoff in 'ndcg@ten' must be a positive integer, got 'ten' (several cutoffs are "
        "written ndcg@1,3,5)\n")
