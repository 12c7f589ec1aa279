"""Issue 17 §4: a CLI that teaches — version, trec_eval in the command list, click-style help, examples everywhere."""

from __future__ import annotations

import importlib
import re
import shlex
from collections.abc import Iterator
from typing import Any

import pytest
from typer.main import get_command

from clirun import cli
from rankscope import __version__
from rankscope.cli.app import COMMAND_MODULES, app, main

for _module in COMMAND_MODULES:
    importlib.import_module(_module)

ROOT = get_command(app)
PY_TYPES = re.compile(r"<(?:bool|int|float|str|path|list\[[^\]]*\]|[A-Za-z_]+(?:\|[A-Za-z0-9_.-]+)+)>")


def commands(group: Any = ROOT, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    for name, cmd in sorted(getattr(group, "commands", {}).items()):
        if name == "trec_eval":  # its help is trec_eval's own usage text, unchanged
            continue
        yield (*path, name), cmd
        yield from commands(cmd, (*path, name))


ALL = list(commands())


def help_text(path: tuple[str, ...]) -> str:
    result = cli(*path, "--help", width=200)
    assert result.returncode == 0 and not result.stderr, result.stderr
    return result.stdout


def test_version_and_trec_eval_listed(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code in (0, None) and capsys.readouterr().out.strip() == f"rankscope {__version__}"
    top = help_text(())
    line = next(ln for ln in top.splitlines() if "trec_eval" in ln and "drop-in" in ln)
    assert "9.0.8" in line


@pytest.mark.parametrize(("path", "cmd"), ALL, ids=[" ".join(p) for p, _ in ALL])
def test_help_is_click_style_with_defaults_and_examples(path: tuple[str, ...], cmd: Any) -> None:
    text = help_text(path)
    assert not PY_TYPES.search(text), f"Python-type metavar in `rankscope {' '.join(path)} --help`: " \
                                      f"{PY_TYPES.search(text).group()}"  # type: ignore[union-attr]
    for param in cmd.params:
        if getattr(param, "param_type_name", "") != "option" or getattr(param, "is_flag", False) or param.required:
            continue
        if param.name in ("help",):
            continue
        stated = param.default is not None or isinstance(param.show_default, str)
        assert stated, f"rankscope {' '.join(path)} {param.opts[0]}: default not stated"
    if getattr(cmd, "commands", None):  # a group: its subcommands carry the examples
        return
    examples = text.split("Examples:")
    assert len(examples) == 2, f"rankscope {' '.join(path)} --help has no Examples section"
    lines = [ln.strip() for ln in examples[1].splitlines() if ln.strip().startswith("rankscope ")]
    assert 2 <= len(lines) <= 3, lines
    for example in lines:  # each example parses: the command exists and takes these options
        argv = shlex.split(example)[1:]
        assert tuple(argv[: len(path)]) == path, example
        sub = cmd.make_context(" ".join(path), argv[len(path):], resilient_parsing=False)
        assert sub is not None


def test_check_max_drop_help_is_a_sentence() -> None:
    text = " ".join(help_text(("check",)).split())
    assert re.search(r"--max-drop \S+ .*[A-Z][^.]* vs the baseline[^.]*\.", text) or \
        "The largest drop of a metric the run may show against --baseline" in text


def test_import_rankscope_stays_light() -> None:
    """``import rankscope`` (and reading a result) loads neither the notebook/plot/report code nor languages;
    the time itself is measured by bench/bench_core.py (import_time), not here."""
    import subprocess
    import sys

    code = ("import sys, rankscope; heavy = ('matplotlib', 'pandas', 'scipy', 'rich', 'jinja2', 'typer', 'numpy', "
            "'pyarrow', 'rankscope.report', 'rankscope.interpret', 'rankscope.saved', 'rankscope.engine'); "
            "print([m for m in heavy if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
    code = ("import sys, rankscope as rs; q = rs.Qrels.from_dict({'q': {'d': 1}}); "
            "r = rs.evaluate(q, rs.Run.from_ranked_lists({'q': ['d']}), ['mrr']); repr(r); "
            "print([m for m in ('matplotlib', 'jinja2', 'rich', 'rankscope.report.notebook') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
