"""The layering of DESIGN.md, checked two ways: statically (every import statement) and at run
time (importing a layer does not load what it must not)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _imports(path: Path, module_level_only: bool) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    nodes = tree.body if module_level_only else list(ast.walk(tree))
    found = []
    for node in nodes:
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            pkg = ".".join(path.relative_to(ROOT).with_suffix("").parts[: -node.level])
            found.append((node.lineno, f"{pkg}.{node.module}" if node.module else pkg))
    return found


def _violations(folder: str, forbidden: tuple[str, ...], module_level_only: bool) -> list[str]:
    bad = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for line, name in _imports(path, module_level_only):
            if any(name == f or name.startswith(f + ".") for f in forbidden):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    return bad


def test_data_layer_imports_only_numpy_h5py_gymnasium():
    forbidden = (
        "pygame",
        "torch",
        "agents",
        "demostudio.play",
        "demostudio.replay",
        "demostudio.ui",
        "demostudio.cli",
        "demostudio.launcher",
        "demostudio.export",
        "demostudio.controllers",
        "demostudio.interop",
    )
    assert _violations("demostudio/episode", forbidden, module_level_only=False) == []


def test_agents_never_import_the_app():
    forbidden = (
        "pygame",
        "demostudio.play",
        "demostudio.replay",
        "demostudio.ui",
        "demostudio.cli",
        "demostudio.launcher",
        "demostudio.export",
    )
    assert _violations("agents", forbidden, module_level_only=False) == []


def test_app_imports_agents_and_torch_only_lazily():
    assert _violations("demostudio", ("agents", "torch"), module_level_only=True) == []


def test_runtime_imports_stay_in_their_layer():
    code = (
        "import sys, demostudio.episode, demostudio.cli;"
        "demostudio.cli.build_parser();"
        "bad = [m for m in ('torch', 'pygame', 'agents') if m in sys.modules];"
        "print(','.join(bad))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "", f"building the CLI imported {out}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _edges(path: Path, name: str, files: set[str]) -> set[str]:
    """Every module of ``files`` that ``path`` (module ``name``) imports anywhere: at module
    level, under ``if TYPE_CHECKING:`` (a cycle for the type checker is still a cycle) and
    inside functions; ``from pkg import sub`` counts as importing ``pkg.sub``."""
    tree = ast.parse(path.read_text(), str(path))
    is_pkg = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                targets.append(sub if sub in files else module)
        for target in targets:
            if target in files and target != name:
                out.add(target)
    return out


def _import_cycles(folder: str) -> list[list[str]]:
    """Cycles among the imports of ``folder``'s modules (all of them: module level,
    ``TYPE_CHECKING`` and function level)."""
    paths = {_module_name(p): p for p in (ROOT / folder).rglob("*.py")}
    graph = {}
    for name, p in paths.items():
        graph[name] = sorted(_edges(p, name, set(paths)))
    cycles, state = [], {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = "open"
        for nxt in graph[node]:
            if state.get(nxt) == "open":
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    return cycles


def test_no_import_cycle_inside_agents():
    assert _import_cycles("agents") == []


def test_no_import_cycle_inside_demostudio():
    assert _import_cycles("demostudio") == []


def test_the_cycle_check_finds_a_cycle():
    pkg = ROOT / "agents" / "_cycle_probe"
    pkg.mkdir()
    try:
        (pkg / "__init__.py").write_text("")
        (pkg / "a.py").write_text("from agents._cycle_probe.b import x\n")
        (pkg / "b.py").write_text("from agents._cycle_probe.a import y\n")
        (pkg / "c.py").write_text(  # only for the type checker, still a cycle
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from agents._cycle_probe.d import RunContext\n"
        )
        (pkg / "d.py").write_text(  # imported inside a function, still a cycle
            "def f():\n    from agents._cycle_probe import c\n"
        )
        found = _import_cycles("agents")
        assert ["agents._cycle_probe.a", "agents._cycle_probe.b", "agents._cycle_probe.a"] in found
        assert ["agents._cycle_probe.c", "agents._cycle_probe.d", "agents._cycle_probe.c"] in found
    finally:
        for f in pkg.iterdir():
            f.unlink()
        pkg.rmdir()
