"""The package's layering, checked on its import graph: every ``import capver.X``
(at module level or inside a function) goes to a layer at or below the importer's,
and no modules of one layer import each other in a cycle (imports under
``if TYPE_CHECKING:`` aside).

    errors, grammars, languages,           0  exceptions; the languages' grammars and syntax errors;
    identifiers                               the identifier rules of the PDDL and PRISM exports
    core                                   1  atoms, states, observations, the property syntax
    logic                                  2  BDD and SMT conditions over a vocabulary
    model, synthetic                       3  capability models (rules whose conditions are logic), h̃ and lifted h̃; random ones for tests
    envs, agents, planning                 4  simulators, α, the agents assessed
    engines, introspection                 5  algorithms (lattice, MCQS, verification, planners)
    io                                     6  reading and writing files, presentation
    settings                               7  named assessment settings (glue of the above)
    commands, bench, cli, api, learn_run   8  what users call; a learning run into a run directory

A new import that runs back up fails this test with the file, the line and both
layers, a new cycle with its modules and the lines of its imports, so the next
engineer sees the layering before it erodes.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from pathlib import Path

import capver

PACKAGE = Path(capver.__file__).resolve().parent

LAYERS: dict[str, int] = {
    "capver.errors": 0,
    "capver.grammars": 0,
    "capver.languages": 0,
    "capver.identifiers": 0,
    "capver.core": 1,
    "capver.logic": 2,
    "capver.model": 3,
    "capver.synthetic": 3,
    "capver.envs": 4,
    "capver.agents": 4,
    "capver.planning": 4,
    "capver.engines": 5,
    "capver.introspection": 5,
    "capver.io": 6,
    "capver.settings": 7,
    "capver.commands": 8,
    "capver.bench": 8,
    "capver.cli": 8,
    "capver.api": 8,
    "capver.learn_run": 8,
    "capver.__main__": 8,
    "capver": 8,
}


def layer_of(module: str) -> int:
    parts = module.split(".")
    for k in range(len(parts), 0, -1):
        name = ".".join(parts[:k])
        if name in LAYERS:
            return LAYERS[name]
    raise AssertionError(f"{module}: no layer declared; add it to LAYERS")


def module_name(path: Path, package: Path) -> str:
    rel = path.relative_to(package.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.parts[-1] == "__init__" else rel.parts
    return ".".join(parts)


def capver_imports(path: Path, package: Path, *, runtime_only: bool = False) -> list[tuple[int, str]]:
    """(line, module) for every capver module ``path`` imports, at module level or
    inside a function; with ``runtime_only`` not those under ``if TYPE_CHECKING:``,
    which never run."""
    out = []
    for node in _walk(ast.parse(path.read_text(encoding="utf-8")), runtime_only):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            # `from capver.model import capability_model` imports the submodule.
            out += [(node.lineno, n) for n in names if n.startswith("capver") and _is_module(n, package)]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("capver")]
    return out


def _walk(tree: ast.AST, runtime_only: bool) -> Iterator[ast.AST]:
    """ast.walk, leaving out the bodies of ``if TYPE_CHECKING:`` when ``runtime_only``."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if runtime_only and isinstance(node, ast.If) and _is_type_checking(node.test):
            todo += [node.test, *node.orelse]
        else:
            todo += ast.iter_child_nodes(node)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _is_module(name: str, package: Path) -> bool:
    path = package.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def violations(package: Path = PACKAGE) -> list[str]:
    found = []
    for path in sorted(package.rglob("*.py")):
        mine = module_name(path, package)
        for line, target in capver_imports(path, package):
            if layer_of(target) > layer_of(mine):
                found.append(
                    f"{path.relative_to(package.parent)}:{line}: {mine} (layer {layer_of(mine)}) "
                    f"imports {target} (layer {layer_of(target)})"
                )
    return found


def import_cycles(package: Path = PACKAGE) -> dict[frozenset[str], str]:
    """Per strongly connected component (its modules), one cycle through it of the import graph among modules
    of the same layer, as ``a -> b (file:line) -> a (file:line)``.  With every import
    going to the importer's layer or below, any cycle lies within one layer.  Imports
    inside functions count (they close the cycle at run time, only later); imports
    under ``if TYPE_CHECKING:`` do not (they never run: that is how a module names a
    type of a module that imports it)."""
    edges: dict[str, dict[str, str]] = {}
    for path in sorted(package.rglob("*.py")):
        mine = module_name(path, package)
        for line, target in capver_imports(path, package, runtime_only=True):
            if target != mine and layer_of(target) == layer_of(mine):
                edges.setdefault(mine, {}).setdefault(target, f"{path.relative_to(package.parent)}:{line}")
    found = {}
    for component in _strongly_connected(edges):
        start = min(component)
        cycle = _cycle_through(start, component, edges)
        steps = " -> ".join(f"{b} ({edges[a][b]})" for a, b in itertools.pairwise(cycle))
        found[component] = f"layer {layer_of(start)}: {start} -> {steps}"
    return found


def _strongly_connected(edges: dict[str, dict[str, str]]) -> list[frozenset[str]]:
    """The components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(frozenset(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def _cycle_through(start: str, component: frozenset[str], edges: dict[str, dict[str, str]]) -> list[str]:
    """A shortest cycle start -> ... -> start inside the component (breadth first)."""
    parent: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(edges.get(v, {})):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return [*reversed(path), start]
                if w in component and w not in parent:
                    parent[w] = v
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"{start}: no cycle in its own strongly connected component")


def test_no_import_runs_back_up() -> None:
    assert violations() == []


def test_no_import_cycle_within_a_layer() -> None:
    assert list(import_cycles().values()) == []


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    # The checker itself must be able to fail: a core module importing an engine.
    fake = tmp_path / "capver"
    for rel, text in {
        "__init__.py": "",
        "core/__init__.py": "",
        "engines/__init__.py": "",
        "engines/lattice.py": "",
        "core/probe.py": "import capver.errors\nfrom capver.engines.lattice import LatticeBuilder\n",
    }.items():
        (fake / rel).parent.mkdir(parents=True, exist_ok=True)
        (fake / rel).write_text(text, encoding="utf-8")
    assert violations(fake) == [
        "capver/core/probe.py:2: capver.core.probe (layer 1) imports capver.engines.lattice (layer 5)",
    ]


def test_the_check_sees_import_cycles(tmp_path: Path) -> None:
    # The cycle check must be able to fail: a cycle closed by an import inside a
    # function, one through three modules, and none from an import under TYPE_CHECKING.
    fake = tmp_path / "capver"
    for rel, text in {
        "__init__.py": "",
        "core/__init__.py": "",
        "model/__init__.py": "",
        "engines/__init__.py": "",
        "core/a.py": "import capver.core.b\n",
        "core/b.py": "import capver.errors\n\n\ndef f():\n    from capver.core import a\n",
        "engines/e1.py": "from capver.engines.e2 import X\n",
        "engines/e2.py": "from capver.core.a import Y\nfrom capver.engines import e3\n",
        "engines/e3.py": "import capver.engines.e1\n",
        "model/p.py": "from capver.model.q import Q\n",
        "model/q.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from capver.model.p import P\n",
    }.items():
        (fake / rel).parent.mkdir(parents=True, exist_ok=True)
        (fake / rel).write_text(text, encoding="utf-8")
    assert violations(fake) == []
    assert import_cycles(fake) == {
        frozenset(
            {"capver.core.a", "capver.core.b"}
        ): "layer 1: capver.core.a -> capver.core.b (capver/core/a.py:1) -> capver.core.a (capver/core/b.py:5)",
        frozenset(
            {"capver.engines.e1", "capver.engines.e2", "capver.engines.e3"}
        ): "layer 5: capver.engines.e1 -> capver.engines.e2 (capver/engines/e1.py:1) "
        "-> capver.engines.e3 (capver/engines/e2.py:2) -> capver.engines.e1 (capver/engines/e3.py:1)",
    }


def test_every_module_has_a_layer() -> None:
    for path in PACKAGE.rglob("*.py"):
        layer_of(module_name(path, PACKAGE))


def test_a_command_starts_without_the_sparse_engines_scipy() -> None:
    """Every capver command imports the verification engines; scipy (0.27 s of a
    command's start) is imported only by the sparse engine's functions that solve."""
    import subprocess
    import sys

    probe = (
        "import sys, capver.cli, capver.settings, capver.io.certificate, capver.engines.verification.checkers\n"
        "print(sorted(m for m in sys.modules if m == 'scipy' or m.startswith('scipy.')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out
