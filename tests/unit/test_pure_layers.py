"""The pure layers open no file and touch no standard stream.

The import-linter contract in ``pyproject.toml`` keeps ``os``, ``sys``, ``pathlib``,
``shutil``, ``tempfile`` and friends out of ``kube``, ``manifests``, ``profile``, ``controllers``,
``promql``, ``sim`` and ``timeline``; but ``open`` and ``input`` are builtins no import
contract can see, and a ``Path`` handed in from outside would still read a file. This test
walks the syntax tree of every module of those layers for such calls; the one allowed
exception reads JSON schemas shipped inside installed packages (``importlib.resources``),
which is loading code's data, not reading a user's file.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import gpuscale

PACKAGE = Path(gpuscale.__file__).parent
PURE = (
    "kube",
    "manifests",
    "profile",
    "controllers",
    "promql",
    "serving",
    "sim",
    "timeline.py",
    "tune/slo.py",
    "tune/space.py",
    "tune/objective.py",
    "tune/references.py",
)

FORBIDDEN_CALLS = {"open", "input", "print", "breakpoint", "exec", "eval", "__import__"}
"""Builtins that read or write files or the terminal, or import by name at run time."""

FORBIDDEN_METHODS = {
    "read_text",
    "read_bytes",
    "write_text",
    "write_bytes",
    "iterdir",
    "glob",
    "rglob",
    "mkdir",
    "unlink",
    "exists",
    "is_file",
    "is_dir",
}
"""``pathlib``-style methods that touch the file system."""

FORBIDDEN_NAMES = {"stdin", "stdout", "stderr"}
"""``sys.stdin`` and friends, however they were reached."""

ALLOWED = {
    ("manifests/_validate.py", "_package_text"),
    ("manifests/_validate.py", "_package_names"),
}
"""(module, function) pairs that read data shipped inside an installed package."""


def _modules() -> list[Path]:
    found: list[Path] = []
    for entry in PURE:
        path = PACKAGE / entry
        found.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return found


def _offences(path: Path, root: Path = PACKAGE) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    relative = path.relative_to(root).as_posix()
    offences: list[str] = []

    def visit(node: ast.AST, function: str | None) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            function = node.name
        allowed = (relative, function) in ALLOWED
        if isinstance(node, ast.Call) and not allowed:
            func = node.func
            if isinstance(func, ast.Name) and func.id in FORBIDDEN_CALLS:
                offences.append(f"{relative}:{node.lineno}: {func.id}(")
            if isinstance(func, ast.Attribute) and func.attr in FORBIDDEN_METHODS:
                offences.append(f"{relative}:{node.lineno}: .{func.attr}(")
        if isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_NAMES:
            offences.append(f"{relative}:{node.lineno}: .{node.attr}")
        if isinstance(node, ast.ImportFrom) and any(
            alias.name in FORBIDDEN_NAMES for alias in node.names
        ):
            offences.append(f"{relative}:{node.lineno}: import of a standard stream")
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, None)
    return offences


def test_the_pure_layers_are_all_found() -> None:
    modules = _modules()
    assert len(modules) > 20
    assert PACKAGE / "manifests" / "_loader.py" in modules
    assert PACKAGE / "timeline.py" in modules


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_a_pure_module_reads_no_file_and_no_stream(path: Path) -> None:
    assert _offences(path) == []


def test_the_search_finds_what_it_forbids(tmp_path: Path) -> None:
    """The walker is not vacuous: each kind of access in a sample module is reported."""
    fake = tmp_path / "gpuscale" / "sim" / "x.py"
    fake.parent.mkdir(parents=True)
    fake.write_text(
        "from sys import stdout\n"
        "import sys\n"
        "def f(p):\n"
        "    open(p)\n"
        "    p.read_text()\n"
        "    return sys.stdin\n"
    )
    assert _offences(fake, tmp_path / "gpuscale") == [
        "sim/x.py:1: import of a standard stream",
        "sim/x.py:4: open(",
        "sim/x.py:5: .read_text(",
        "sim/x.py:6: .stdin",
    ]
