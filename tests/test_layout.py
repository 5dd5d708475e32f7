"""The package's shape: the flow is visible from the folders, imports form no circle, modules stay small."""

from __future__ import annotations

import ast
from pathlib import Path

from helpers import REPO

PACKAGE = REPO / "cosim"
FLOW = ["readers", "counters", "models", "timeline", "plots", "dse", "explore", "fit", "kernels", "cli"]


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """cosim module -> the cosim modules it imports, anywhere in its body (function-level imports included)."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            edges |= {t for t in targets if t in modules and t != name}
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_import_graph_has_no_cycle():
    graph = import_graph()
    assert len(graph) > 40
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_only_the_public_api_is_at_the_top_level():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    # the API, numpy tables passed between steps without pandas, the two error types, atomic file writing,
    # the one place that resolves a gem5 run for every command (run.py), and its GPU counterpart (gpu_input.py),
    # one call per command for Python users (api.py), the one progress reporter of every long command (progress.py)
    assert top == ["__init__.py", "api.py", "columns.py", "errors.py", "gpu_input.py", "output.py", "progress.py", "run.py"]
    assert all((PACKAGE / step / "__init__.py").exists() for step in FLOW)


def test_readers_counters_and_models_do_not_reach_up_the_flow():
    """readers -> counters -> models -> timeline -> dse/fit -> cli: an earlier step never imports a later one."""
    graph = import_graph()
    order = {
        step: i for i, step in enumerate(["readers", "counters", "models", "timeline", "plots", "dse", "explore", "fit", "kernels", "cli"])
    }

    def step(module: str) -> str | None:
        parts = module.split(".")
        return parts[1] if len(parts) > 1 and parts[1] in order else None

    wrong = [
        (a, b)
        for a, edges in graph.items()
        for b in edges
        if step(a) and step(b) and order[step(b)] > order[step(a)] and step(a) in ("readers", "counters", "models", "timeline")
    ]
    assert wrong == []


def test_no_module_is_a_wall():
    sizes = {p.relative_to(REPO).as_posix(): len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}
    assert max(sizes.values()) <= 450, sorted(sizes.items(), key=lambda kv: -kv[1])[:3]
