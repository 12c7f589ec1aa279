"""``--help`` follows the language (issue 17 §5): in a zh session ``rankscope --help`` and every ``rankscope COMMAND
--help`` say their help, options and typer's labels in Chinese; the English help is unchanged.

The Chinese lives in src/rankscope/cli/help/zh.json; the guard below fails when a command or an option has no
Chinese entry, when an entry translates an English text the code no longer says, or when the catalog keeps an entry
for a command or an option that is gone, so that a new option cannot ship English-only.
"""

from __future__ import annotations

import importlib
import inspect
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from typer.main import get_command

from clirun import cli
from prose import CJK, MIXED, assert_chinese, english_left
from rankscope.cli import help as cli_help
from rankscope.cli.app import COMMAND_MODULES, app, main
from rankscope.cli.help import catalog, commands

for _module in COMMAND_MODULES:
    importlib.import_module(_module)

ZH = catalog("zh")
TREE = list(commands(get_command(app)))
#: every command whose --help typer prints (``rankscope trec_eval --help`` is trec_eval's own usage text)
PATHS = [path for path, _ in TREE if path != "trec_eval"]
WIDTH = 100
SRC = Path(__file__).resolve().parents[1] / "src"


def _help(path: str, lang: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
          width: int = WIDTH) -> str:
    """``rankscope PATH --help`` in ``lang`` (the session's language, as RANKSCOPE_LANG), run in this process."""
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.setenv("RANKSCOPE_LANG", lang)
    with pytest.raises(SystemExit) as info:
        main([*path.split(), "--help"])
    assert info.value.code in (0, None)
    return capsys.readouterr().out


def _examples(text: str, heading: str) -> list[str]:
    """The example command lines after ``heading`` (``Examples:`` / ``示例：``)."""
    _, found, tail = text.partition(heading)
    return [ln.strip() for ln in tail.splitlines() if ln.strip().startswith("rankscope ")] if found else []


def _entry(path: str, param: Any) -> dict[str, str] | None:
    """The catalog entry that translates ``param`` of the command ``path`` (its own first, then the shared one)."""
    own = ZH["commands"].get(path, {}).get("options", {}).get(param.name)
    return next((e for e in (own, ZH["options"].get(param.name)) if e is not None and e["en"] == param.help), None)


def test_every_command_and_option_has_its_chinese() -> None:
    where = "src/rankscope/cli/help/zh.json"
    problems = []
    for path, cmd in TREE:
        name = f"rankscope {path}".strip()
        if cmd.help:
            entry = ZH["commands"].get(path)
            if entry is None:
                problems.append(f"`{name}` has no Chinese help: add commands[{path!r}] to {where}")
            elif "\n".join(entry["en"]) != inspect.cleandoc(cmd.help):
                problems.append(f"the Chinese help of `{name}` translates an older English text: update its en and zh")
        for param in cmd.params:
            if getattr(param, "help", None) and _entry(path, param) is None:
                problems.append(f"`{name}` {param.opts[0]}: no Chinese for its help {param.help!r} (or it translates "
                                f"an older text): add options[{param.name!r}] under commands[{path!r}] in {where}")
            if isinstance(param.show_default, str) and param.show_default not in ZH["defaults"]:
                problems.append(f"`{name}` {param.opts[0]}: its default {param.show_default!r} is not in "
                                f"defaults of {where}")
    assert not problems, "\n".join(problems)


def test_the_catalog_keeps_nothing_that_is_gone() -> None:
    live = {path: cmd for path, cmd in TREE}
    used_shared = set()
    defaults = set()
    problems = [f"commands[{path!r}]: no command `rankscope {path}`" for path in ZH["commands"] if path not in live]
    for path, entry in ZH["commands"].items():
        cmd = live.get(path)
        params = {p.name: p for p in cmd.params} if cmd is not None else {}
        for name, own in entry.get("options", {}).items():
            if name not in params or params[name].help != own["en"]:
                problems.append(f"commands[{path!r}].options[{name!r}]: no such option with this English help")
    for path, cmd in TREE:
        for param in cmd.params:
            entry = _entry(path, param) if getattr(param, "help", None) else None
            if entry is not None and entry is ZH["options"].get(param.name):
                used_shared.add(param.name)
            if isinstance(param.show_default, str):
                defaults.add(param.show_default)
    problems += [f"options[{name!r}]: no command has this option with this English help"
                 for name in ZH["options"] if name not in used_shared]
    problems += [f"defaults[{text!r}]: no option shows this default" for text in ZH["defaults"] if text not in defaults]
    assert not problems, "\n".join(problems)


def test_the_examples_are_kept_as_they_are_and_the_prose_is_chinese() -> None:
    for path, entry in ZH["commands"].items():
        en, zh = "\n".join(entry["en"]), "\n".join(entry["zh"])
        assert _examples(zh, "示例：") == _examples(en, "Examples:"), path
        assert ("Examples:" in en) == ("示例：" in zh) and "Examples:" not in zh, path
        assert_chinese(zh.partition("示例：")[0])
    own = [e for c in ZH["commands"].values() for e in c.get("options", {}).values()]
    for entry in [*ZH["options"].values(), *own]:
        assert CJK.search(entry["zh"]) and not MIXED.search(entry["zh"]), entry
    for en, zh in ZH["defaults"].items():  # a phrase in Chinese; a value (1GiB, holm, a metric list) as it is
        assert (CJK.search(zh) or not english_left(zh)) and not MIXED.search(zh), (en, zh)
    for label in ZH["labels"].values():
        assert CJK.search(label) and not MIXED.search(label), label


@pytest.mark.parametrize("path", PATHS, ids=[p or "rankscope" for p in PATHS])
def test_help_in_chinese(path: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    zh = _help(path, "zh", capsys, monkeypatch)
    name = f"rankscope {path}".strip()
    assert_chinese(zh, allowed=(name, "--runs A B C"))  # the command's name, metavars
    assert zh.lstrip().startswith(f"用法：{name} ") and "选项" in zh and "显示本帮助并退出。" in zh
    for english in ("Usage:", "Options", "Arguments", "Commands", "[default:", "[required]", "[env var:", "Examples:",
                    "Show this message"):
        assert english not in zh, (english, zh)
    for line in zh.splitlines():
        assert cell_len(line) <= WIDTH, (cell_len(line), line)
    cmd = dict(TREE)[path]
    if getattr(cmd, "commands", None):  # a group: its commands' summaries, in Chinese
        for sub in cmd.commands:
            assert re.search(rf"│ {re.escape(sub)} +[^\n│]*[\u4e00-\u9fff]", zh), sub
        return
    wide = _help(path, "zh", capsys, monkeypatch, width=200)  # the examples each on one line: each still parses
    examples = _examples(wide, "示例：")
    assert 2 <= len(examples) <= 3, wide
    for example in examples:
        argv = shlex.split(example)[1:]
        assert " ".join(argv[:len(path.split())]) == path, example
        assert cmd.make_context(path, argv[len(path.split()):], resilient_parsing=False) is not None


def test_english_help_is_unchanged(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """English help is the code's own: the same before and after Chinese help printed in this process (typer's
    labels are put back), and the same as the Chinese path prints with the catalog switched off."""
    before = {path: _help(path, "en", capsys, monkeypatch) for path in PATHS}
    assert before[""].lstrip().startswith("Usage: rankscope [OPTIONS] COMMAND [ARGS]...")
    assert "[default: (none)]" in before["evaluate"] and "Show this message and exit." in before["evaluate"]
    assert "'rankscope[ray]'" in before["evaluate"]
    assert not any(CJK.search(text) for text in before.values())
    for path in PATHS:
        _help(path, "zh", capsys, monkeypatch)
    assert {path: _help(path, "en", capsys, monkeypatch) for path in PATHS} == before
    monkeypatch.setattr(cli_help, "catalog", lambda lang: {})
    assert {path: _help(path, "zh", capsys, monkeypatch) for path in ("", "evaluate", "testset check")} == {
        path: before[path] for path in ("", "evaluate", "testset check")}


def test_a_chinese_default_wraps_in_a_narrow_terminal(capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    zh = _help("power", "zh", capsys, monkeypatch, width=60)
    assert all(cell_len(line) <= 60 for line in zh.splitlines())
    whole = re.sub(r"[│\s]", "", zh)  # the panel's borders and the line breaks taken out
    assert "[默认：（无：此时请给出--sd）]" in whole and "[默认：（无：必须给出）]" in whole


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return cli(*args, env=env, width=WIDTH)


def test_the_help_language_is_decided_as_for_every_command() -> None:
    """--lang, RANKSCOPE_LANG or a zh_* locale; judge's and synth's --lang is their prompt's language (as for their
    usage mistakes), the session's language says their help; trec_eval's help is trec_eval's, in every language."""
    by_option = _cli("evaluate", "--help", "--lang", "zh", env={})
    assert by_option.returncode == 0 and by_option.stdout.lstrip().startswith("用法：rankscope evaluate")
    assert _cli("evaluate", "--help", env={"RANKSCOPE_LANG": "zh"}).stdout == by_option.stdout
    by_locale = _cli("--help", env={"LANG": "zh_CN.UTF-8"})
    assert by_locale.returncode == 0 and "╭─ 命令 " in by_locale.stdout
    assert_chinese(by_locale.stdout, allowed=("rankscope",))
    assert _cli("evaluate", "--help", "--lang", "en", env={"LANG": "zh_CN.UTF-8"}).stdout.lstrip().startswith("Usage:")
    assert _cli("judge", "--help", "--lang", "zh", env={}).stdout.lstrip().startswith("Usage: rankscope judge")
    assert _cli("judge", "--help", env={"RANKSCOPE_LANG": "zh"}).stdout.lstrip().startswith("用法：rankscope judge")
    trec = _cli("trec_eval", "--help", env={"RANKSCOPE_LANG": "zh"})
    assert trec.stdout == _cli("trec_eval", "--help", env={}).stdout and "trec_eval" in trec.stdout
    assert not CJK.search(trec.stdout + trec.stderr)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_help_prose_is_never_broken_where_the_source_wraps(lang: str, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """typer's rich markup keeps a docstring's line breaks: in a terminal wide enough, each paragraph of a command's
    help is one line that ends a sentence (or introduces the examples), never a line cut where the source wraps;
    the list of commands shows each one's summary whole."""
    broken = []
    for path in PATHS:
        text = _help(path, lang, capsys, monkeypatch, width=400)
        description = text.split("╭")[0].splitlines()[2:]  # after the usage line, before the first panel
        broken += [f"{path}: {line.strip()}" for line in description
                   if line.strip() and not line.strip().startswith("rankscope ")
                   and not line.strip().endswith((".", ":", ")", "。", "：", "）"))]
    assert not broken, "\n".join(broken)
    top = _help("", lang, capsys, monkeypatch, width=400)
    summaries = top[top.index("╭─ " + ("Commands" if lang == "en" else "命令")):].splitlines()
    cut = [line.strip("│ ") for line in summaries
           if line.startswith("│") and not line.strip("│ ").endswith((".", ")", "。", "）"))]
    assert not cut, "\n".join(cut)
