"""Every public module of gpuscale says what it exports, both ways: every name in its
``__all__`` exists, and every public name it defines is in its ``__all__`` (as httpx's
``tests/test_exported_members.py`` checks ``httpx.__all__`` against ``vars(httpx)``). A
name the module defines for itself only starts with an underscore. Plus a sorted
``__all__`` and a module docstring (STYLE.md: "a sorted ``__all__`` in every public module;
module docstrings that say why and where the module sits").

"Defines" is read from the syntax tree: the module's top-level ``def``, ``class`` and
assignments (type variables aside). Imported names are not counted, so a package
re-exports by listing, and a module may import a helper without exporting it.

A module is public when no part of its dotted name starts with an underscore. The modules
are found by walking the installed package, so a new module is checked without being listed
here. A private module that declares ``__all__`` anyway gets the same check of it. The order
is the one ruff's RUF022 keeps ("isort-style": SCREAMING_CASE names, then CamelCase, then
the rest, each in natural order); checking it here too keeps the rule when ruff's
configuration changes.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
import re
from pathlib import Path

import pytest

import gpuscale


def _modules() -> list[str]:
    found = ["gpuscale"] + [
        info.name for info in pkgutil.walk_packages(gpuscale.__path__, prefix="gpuscale.")
    ]
    # __main__ runs the command line when imported
    return sorted(name for name in found if not name.endswith(".__main__"))


def _private(name: str) -> bool:
    return any(part.startswith("_") for part in name.split("."))


def _declares_all(name: str) -> bool:
    """Whether the module's source assigns ``__all__`` (read, not imported)."""
    spec = importlib.util.find_spec(name)
    assert spec is not None
    assert spec.origin is not None
    return re.search(r"^__all__\b", Path(spec.origin).read_text(), re.M) is not None


def _is_type_variable(value: ast.expr) -> bool:
    """``T = TypeVar("T")``: typing plumbing, named by convention, not an export."""
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in ("TypeVar", "ParamSpec", "TypeVarTuple")
    )


def _defined(name: str) -> list[str]:
    """Public names the module's own top-level statements bind (``__all__`` aside)."""
    spec = importlib.util.find_spec(name)
    assert spec is not None
    assert spec.origin is not None
    tree = ast.parse(Path(spec.origin).read_text())
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign) and not _is_type_variable(node.value):
            names.extend(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return [n for n in names if not n.startswith("_")]


PUBLIC_MODULES = [name for name in _modules() if not _private(name)]
PRIVATE_WITH_ALL = [name for name in _modules() if _private(name) and _declares_all(name)]


def _isort_key(name: str) -> tuple[int, list[int | str]]:
    """RUF022's order: constants, then classes, then the rest; natural order in each."""
    if len(name) > 1 and name.isupper():
        group = 0
    elif name[:1].isupper():
        group = 1
    else:
        group = 2
    return group, [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def test_the_walk_finds_the_packages_and_their_modules() -> None:
    for name in ("gpuscale", "gpuscale.errors", "gpuscale.sim.flap", "gpuscale.lint.query"):
        assert name in PUBLIC_MODULES
    assert not [name for name in PUBLIC_MODULES if "._" in name]
    assert "gpuscale.app._server" in PRIVATE_WITH_ALL


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_a_public_module_has_a_docstring_and_all(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__doc__, f"{name} has no module docstring"
    assert hasattr(module, "__all__"), f"{name} has no __all__"


@pytest.mark.parametrize("name", PUBLIC_MODULES + PRIVATE_WITH_ALL)
def test_all_is_sorted_and_resolves(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert all(isinstance(member, str) for member in exported)
    assert len(exported) == len(set(exported)), f"{name}.__all__ has duplicates"
    assert exported == sorted(exported, key=_isort_key), f"{name}.__all__ is not sorted"
    missing = [member for member in exported if not hasattr(module, member)]
    assert missing == [], f"{name}.__all__ names what it does not define"


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_public_name_a_module_defines_is_exported(name: str) -> None:
    module = importlib.import_module(name)
    unlisted = [member for member in _defined(name) if member not in module.__all__]
    assert unlisted == [], (
        f"{name} defines {unlisted} without listing them in __all__: export them, or start "
        "their names with an underscore"
    )


def test_fixtures_are_not_part_of_the_package() -> None:
    assert "gpuscale.sim.worlds" not in _modules()
    assert importlib.util.find_spec("tests.unit.sim.worlds") is not None


@pytest.mark.parametrize(
    ("names", "ordered"),
    [
        (["b", "A", "C_D", "Ab"], ["C_D", "A", "Ab", "b"]),
        (["x10", "x9", "X"], ["X", "x9", "x10"]),
    ],
)
def test_the_order_is_ruffs(names: list[str], ordered: list[str]) -> None:
    assert sorted(names, key=_isort_key) == ordered


def test_package_exports_match_errors() -> None:
    import gpuscale.errors

    assert set(gpuscale.errors.__all__) <= set(gpuscale.__all__)
