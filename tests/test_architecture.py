"""The layout's rules that import-linter cannot state: small modules, and nothing reached
around the judge seam. The layers and the absence of cycles are import-linter's contracts in
pyproject.toml (`lint-imports`, run by .ci/run and by `test_layers_hold` below)."""

from __future__ import annotations

import ast
import shutil
import subprocess
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "offline_scorer"
MAX_LINES = 400


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def test_no_module_over_400_lines():
    long = {
        name: n
        for name, path in _modules().items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_no_benchmark_module_over_400_lines():
    """The benchmarks are a package held to the same size as the library's modules."""
    long = {
        path.name: n
        for path in sorted((PACKAGE.parent / "benchmarks").glob("*.py"))
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_only_the_test_configuration_touches_sys_path():
    """Code reaches the library, the benchmarks and the test helpers as packages (run from the
    repository root, or with it on $PYTHONPATH): tests/conftest.py alone puts the test-only
    scorer kind on the path, as an installed plugin would be."""
    root = PACKAGE.parent
    touching = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        skipped = {".venv", "node_modules"}
        if relative.parts[0].startswith(".") or skipped & set(relative.parts):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "path"
                and isinstance(node.value, ast.Name)
                and node.value.id == "sys"
            ):
                touching.append(f"{relative}:{node.lineno}")
    assert {entry.split(":")[0] for entry in touching} <= {"tests/conftest.py"}, touching


MAX_FUNCTION_LINES = 60


def test_no_function_over_60_lines():
    long = {
        f"{name}.{node.name}": length
        for name, path in _modules().items()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (length := node.end_lineno - node.lineno + 1) > MAX_FUNCTION_LINES
    }
    assert long == {}


def test_nothing_is_forwarded_across_the_judge_seam():
    """No `__getattr__` anywhere, and no `getattr` on judges: the protocol is the contract."""
    offenders = []
    for name, path in _modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
                offenders.append(f"{name}: defines __getattr__")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "getattr"
                and "judge" in ast.unparse(node.args[0]).lower()
            ):
                offenders.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    assert offenders == []


def test_layers_hold():
    """The layers of docs/architecture.md, as pyproject.toml's import-linter contracts."""
    tool = shutil.which("lint-imports")
    assert tool is not None, "import-linter is a dev dependency: run scripts/setup"
    proc = subprocess.run(
        [tool, "--no-cache"], cwd=PACKAGE.parent, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
