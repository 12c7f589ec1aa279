"""The labels area in a Chinese session (issue 17 §5): its errors, and the lines ``rankscope judge``, ``synth``,
``agreement`` and ``pool`` print, say themselves in Chinese; English stays word for word what it was."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from clirun import cli, outcome
from prose import assert_chinese, unwrap, whole_lines
from rankscope.data.qrels import Qrels
from rankscope.data.run import Run
from rankscope.errors import RankscopeError
from rankscope.labels.agreement import label_agreement
from rankscope.labels.cache import LabelCache
from rankscope.labels.judge import JudgeSettings, judge_one
from rankscope.labels.pool import build_pool, read_pool_records
from rankscope.labels.provenance import Label, Labels, read_labels
from rankscope.labels.reading import read_label_agreement, read_ranking_agreement
from rankscope.labels.synth import synthesize
from rankscope.labels.system_ranking import ranking_agreement
from rankscope.labels.texts import read_texts
from rankscope.llm_client import ChatClient, Endpoint, api_key_from_env

from .fake_llm import FakeLLM
from .test_cli_labels import files  # noqa: F401  (the fixture)

RUNS_ABC = ("A B C",)  # the example of --runs A B C: code, not English prose


def _error(call: Callable[[], object]) -> RankscopeError:
    with pytest.raises(RankscopeError) as info:
        call()
    return info.value


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _cases(tmp: Path) -> dict[str, tuple[Callable[[], object], str, str]]:
    """The errors a user of the labels meets most: what raises it, its English message, a piece of its Chinese."""
    pool = _write(tmp / "pool.jsonl", '{"query_id": "q1", "doc_id": "d1"}\n{"query_id": "q2"}\n')
    twice = _write(tmp / "corpus.jsonl", '{"_id": "d1", "text": "x"}\n{"_id": "d1", "text": "y"}\n')
    tsv = _write(tmp / "texts.tsv", "q1 what is bm25\n")
    qrels = _write(tmp / "j.qrels", "q1 0 d1 1\n")
    _write(tmp / "j.qrels.provenance.jsonl", '{"query_id": "q1", "doc_id": "d1", "grade": 2, "source": "model"}\n')
    cache = _write(tmp / "cache.sqlite", "not a database at all, only text" * 10)
    h, m = Qrels.from_dict({"q1": {"d1": 1}}), Qrels.from_dict({"q2": {"d2": 1}})
    run = Run.from_ranked_lists({"q1": ["d1"]}, name="a")
    return {
        "base_url": (lambda: Endpoint("localhost:8000/v1"),
                     "base_url must start with http:// or https://, got 'localhost:8000/v1'",
                     "base_url 必须以 http:// 或 https:// 开头，实际为 'localhost:8000/v1'"),
        "api_key": (lambda: api_key_from_env("SURELY_UNSET_VAR_H17"),
                    "the environment variable SURELY_UNSET_VAR_H17 (named by --api-key-env) is not set or empty",
                    "环境变量 SURELY_UNSET_VAR_H17（由 --api-key-env 指定）未设置或为空"),
        "timeout": (lambda: Endpoint("http://x/v1", timeout=0),
                    "timeout must be a positive number of seconds, got 0", "timeout 必须是正的秒数，实际为 0"),
        "parse_retries": (lambda: JudgeSettings(Endpoint("http://x/v1"), "m", parse_retries=-1),
                          "parse_retries must be an integer >= 0, got -1", "parse_retries 必须是不小于 0 的整数"),
        "prompt_lang": (lambda: JudgeSettings(Endpoint("http://x/v1"), "m", lang="fr"),
                        "lang must be one of en, zh, got 'fr'", "lang 必须是 en、zh 之一，实际为 'fr'"),
        "pool_line": (lambda: read_pool_records(pool), f"{pool}:2: doc_id must be a non-empty string, got None",
                      f"{pool} 第 2 行：doc_id 必须是非空字符串，实际为 None"),
        "depth": (lambda: build_pool([run], h, depth=0), "depth must be an integer >= 1, got 0",
                  "depth 必须是不小于 1 的整数，实际为 0"),
        "id_twice": (lambda: read_texts(twice, "corpus"), f"{twice}:2: id 'd1' occurs twice",
                     f"{twice} 第 2 行：编号 'd1' 出现了两次"),
        "tsv": (lambda: read_texts(tsv, "queries"), f"{tsv}:1: expected 'id<TAB>text'", "应为 'id<TAB>text' 格式"),
        "mismatch": (lambda: read_labels(qrels),
                     f"{tmp / 'j.qrels.provenance.jsonl'}: (query 'q1', doc 'd1') has grade 1 in the qrels and 2 in "
                     "the provenance file; the two files must be written together (rankscope judge / pool "
                     "--combined-out)",
                     "查询 'q1' 的文档 'd1' 在 qrels 中的等级为 1，在来源说明文件中为 2；这两个文件必须一起写出"),
        "twice": (lambda: Labels.from_records([Label("q1", "d1", 1), Label("q1", "d1", 2)]),
                  "labels: (query 'q1', doc 'd1') is labelled twice", "被标注了两次"),
        "no_overlap": (lambda: label_agreement(h, m),
                       "agreement: no (query, doc) pair is judged by both label sets (were the model labels made "
                       "for this pool?)", "模型标注是为这个候选池做的吗？"),
        "one_run": (lambda: ranking_agreement(h, h, [run]), "ranking agreement needs at least 2 runs, got 1",
                    "至少需要 2 个结果文件（run），实际为 1 个"),
        "weights": (lambda: label_agreement(h, h, weights="cubic"),
                    "weights must be one of none, linear, quadratic, got 'cubic'",
                    "weights 必须是 none、linear、quadratic 之一"),
        "no_chunk": (lambda: synthesize({"c1": "short"}, 3, JudgeSettings(Endpoint("http://x/v1"), "m")),
                     "synth: no chunk of at least 40 characters in the corpus", "语料库中没有至少 40 个字符的块"),
        "cache": (lambda: LabelCache(cache), f"{cache}: not a rankscope label cache (file is not a database)",
                  "不是 rankscope 的标注缓存（file is not a database）"),
    }


CASES = ["base_url", "api_key", "timeout", "parse_retries", "prompt_lang", "pool_line", "depth", "id_twice", "tsv",
         "mismatch", "twice", "no_overlap", "one_run", "weights", "no_chunk", "cache"]


@pytest.mark.parametrize("case", CASES)
def test_errors_of_the_labels_say_themselves_in_chinese(tmp_path: Path, case: str) -> None:
    call, english, chinese = _cases(tmp_path)[case]
    err = _error(call)
    assert str(err) == err.text("en") == english
    zh = err.text("zh")
    assert chinese in zh, zh
    assert_chinese(zh, allowed=("file is not a database",))  # sqlite's own reason is shown as it is


def test_endpoint_errors_say_themselves_in_chinese(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wrong URL, key or server stops the batch with one line naming the setting to check, in the reader's
    language; the endpoint's own text (``no route ...``) is shown as it is."""
    monkeypatch.setenv("FAKE_KEY", "sk-secret-123")
    with FakeLLM(api_key="sk-other") as llm:
        settings = JudgeSettings(Endpoint(llm.url.replace("/v1", "/v2"), retries=0), "m")
        not_found = _error(lambda: judge_one("q", "d", settings))
        locked = JudgeSettings(Endpoint(llm.url, api_key_env="FAKE_KEY", retries=0), "m")
        refused = _error(lambda: judge_one("q", "d", locked))
        no_key = _error(lambda: judge_one("q", "d", JudgeSettings(Endpoint(llm.url, retries=0), "m")))
    down = _error(lambda: judge_one("q", "d", JudgeSettings(Endpoint("http://127.0.0.1:9/v1", retries=0), "m")))
    url = llm.url.replace("/v1", "/v2")
    assert str(not_found) == (f"HTTP 404 from {url}/chat/completions: no route /v2/chat/completions: check --base-url "
                              "(it ends before /chat/completions, e.g. https://api.openai.com/v1) and --model 'm'")
    assert not_found.text("zh") == (f"{url}/chat/completions 返回 HTTP 404：no route /v2/chat/completions：请检查 "
                                    "--base-url（它止于 /chat/completions 之前，例如 https://api.openai.com/v1）和 "
                                    "--model 'm'")
    assert str(refused) == f"{llm.url}/chat/completions refused the request (HTTP 401): check the key in $FAKE_KEY"
    assert refused.text("zh") == f"{llm.url}/chat/completions 拒绝了请求（HTTP 401）：请检查 $FAKE_KEY 中的密钥"
    assert str(no_key).endswith("check --api-key-env (no key was sent)")
    assert no_key.text("zh").endswith("请检查 --api-key-env（没有发送密钥）")
    assert str(down).startswith("cannot reach http://127.0.0.1:9/v1/chat/completions: ")
    assert "无法连接 http://127.0.0.1:9/v1/chat/completions：" in down.text("zh")
    assert down.text("zh").endswith("（请检查 --base-url，以及服务器是否已启动）")
    for err in (not_found, refused, no_key):
        assert_chinese(err.text("zh"), allowed=("no route",))
        assert "sk-secret" not in str(err) + err.text("zh")


def test_a_batch_stopped_by_the_endpoint_says_so_in_chinese() -> None:
    from rankscope.labels.batch import judge_pairs

    with FakeLLM() as llm:
        settings = JudgeSettings(Endpoint(llm.url.replace("/v1", "/v2"), retries=0), "m")
        err = _error(lambda: judge_pairs([("q1", "d1")], {"q1": "q"}, {"d1": "d"}, settings, progress=False,
                                         client=ChatClient(settings.endpoint)))
    assert str(err).endswith("(0 answers of this batch were kept before it stopped; run again to resume)")
    zh = err.text("zh")
    assert zh.startswith(f"{llm.url.replace('/v1', '/v2')}/chat/completions 返回 HTTP 404：")
    assert zh.endswith("（本批次停止前已保存 0 个回答；再次运行即可接着做）")


def test_the_reading_of_agreement_is_chinese() -> None:
    human = Qrels.from_dict({f"q{q}": {f"d{d}": (q + d) % 4 for d in range(6)} for q in range(6)})
    model = Qrels.from_dict({f"q{q}": {f"d{d}": (q + d) % 4 if d % 3 else 0 for d in range(6)} for q in range(6)})
    agr = label_agreement(human, model, resamples=50, relevance_level=2)
    zh = read_label_agreement(agr, "zh")
    assert zh[0].startswith("等级 ≥ 2 的二元 κ = ") and zh[1].startswith("线性加权 κ = ")
    en = read_label_agreement(agr, "en")
    assert en[0].startswith("binary (grade ≥ 2) κ = ") and en[1].startswith("weighted (linear) κ = ")
    runs = [Run.from_dict({f"q{q}": {f"d{d}": float((q + d) % 4 * r + d % 3) for d in range(6)} for q in range(6)},
                          name=f"r{r}") for r in range(3)]
    ra = ranking_agreement(human, model, runs, permutations=200)
    zh_ranking = read_ranking_agreement(ra, "zh")
    assert "配对 t 检验（t）" in zh_ranking[-1] and "Holm 校正（holm）" in zh_ranking[-1]
    assert "(t test, α = 0.05, holm correction)" in read_ranking_agreement(ra, "en")[-1]
    for line in zh + zh_ranking:
        assert_chinese(line)


# -- the commands ----------------------------------------------------------------------------------------------
def _judge_args(files: dict[str, Path], tmp_path: Path, url: str) -> list[object]:  # noqa: F811
    pool = _write(tmp_path / "pool.jsonl", "".join(json.dumps({"query_id": q, "doc_id": d}) + "\n"
                                                   for q, d in [("q1", "d11"), ("q1", "d12"), ("q2", "d21"),
                                                                ("q2", "nope")]))
    return ["judge", "--pool", pool, "--queries", files["queries.jsonl"], "--corpus", files["corpus.jsonl"],
            "--base-url", url, "--model", "fake-judge", "--cache", tmp_path / "cache.sqlite", "--max-failures", "1"]


def _lines(text: str) -> str:
    """Chinese output with its wrapped lines joined again and no spaces (print_lines wraps Chinese to the terminal
    width, breaking at a space it drops); compare with :func:`_lines` of the expected text."""
    return re.sub(r"\n {4}| ", "", text)


def test_judge_in_chinese(files: dict[str, Path], tmp_path: Path,  # noqa: F811
                          capsys: pytest.CaptureFixture[str]) -> None:
    with FakeLLM() as llm:
        base = _judge_args(files, tmp_path, llm.url)
        code, out, err = outcome(cli(*base, "--dry-run", "--lang", "zh"))
        assert code == 0 and err == "" and llm.calls == 0
        flat = _lines(out)
        assert flat.startswith(_lines("试运行（fake-judge，提示词 graded-1/zh）：共 4 个（查询，文档）对，"
                                      "3 组不同的文本"))
        assert _lines("估计词元（token）数：输入约") in flat and _lines("即可估算费用；未发送任何请求") in flat
        assert_chinese(out)
        code, out, err = outcome(cli(*base, "--out", tmp_path / "zh.qrels", "--no-progress", "--lang", "zh"))
        assert code == 0, err
        flat = _lines(out)
        assert _lines("用 fake-judge 评判了 4 个（查询，文档）对（提示词 graded-1/zh）：3 对得到等级，"
                      "1 对失败") in flat
        assert _lines("等级分布：") in flat and _lines("来源说明 -> ") in flat
        assert _lines(err).startswith(_lines("rankscope：警告：4 对中有 1 对没有等级（缺少文本 1 对）；它们列在 "))
        assert_chinese(out)
        assert_chinese(err)
        assert "graded-1/zh" in (tmp_path / "zh.qrels.provenance.jsonl").read_text()  # --lang zh: the prompt too

        # RANKSCOPE_LANG=zh says the messages in Chinese; the prompt stays English unless --lang is given
        zh = {"RANKSCOPE_LANG": "zh"}
        code, out, _ = outcome(cli(*base, "--dry-run", env=zh))
        assert code == 0 and _lines(out).startswith(_lines("试运行（fake-judge，提示词 graded-1/en）"))
        code, _, err = outcome(cli(*base, "--concurrency", "0", "--out", tmp_path / "x.qrels", env=zh))
        assert code == 2 and err == "rankscope：错误：concurrency 必须是不小于 1 的整数，实际为 0\n"
        code, _, err = outcome(cli(*base, env=zh))
        assert code == 2 and err == "rankscope：错误：请给出 --out FILE（或 --dry-run）\n"

        code, out, err = outcome(cli(*base, "--dry-run"))
        out = whole_lines(out)
        assert out.splitlines()[0] == (
            "dry run (fake-judge, prompt graded-1/en): 4 pairs, 3 distinct texts, 0 in the cache, 3 calls to make; "
            "1 pairs without text, 0 documents cut at 8000 characters")
        assert out.splitlines()[1].startswith("prompt graded-1/en: rankscope's own wording")
        assert out.splitlines()[2].startswith("estimated tokens: ~") and out.splitlines()[2].endswith(
            " out; give --price-in and --price-out (per million tokens) for a cost estimate; nothing was sent")
        code, out, err = outcome(cli(*base, "--out", tmp_path / "en.qrels", "--no-progress"))
        out, err = whole_lines(out), whole_lines(err)
        lines = out.splitlines()
        assert lines[0] == ("judged 4 pairs with fake-judge (prompt graded-1/en): 3 graded, 1 failed; 0 from the "
                            "cache, 3 judged now")
        assert lines[1].startswith("grades: ") and lines[2].endswith(" output tokens (as the endpoint reported them)")
        assert lines[3] == (f"qrels -> {tmp_path / 'en.qrels'}; provenance -> {tmp_path / 'en.qrels.provenance.jsonl'}"
                            f"; cache: {tmp_path / 'cache.sqlite'}")
        assert err == ("rankscope: warning: 1 of 4 pairs have no grade (1 missing text); they are listed in "
                       f"{tmp_path / 'en.qrels.provenance.jsonl'}\n")


def test_synth_in_chinese(tmp_path: Path) -> None:
    corpus = _write(tmp_path / "corpus.jsonl", "".join(
        json.dumps({"_id": f"c{i}", "text": f"{word} is what this passage explains at length grade=3"}) + "\n"
        for i, word in enumerate(("Photosynthesis", "Glaciation", "Volcanism", "Tectonics"))))
    with FakeLLM() as llm:
        base = ["synth", "--corpus", corpus, "--base-url", llm.url, "--model", "gen", "--no-cache", "--n", "6",
                "--min-chars", "10"]
        code, out, _ = outcome(cli(*base, "--dry-run", "--lang", "zh"))
        assert code == 0 and _lines(out).startswith(_lines("试运行：有 4 个至少 10 个字符的块；生成 6 个问题约需 "))
        assert_chinese(out)
        code, out, err = outcome(cli(*base, "--out", tmp_path / "s.json", "--no-progress", "--lang", "zh"))
        assert code == 0, err
        assert _lines(out).startswith(_lines("从 4 个候选块得到 4 个问题（目标 6 个）-> "))
        assert _lines("拒绝：0 个不能独立成问（指向原块），0 个照抄原块") in _lines(out)
        assert _lines(err).startswith(_lines("rankscope：警告：6 个问题中只接受了 4 个（请调高 --max-candidates，"
                                             "或查看 "))
        assert_chinese(out)
        assert_chinese(err)
        code, out, err = outcome(cli(*base, "--out", tmp_path / "e.json", "--no-progress"))
        out, err = whole_lines(out), whole_lines(err)
        assert out.splitlines()[0] == f"4 of 6 questions from 4 candidate chunks -> {tmp_path / 'e.json'}"
        assert out.splitlines()[1].startswith(
            "rejected: 0 not standalone (pointing at their chunk), 0 copying their chunk, ")
        assert err == (f"rankscope: warning: only 4 of 6 questions were accepted (raise --max-candidates or check "
                       f"{tmp_path / 'e.json.synth.json'})\n")


def test_agreement_in_chinese(tmp_path: Path) -> None:
    human, model = tmp_path / "h.qrels", tmp_path / "m.qrels"
    human.write_text("".join(f"q{q} 0 d{d} {(q + d) % 4}\n" for q in range(8) for d in range(10)))
    model.write_text("".join(f"q{q} 0 d{d} {(q + d + (d == 1)) % 4 if d % 5 else 0}\n" for q in range(8)
                             for d in range(10)))
    runs = []
    for r in range(3):
        p = tmp_path / f"r{r}.trec"
        p.write_text("".join(f"q{q} Q0 d{d} 1 {((q + d) % 4) * r + (d % 3)} r{r}\n" for q in range(8)
                             for d in range(10)))
        runs.append(p)
    args = ["agreement", "--qrels", human, "--judged", model, "--runs", *runs, "--bootstrap", 100, "--permutations",
            200]
    code, out, err = outcome(cli(*args, "--lang", "zh"))
    assert code == 0, err
    flat = _lines(out)
    assert flat.startswith(_lines("偏差：模型给的等级比人工低：每篇文档的平均等级偏移 -0.300"))
    assert _lines("模型标注对 ndcg@10 的影响（模型减人工，区间按查询做 bootstrap 重抽样）：") in flat
    assert _lines("双方都评判过的文档 80 篇；只有人工标注的 0 篇，只有模型标注的 0 篇；"
                  "0 篇因等级为负而排除\n混淆矩阵") in flat
    assert "人工 \\ 模型" in out and "名次（人工）" in out and _lines("完全一致率 ") in flat
    assert _lines("系统排名基于双方都评判过的 8 个查询") in flat
    assert _lines("Landis & Koch 分级") in flat and "τ_AP" in flat
    assert_chinese(out.replace("┃", " "))
    code, out, _ = outcome(cli(*args))
    out = whole_lines(out)
    assert out.startswith("Bias: the model grades lower than people: mean grade shift -0.300 [")
    assert "\n\n80 documents judged by both; 0 by the human labels only, 0 by the model only; 0 left out " \
        "(negative grade)\nconfusion matrix" in out
    assert "\nexact agreement " in out and "\n\nsystem ranking on 8 queries judged by both (0 human-only and 0 "\
        "model-only queries left out)\n" in out and "rank (human)" in out


@pytest.mark.parametrize(("args", "english", "chinese"), [
    (["pool"], "give the run files with --runs A B C", "请用 --runs A B C 给出结果文件（run）"),
    (["pool", "a.trec"], "unexpected argument 'a.trec'; give run files with --runs A B C",
     "多余的参数 'a.trec'；请用 --runs A B C 给出结果文件"),
    (["agreement", "--qrels", "h.qrels", "--judged", "h.qrels", "x.trec"],
     "unexpected argument 'x.trec'; give run files with --runs A B C", "多余的参数 'x.trec'"),
])
def test_run_file_errors_in_chinese(args: list[str], english: str,
                                    chinese: str) -> None:
    code, _, err = outcome(cli(*args, "--lang", "zh", width=80))
    assert code == 2 and err.startswith(_lines("rankscope：错误：")) and chinese in err, err
    assert_chinese(err, allowed=RUNS_ABC)
    code, _, err = outcome(cli(*args, width=80))
    assert code == 2 and err == f"rankscope: error: {english}\n"


def test_the_provenance_note_of_evaluate_in_chinese(files: dict[str, Path], tmp_path: Path,  # noqa: F811
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    labels = Labels.from_records([Label("q1", "d11", 2, "human"), Label("q1", "d12", 1, "model", "m", "p"),
                                  Label("q2", "d21", None, "model", "m", "p", "timeout: no reply")])
    labels.write(tmp_path / "l.qrels")
    args = ["evaluate", "--qrels", tmp_path / "l.qrels", "--run", files["a.trec"], "-m", "ndcg@10"]
    code, out, err = outcome(cli(*args, "--lang", "zh", width=80))
    assert code == 0, err
    side = tmp_path / "l.qrels.provenance.jsonl"
    assert _lines(f"标注来源取自 {side}：人工 1 条，模型 1 条，模型评判失败 1 条（按未评判计）") in _lines(out + err)
    code, out, err = outcome(cli(*args, width=80))
    assert (f"labels with provenance from {tmp_path / 'l.qrels.provenance.jsonl'}: 1 human, 1 model, 1 failed "
            "judgments (unjudged)") in unwrap(out + err)


def test_the_label_cache_schema_error_in_chinese(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    LabelCache(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    err = _error(lambda: LabelCache(path))
    assert str(err) == f"{path}: label cache schema 0, this rankscope reads 2; use another --cache file"
    assert err.text("zh") == f"{path}：标注缓存的结构版本为 0，这个版本的 rankscope 只读取版本 2；请换一个 --cache 文件"
