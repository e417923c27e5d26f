"""The package's layering, checked on its import graph: every ``import capver.X``
(at module level or inside a function) goes to a layer at or below the importer's.

    errors, grammars, languages            0  exceptions; the languages' grammars and syntax errors
    core                                   1  atoms, states, observations, the property syntax
    logic                                  2  BDD and SMT conditions over a vocabulary
    model, synthetic                       3  capability models (rules whose conditions are logic), lifted h̃; random ones for tests
    envs, agents, planning                 4  simulators, α, the agents assessed
    engines, introspection                 5  algorithms (lattice, MCQS, verification, planners)
    io                                     6  reading and writing files, presentation
    settings                               7  named assessment settings (glue of the above)
    commands, bench, cli, api              8  what users call

A new import that runs back up fails this test with the file, the line and both
layers, so the next engineer sees the layering before it erodes.
"""

from __future__ import annotations

import ast
from pathlib import Path

import capver

PACKAGE = Path(capver.__file__).resolve().parent

LAYERS: dict[str, int] = {
    "capver.errors": 0,
    "capver.grammars": 0,
    "capver.languages": 0,
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


def capver_imports(path: Path, package: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            # `from capver.model import capability_model` imports the submodule.
            out += [(node.lineno, n) for n in names if n.startswith("capver") and _is_module(n, package)]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("capver")]
    return out


def _is_module(name: str, package: Path) -> bool:
    path = package.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def violations(package: Path = PACKAGE) -> list[str]:
    found = []
    for path in sorted(package.rglob("*.py")):
        mine = module_name(path, package)
        for line, target in capver_imports(path, package):
            if layer_of(target) > layer_of(mine):
                found.append(f"{path.relative_to(package.parent)}:{line}: {mine} (layer {layer_of(mine)}) "
                             f"imports {target} (layer {layer_of(target)})")
    return found


def test_no_import_runs_back_up() -> None:
    assert violations() == []


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    # The checker itself must be able to fail: a core module importing an engine.
    fake = tmp_path / "capver"
    for rel, text in {
        "__init__.py": "", "core/__init__.py": "", "engines/__init__.py": "", "engines/lattice.py": "",
        "core/probe.py": "import capver.errors\nfrom capver.engines.lattice import LatticeBuilder\n",
    }.items():
        (fake / rel).parent.mkdir(parents=True, exist_ok=True)
        (fake / rel).write_text(text, encoding="utf-8")
    assert violations(fake) == [
        "capver/core/probe.py:2: capver.core.probe (layer 1) imports capver.engines.lattice (layer 5)",
    ]


def test_every_module_has_a_layer() -> None:
    for path in PACKAGE.rglob("*.py"):
        layer_of(module_name(path, PACKAGE))
