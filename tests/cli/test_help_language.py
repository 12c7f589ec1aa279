"""``--help`` follows the language: in a zh session ``rankscope --help`` and every ``rankscope COMMAND --help`` say
their help, options and labels in Chinese; the English help is unchanged.

The English is the code's (docstrings, ``help=``, ``show_default=``), extracted as messages in the context ``help``;
the Chinese is in the one catalog.  The guards below fail when a help text the command line shows has no Chinese
entry (say, a help text built at run time, which the catalog's extraction cannot see), or when the catalog keeps a
help text no command shows, so that a new option cannot ship English-only.
"""

from __future__ import annotations

import gettext as stdlib_gettext
import importlib
import inspect
import re
import shlex
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po
from rich.cells import cell_len
from typer.main import get_command

from clirun import cli
from prose import CJK, MIXED, assert_chinese, english_left
from rankscope import i18n
from rankscope.cli.app import COMMAND_MODULES, app, main
from rankscope.cli.help import HELP_OPTION, commands, said

for _module in COMMAND_MODULES:
    importlib.import_module(_module)

TREE = list(commands(get_command(app)))
#: every command whose --help typer prints (``rankscope trec_eval --help`` is trec_eval's own usage text)
PATHS = [path for path, _ in TREE if path != "trec_eval"]
WIDTH = 100
SRC = Path(__file__).resolve().parents[2] / "src"
#: the labels of a help page (not a command's or an option's text)
LABELS = ("Usage: {command}", "Arguments", "Options", "Commands", "[default: {value}]", "({phrase})", "[required]",
          HELP_OPTION)


@cache
def po() -> Catalog:
    with (SRC / "rankscope" / "locale" / "zh" / "LC_MESSAGES" / "rankscope.po").open("rb") as handle:
        return read_po(handle)


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


def _shown() -> Iterator[tuple[str, str]]:
    """(where, English) of every help text the command line shows: commands' help, options' help and the phrases of
    their defaults."""
    for path, cmd in TREE:
        name = f"rankscope {path}".strip()
        if cmd.help:
            yield f"`{name}`", inspect.cleandoc(cmd.help)
        for param in cmd.params:
            if getattr(param, "help", None):
                yield f"`{name}` {param.opts[0]}", inspect.cleandoc(param.help)
            if isinstance(param.show_default, str):
                yield f"`{name}` {param.opts[0]} (its default)", param.show_default


def test_every_command_and_option_has_its_chinese() -> None:
    problems = []
    for where, english in _shown():
        entry = po().get(english, context="help")
        if entry is None or not entry.string or entry.fuzzy:
            problems.append(f"{where}: no Chinese for {english!r} in the catalog (run make catalog, fill its msgstr)")
    assert not problems, "\n".join(problems)


def test_the_catalog_keeps_no_help_that_is_gone() -> None:
    shown = {english for _, english in _shown()} | set(LABELS)
    gone = [m.id for m in po() if m.context == "help" and m.id not in shown]
    assert not gone, f"help texts of the catalog no command shows: {gone}"


def test_the_examples_are_kept_as_they_are_and_the_prose_is_chinese() -> None:
    for path, cmd in TREE:
        if not cmd.help:
            continue
        en, zh = inspect.cleandoc(cmd.help), said(cmd.help, "zh")
        assert _examples(zh, "示例：") == _examples(en, "Examples:"), path
        assert ("Examples:" in en) == ("示例：" in zh) and "Examples:" not in zh, path
        assert_chinese(zh.partition("示例：")[0])
        for param in cmd.params:
            if getattr(param, "help", None):
                help_zh = said(param.help, "zh")
                assert CJK.search(help_zh) and not MIXED.search(help_zh), (path, param.name, help_zh)
            if isinstance(param.show_default, str):  # a phrase in Chinese; a value (1GiB, holm, a metric list) as is
                default = said(param.show_default, "zh")
                assert (CJK.search(default) or not english_left(default)) and not MIXED.search(default), default
    for label in LABELS:
        zh = i18n.gettext(label, "zh", context="help")
        assert (CJK.search(zh) or zh == "（{phrase}）") and not MIXED.search(zh), label  # a phrase: full width


@pytest.mark.parametrize("path", PATHS, ids=[p or "rankscope" for p in PATHS])
def test_help_in_chinese(path: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    zh = _help(path, "zh", capsys, monkeypatch)
    name = f"rankscope {path}".strip()
    assert_chinese(zh, allowed=(name, "--runs A B C", "JSON Lines"))  # the command's name, metavars, a format
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


@pytest.mark.slow
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
    monkeypatch.setattr(i18n, "catalog", lambda lang: stdlib_gettext.NullTranslations())  # no translations
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


@pytest.mark.slow
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
