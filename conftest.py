"""Every code block of README.md, README.zh-CN.md and docs/**/*.md runs in the test suite (sybil).

Each page runs in its own temporary folder ``<tmp>/work`` beside a link ``<tmp>/shared`` to the real data,
so ``../shared/data/...`` in a page means what it means beside the repository; the folder holds a copy of
``examples/`` (what a clone holds) and nothing else: a file a page uses (``qrels.txt``, ``bm25.run``,
``spans.jsonl``, ``mymodule.py`` ...) is made by an earlier example of the same page, as a reader would
make it. Blocks, by the language of their fence:

* ``python`` — executed, one namespace per page, in order (a block starting with ``>>>`` is a doctest);
  ``pycon`` — a doctest (the output shown must be the output printed);
* ``bash`` / ``sh`` / ``shell`` — each ``rankscope ...`` command runs (in-process, the worktree's code)
  and must exit 0 (``rankscope check``: 0 or 1, its verdict); a ``text`` block right after a command
  is that command's output, compared line by line; ``console`` — ``$ rankscope ...`` lines, each
  followed by the output it prints;
* ``json`` — parses (each line, or the whole block); ``yaml`` — parses;
* ``bash llm`` / ``python llm`` — a real LLM endpoint: each ``rankscope judge`` / ``synth`` command
  runs as written with ``--dry-run`` (nothing is sent), then against a local stand-in server in
  place of ``--base-url``; lines starting a server (``vllm serve``, ``ollama pull``) are not run;
  ``python llm`` blocks get the stand-in's URL for ``http://localhost:8000/v1``;
* ``bash serve`` — ``rankscope serve``: the service is started on a free port (SQLite in the page's
  folder) and ``python service`` blocks run with its address for ``http://127.0.0.1:8000``;
* ``<language> file=PATH`` (``python file=mymodule.py``) — a file the reader saves: written to ``PATH``.

Any other command or language fails: a block that cannot run here (a server, a key, minutes of
work) carries a visible ``<!-- skip: next "why" -->`` before it. ``scripts/doc_blocks.py`` counts them.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from sybil import Document, Example, Region, Sybil
from sybil.evaluators.doctest import DocTestEvaluator
from sybil.parsers.abstract.doctest import DocTestStringParser
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser
from sybil.parsers.markdown.lexers import FencedCodeBlockLexer

# Haystack sends usage telemetry unless told not to: the suite reaches no server but its own
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
# Ray Data polls Prometheus from a thread that outlives the Ray tests (http://localhost:9090 unless told): in a
# worker that runs service tests afterwards that is a host name resolved; an IP literal where nothing listens
os.environ.setdefault("RAY_PROMETHEUS_HOST", "http://127.0.0.1:9")


def _import_anyio_now() -> None:
    """anyio imports its parts on first use and is a pytest plugin, so that import goes through pytest's
    assertion rewriting (an ``ast.parse``); a service thread doing it while the main thread parses a test
    module trips CPython 3.11's check of the parser's recursion depth ("AST constructor recursion depth
    mismatch": a static file served with a cut body). Importing every part here, before any thread starts,
    leaves nothing to import later."""
    import anyio
    import anyio.abc
    import anyio.streams.memory

    for module in (anyio, anyio.abc):
        for name in dir(module):
            getattr(module, name)


_import_anyio_now()

ROOT = Path(__file__).resolve().parent
DATA = (ROOT / ".." / "shared" / "data").resolve()
DL_HARD = DATA / "runs_dl_hard" / "dataset"
DOCTEST_FLAGS = doctest.ELLIPSIS
SHELL = ("bash", "sh", "shell")
LLM_URL, SERVICE_URL = "http://localhost:8000/v1", "http://127.0.0.1:8000"
KINDS = (*SHELL, "console", "text", "json", "yaml", "python", "pycon", "bash llm", "python llm", "bash serve",
         "python service", "<language> file=PATH")
FILE_FENCE = re.compile(r"\w+ file=(\S+)")


# -- the page's folder -------------------------------------------------------------------------------------

def _state(example: Example) -> dict[str, Any]:
    return example.namespace.setdefault("__doc__state", {"last_out": None, "stack": contextlib.ExitStack()})


@pytest.fixture
def doc_workdir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                monkeypatch: pytest.MonkeyPatch) -> Path:
    """The page's own folder (made at its first block), the current directory while a block runs."""
    document: Document = request.node.example.document
    work = document.namespace.get("__doc__work")
    if work is None:
        if not DL_HARD.exists():
            pytest.fail(f"test data missing: {DL_HARD} (the docs need ../shared/data beside the repo)")
        base = tmp_path_factory.mktemp(Path(document.path).stem.replace(".", "-"))
        (base / "shared").symlink_to(DATA.parent, target_is_directory=True)
        work = base / "work"
        work.mkdir()
        shutil.copytree(ROOT / "examples", work / "examples")  # what a clone holds; every other file the page makes
        document.namespace["__doc__work"] = work
    monkeypatch.chdir(work)
    for var in ("OPENAI_API_KEY", "DEEPSEEK_API_KEY"):
        monkeypatch.setenv(var, f"test-key-{var.lower()}")
    return work


def _close(namespace: dict[str, Any]) -> None:
    state = namespace.get("__doc__state")
    if state:
        state["stack"].close()


# -- shell blocks ------------------------------------------------------------------------------------------

def commands(body: str) -> list[str]:
    """The command lines of a shell block: continuation lines joined, comments and blank lines dropped."""
    joined = re.sub(r"\\\n\s*", " ", body)
    return [shlex.join(words) for words in (shlex.split(line, comments=True) for line in joined.splitlines()) if words]


class _Tee(io.StringIO):
    """stdout (or stderr) of a command that also goes to the terminal-like buffer ``both``."""

    def __init__(self, both: io.StringIO) -> None:
        super().__init__()
        self.both = both

    def write(self, text: str) -> int:
        self.both.write(text)
        return super().write(text)


def run_rankscope(cmd: str, check_exit: bool = True) -> tuple[int, str, str]:
    """Run one ``rankscope`` command line in-process: (exit code, stdout, stdout and stderr as a terminal shows
    them). Unless ``check_exit`` is false, the command must exit 0 (``rankscope check``: 0 or 1, its verdict)."""
    args = shlex.split(cmd, comments=True)
    if args[0] != "rankscope":
        raise AssertionError(f"not a rankscope command: {cmd!r} (mark the block <!-- skip: next \"why\" -->)")
    from rankscope.cli.app import main

    both = io.StringIO()
    out, err = _Tee(both), _Tee(both)
    code = 0
    # the pages show output wrapped at 100 columns, whatever the terminal
    with mock.patch.dict(os.environ, COLUMNS="100"), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(args[1:])
        except SystemExit as stop:
            code = 0 if stop.code is None else stop.code if isinstance(stop.code, int) else 1
    allowed = (0, 1) if args[1:2] == ["check"] else (0,)
    if check_exit and code not in allowed:
        raise AssertionError(f"{cmd}\nexit {code}\n{both.getvalue()[-3000:]}")
    return code, out.getvalue(), both.getvalue()


def same_output(shown: str, got: str, cmd: str) -> None:
    want = [line.rstrip() for line in shown.strip().splitlines()]
    have = [line.rstrip() for line in got.strip().splitlines()]
    if have != want:
        raise AssertionError(f"output of {cmd!r} differs from the page:\n" + "\n".join(have))


def eval_shell(example: Example) -> None:
    state = _state(example)
    for cmd in commands(example.parsed):
        state["last_out"] = (cmd, run_rankscope(cmd)[1])


ASSIGN = re.compile(r"^\s*(\w+)=(\S*)\s*$")


def eval_console(example: Example) -> None:
    """``$ cmd`` lines, each followed by what the terminal shows (stdout and stderr). Besides ``rankscope``,
    a line may set shell variables (``D=path; P=$D/x``, used as ``$D`` later) or show ``echo $?``."""
    variables: dict[str, str] = {}
    code: int | None = None
    for part in re.split(r"^\$ ", example.parsed, flags=re.MULTILINE)[1:]:
        lines = part.splitlines()
        n = 1
        while lines[n - 1].rstrip().endswith("\\"):
            n += 1
        def expand(text: str) -> str:
            return re.sub(r"\$(\w+)", lambda m: variables[m.group(1)], text)

        cmd = re.sub(r"\\\n\s*", " ", "\n".join(lines[:n]))
        shown = "\n".join(lines[n:])
        if all(ASSIGN.match(x) for x in cmd.split(";")):
            for name, value in (ASSIGN.match(x).groups() for x in cmd.split(";")):  # type: ignore[union-attr]
                variables[name] = expand(value)
            continue
        cmd = expand(cmd)
        if cmd.strip() == "echo $?":
            got = str(code)
        else:
            code, _, got = run_rankscope(cmd, check_exit=False)
            if not shown.strip() and code != 0:
                raise AssertionError(f"{cmd}\nexit {code} (no `echo $?` shows it)\n{got[-3000:]}")
        if shown.strip():
            same_output(shown, got, cmd)
    _state(example)["last_out"] = None


def eval_text(example: Example) -> None:
    state = _state(example)
    if state["last_out"] is None:
        raise AssertionError("a text block must follow a command (it shows that command's output)")
    cmd, out = state["last_out"]
    same_output(example.parsed, out, cmd)
    state["last_out"] = None


def eval_json(example: Example) -> None:
    body = example.parsed.strip()
    try:
        json.loads(body)
    except json.JSONDecodeError:
        for line in body.splitlines():
            json.loads(line)


def eval_yaml(example: Example) -> None:
    import yaml

    assert yaml.safe_load(example.parsed) is not None


# -- blocks that talk to a server --------------------------------------------------------------------------

def _tests_on_path() -> None:
    if str(ROOT / "tests") not in sys.path:
        sys.path.insert(0, str(ROOT / "tests"))


def _llm(example: Example) -> Any:
    state = _state(example)
    if "llm" not in state:
        _tests_on_path()
        from labels.fake_llm import FakeLLM

        state["llm"] = state["stack"].enter_context(FakeLLM())
    return state["llm"]


def eval_bash_llm(example: Example) -> None:
    llm, state = _llm(example), _state(example)
    for cmd in commands(example.parsed):
        if cmd.startswith(("vllm ", "ollama ")):
            continue  # starts a real model server: the stand-in plays it
        sent = cmd.startswith(("rankscope judge", "rankscope synth")) and "--dry-run" not in cmd
        if sent:
            run_rankscope(cmd + " --dry-run")
        cmd = re.sub(r"--base-url \S+", f"--base-url {llm.url}", cmd)
        calls = llm.calls
        state["last_out"] = (cmd, run_rankscope(cmd)[1])
        if sent and llm.calls == calls and "0 judged now" not in state["last_out"][1]:
            raise AssertionError(f"{cmd}: the endpoint was never called")


def _python(example: Example, old: str, new: str) -> None:
    code = compile(example.parsed.replace(old, new), example.path, "exec")
    exec(code, example.namespace)
    _state(example)["last_out"] = None


def eval_python_llm(example: Example) -> None:
    _python(example, LLM_URL, _llm(example).url)


def eval_bash_serve(example: Example) -> None:
    cmds = commands(example.parsed)
    assert [c.split()[:2] for c in cmds] == [["rankscope", "serve"]], "a `bash serve` block holds `rankscope serve`"
    _tests_on_path()
    from service.live_server import LiveServer

    state = _state(example)
    state["service"] = state["stack"].enter_context(LiveServer(f"sqlite:///{Path.cwd() / 'service.sqlite3'}"))


def eval_python_service(example: Example) -> None:
    server = _state(example).get("service")
    assert server is not None, "a `python service` block needs a `bash serve` block before it"
    _python(example, SERVICE_URL, server.url)


def eval_python(example: Example) -> None:
    _python(example, "", "")


def eval_file(example: Example) -> None:
    """A ``<language> file=PATH`` block: the file the page asks the reader to save, written to ``PATH``."""
    match = FILE_FENCE.fullmatch(example.region.lexemes["arguments"].strip())
    assert match is not None
    path = Path(match.group(1))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(str(example.region.lexemes["source"]), encoding="utf-8")
    _state(example)["last_out"] = None


def unknown_kind(example: Example) -> None:
    raise AssertionError(f"no rule runs a {example.region.lexemes.get('arguments')!r} block: use one of {KINDS}"
                         " or mark it <!-- skip: next \"why\" -->")


# -- parsers -----------------------------------------------------------------------------------------------

class PyconParser:
    """``pycon`` fences: a doctest session."""

    def __init__(self) -> None:
        self.blocks = CodeBlockParser("pycon")
        self.doctest = DocTestStringParser(DocTestEvaluator(DOCTEST_FLAGS))

    def __call__(self, document: Document) -> Iterator[Region]:
        for region in self.blocks(document):
            for found in self.doctest(region.parsed, document.path):
                found.adjust(region, region.parsed)
                yield found


class OtherParser:
    """Every fence whose language no rule runs (none given included): a failing example, never a silent skip."""

    def __init__(self) -> None:
        self.lexer = FencedCodeBlockLexer(language=r".*", mapping={"language": "arguments", "source": "source"})

    def __call__(self, document: Document) -> Iterator[Region]:
        for region in self.lexer(document):
            kind = region.lexemes["arguments"].strip()
            if FILE_FENCE.fullmatch(kind):
                region.evaluator = eval_file
                yield region
            elif kind not in KINDS:
                region.evaluator = unknown_kind
                yield region


EVALUATORS: dict[str, Callable[[Example], None]] = {
    **dict.fromkeys(SHELL, eval_shell), "console": eval_console, "text": eval_text, "json": eval_json,
    "yaml": eval_yaml, "bash llm": eval_bash_llm, "python llm": eval_python_llm, "bash serve": eval_bash_serve,
    "python service": eval_python_service,
}
PARSERS: list[Any] = [
    SkipParser(), PythonCodeBlockParser(doctest_optionflags=DOCTEST_FLAGS), PyconParser(), OtherParser(),
    *(CodeBlockParser(kind, evaluator) for kind, evaluator in EVALUATORS.items()),
]
DOC_PATTERNS = ["README.md", "README.zh-CN.md", "docs/*.md", "docs/*/*.md"]

pytest_collect_file = Sybil(
    parsers=PARSERS, patterns=DOC_PATTERNS, fixtures=["doc_workdir"], teardown=_close,
).pytest()


# The fast tier: ``pytest -m "not slow"`` leaves out what needs a browser, a database server, a Ray cluster, a model
# or a network server, and what takes more than a few seconds. Tests carry ``@pytest.mark.slow`` themselves; the
# pages below (every block of them runs as one test per block) and the whole files below are marked here, by path,
# with the reason. ``make test`` runs every tier.
SLOW_PATHS: dict[str, str] = {
    "README.md": "its walk-through runs the demo, the service and the reports (about 30 s)",
    "README.zh-CN.md": "its walk-through runs the demo and the reports (about 25 s)",
    "docs/labels.md": "LLM judging of whole pools (about 55 s)",
    "docs/chunking.md": "compares chunkings of a real corpus (about 50 s)",
    "docs/scale.md": "scores runs of millions of rows (about 27 s)",
    "docs/zh/README.md": "its walk-through runs the demo and the reports (about 12 s)",
    "docs/statistics.md": "bootstrap and permutation tests of real runs (about 10 s)",
    "docs/reports.md": "renders every report format (about 10 s)",
    "docs/rag-evaluation.md": "starts a live retriever (about 6 s)",
    "docs/monitoring.md": "feeds a monitor for many rounds (about 4 s)",
    "tests/test_ray.py": "starts a Ray cluster",
    "tests/service/test_browser.py": "drives Chromium",
    "tests/service/test_browser_judging.py": "drives Chromium",
    "tests/service/test_browser_monitors.py": "drives Chromium",
    "tests/service/test_framing.py": "drives Chromium against two servers",
    "tests/report/test_notebook_browser.py": "drives Chromium",
    "tests/report/test_report_html_browser.py": "drives Chromium",
    "tests/report/test_notebook_kernel.py": "starts a Jupyter kernel",
    "tests/service/test_monitor_crash.py": "kills service processes and restarts them",
    "tests/service/test_resume.py": "kills service processes and restarts them",
    "tests/service/test_schema_fuzz.py": "fuzzes a running server",
    "tests/service/test_upload_memory.py": "a network server under upload bombs",
    "tests/service/test_tokens.py": "starts a network server",
    "tests/service/test_monitor_cli.py": "starts a network server",
    "tests/service/test_monitor_otlp.py": "starts a network server",
    "tests/service/test_serve_cli.py": "starts a network server",
    "tests/retrieval/test_e5.py": "runs the e5 model",
    "tests/retrieval/test_e5_frameworks.py": "runs the e5 model in LangChain and LlamaIndex",
    "tests/retrieval/test_haystack.py": "imports Haystack and runs sentence-transformers models",
    "tests/retrieval/test_fusion_ranx.py": "numba compiles ranx's fusion functions on first use",
    "tests/trec_eval/test_agreement_pytrec.py": "thousands of random runs against pytrec_eval (about 16 s)",
    "tests/cli/test_widths.py": "every command and its --help at three widths in two languages",
    "tests/cli/test_demo_command.py": "runs the whole quick demo (about 10 s)",
    "tests/service/test_slow.py": "every test waits on a retriever that takes seconds to answer",
}


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``-m "not slow"``, the files of :data:`SLOW_PATHS` are not even imported: every worker collects every
    file, and some import seconds of libraries (Haystack and torch, ranx and numba) for tests the tier leaves out."""
    if (config.getoption("markexpr") or "").strip() != "not slow":
        return None
    root = Path(str(config.rootpath))
    where = collection_path.relative_to(root).as_posix() if collection_path.is_relative_to(root) else None
    return True if where in SLOW_PATHS else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark slow the tests of :data:`SLOW_PATHS` and every test against a PostgreSQL server."""
    root = Path(str(config.rootpath))
    for item in items:
        path = Path(str(item.path))
        where = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.as_posix()
        reason = SLOW_PATHS.get(where)
        if reason is None and "postgresql" in item.name:
            reason = "needs a PostgreSQL server"
        if reason is not None:
            item.add_marker(pytest.mark.slow(reason=reason))
