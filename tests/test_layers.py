"""The package's layers (docs/architecture.md, "Layers"): the import-linter contracts of pyproject.toml hold, and the
module graph has no import cycle at all (a package's ``__init__`` and its modules included, which the contracts'
sibling check does not see) beyond the few imports the contracts list with their reason."""

from __future__ import annotations

import graphlib
import itertools
import sys
from pathlib import Path

import grimp
import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]


def _graph() -> grimp.ImportGraph:
    return grimp.build_graph("rankscope", cache_dir=None,
                             exclude_type_checking_imports=CONFIG.get("exclude_type_checking_imports", False))


def _allowed() -> set[tuple[str, str]]:
    """The imports the cycle contract ignores, each listed with its reason in pyproject.toml."""
    [acyclic] = [c for c in CONFIG["contracts"] if c["type"] == "acyclic_siblings"]
    return {tuple(part.strip() for part in line.split("->")) for line in acyclic.get("ignore_imports", [])}


def test_the_contracts_hold() -> None:
    from importlinter.cli import lint_imports

    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True) == 0


def test_every_part_of_the_package_is_in_a_layer() -> None:
    """A new module or package at the top of rankscope is placed in the layers, or nothing would check its imports."""
    [layers] = [c for c in CONFIG["contracts"] if c["type"] == "layers"]
    placed = {f"rankscope.{name.strip()}" for line in layers["layers"] for name in line.replace(":", "|").split("|")}
    assert _graph().find_children("rankscope") - placed == set()


def test_no_module_imports_itself_back() -> None:
    graph = _graph()
    allowed = _allowed()
    sorter = graphlib.TopologicalSorter({
        module: {m for m in graph.find_modules_directly_imported_by(module) if (module, m) not in allowed}
        for module in graph.modules
    })
    try:
        sorter.prepare()
    except graphlib.CycleError as exc:
        cycle = exc.args[1]
        lines = [f"{a} -> {b}: line {d['line_number']}: {d['line_contents']}"
                 for a, b in itertools.pairwise(cycle) for d in graph.get_import_details(importer=a, imported=b)]
        pytest.fail("an import cycle (python scripts/import_cycles.py lists them all):\n" + "\n".join(lines))


def test_every_allowed_import_still_exists() -> None:
    """An exception the code no longer needs is taken out of the list (import-linter says so too)."""
    graph = _graph()
    gone = [(a, b) for a, b in _allowed() if not graph.direct_import_exists(importer=a, imported=b)]
    assert not gone


def test_the_data_model_imports_no_display_files_or_retrievers() -> None:
    """The values users hold — a result, a comparison, a test set and the data
    classes — know nothing of reports, notebooks, saved files or retrievers (imports inside functions included)."""
    graph = _graph()
    model = ["rankscope.data", "rankscope.engine", "rankscope.comparison", "rankscope.comparison_inputs"]
    above = ["rankscope.report", "rankscope.interpret", "rankscope.saved", "rankscope.retrieval", "rankscope.display",
             "rankscope.api", "rankscope.labels"]
    found = [(low, high) for low in model for high in above
             if high in graph.modules and graph.chain_exists(importer=low, imported=high, as_packages=True)]
    assert not found


def test_import_rankscope_in_ipython_registers_the_notebook_display() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    import rankscope as rs
    from rankscope.display import TYPES, register_ipython

    shell = InteractiveShell.instance()
    try:
        assert register_ipython(shell)
        formatter = shell.display_formatter.formatters["text/html"]
        qrels = rs.Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d2": 1}})
        a = rs.Run.from_ranked_lists({"q1": ["d0", "d1"], "q2": ["d2"]}, "a")
        b = rs.Run.from_ranked_lists({"q1": ["d1"], "q2": ["d2"]}, "b")
        for value in (rs.evaluate(qrels, a, ["mrr"]), rs.compare(qrels, [a, b], ["mrr"])):
            html = formatter(value)
            assert html is not None and "<table" in html and "mrr" in html
        assert len(TYPES) == 4
    finally:
        InteractiveShell.clear_instance()
    assert "IPython" in sys.modules
