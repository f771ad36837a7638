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


def _import_cycles(folder: str) -> list[list[str]]:
    """Cycles among the module-level imports of ``folder``'s modules (imports under
    ``if TYPE_CHECKING:`` and inside functions are not module level)."""
    files = {_module_name(p): p for p in (ROOT / folder).rglob("*.py")}
    graph = {
        name: sorted(
            {m for _, m in _imports(p, module_level_only=True) if m in files and m != name}
        )
        for name, p in files.items()
    }
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


def test_the_cycle_check_finds_a_cycle():
    pkg = ROOT / "agents" / "_cycle_probe"
    pkg.mkdir()
    try:
        (pkg / "__init__.py").write_text("")
        (pkg / "a.py").write_text("from agents._cycle_probe.b import x\n")
        (pkg / "b.py").write_text("from agents._cycle_probe.a import y\n")
        found = _import_cycles("agents")
        assert ["agents._cycle_probe.a", "agents._cycle_probe.b", "agents._cycle_probe.a"] in found
    finally:
        for f in pkg.iterdir():
            f.unlink()
        pkg.rmdir()
