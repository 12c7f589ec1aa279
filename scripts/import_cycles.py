"""Count the import cycles of the rankscope package, imports inside functions included.

The graph is grimp's (the one import-linter checks): every ``import`` statement of every module, at module level
or inside a function; ``--type-checking`` adds those under ``if TYPE_CHECKING:`` (annotations only: they never run,
and the contracts in pyproject.toml leave them out too). A cycle is a strongly connected component of more than one
module (or a module importing itself); the script prints each one's modules and the arrows inside it.

    python scripts/import_cycles.py            # the counts and the modules of each cycle
    python scripts/import_cycles.py --arrows   # and every import arrow inside a cycle, with its line

Exit status 1 when there is a cycle.
"""

from __future__ import annotations

import argparse
import sys

import grimp


def strongly_connected(graph: grimp.ImportGraph) -> list[list[str]]:
    """Tarjan's algorithm, iterative (the package is deeper than Python's recursion limit allows for)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph.find_modules_directly_imported_by(root)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph.find_modules_directly_imported_by(nxt))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph.find_modules_directly_imported_by(node):
                    components.append(sorted(component))
    return components


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", default="rankscope")
    parser.add_argument("--arrows", action="store_true", help="print every import arrow inside a cycle")
    parser.add_argument("--type-checking", action="store_true", help="count imports under TYPE_CHECKING too")
    args = parser.parse_args()
    graph = grimp.build_graph(args.package, cache_dir=None, exclude_type_checking_imports=not args.type_checking)
    components = strongly_connected(graph)
    arrows = 0
    for number, component in enumerate(sorted(components, key=len, reverse=True), 1):
        members = set(component)
        inside = [
            (importer, imported)
            for importer in component
            for imported in sorted(graph.find_modules_directly_imported_by(importer))
            if imported in members
        ]
        arrows += len(inside)
        print(f"cycle {number}: {len(component)} modules, {len(inside)} arrows")
        for module in component:
            print(f"    {module}")
        if args.arrows:
            for importer, imported in inside:
                for detail in graph.get_import_details(importer=importer, imported=imported):
                    print(f"    {importer}:{detail['line_number']} -> {imported}   {detail['line_contents']}")
    in_cycles = sum(len(c) for c in components)
    print(
        f"{len(graph.modules)} modules, {len(components)} cycles (strongly connected components), "
        f"{in_cycles} modules in a cycle, {arrows} arrows inside cycles"
    )
    return 1 if components else 0


if __name__ == "__main__":
    sys.exit(main())
