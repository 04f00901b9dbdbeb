"""The packages that import their names on first use (``gpuscale._lazy.lazy_exports``) export
exactly ``__all__``, each name from the module their ``TYPE_CHECKING`` imports name.

Each such package says where a name lives twice: in the imports under ``if
TYPE_CHECKING:`` (for mypy and readers) and in the table given to ``lazy_exports`` (for the
run). Read from the source, both must list exactly ``__all__``, and each name must be the
same object through the package and through either module. (``gpuscale.lint`` reads
``REGISTRY`` through its rules package, whose import fills it.)
"""

from __future__ import annotations

import ast
import importlib
import inspect

import pytest

LAZY_PACKAGES = [
    "gpuscale.manifests",
    "gpuscale.profile",
    "gpuscale.lint",
    "gpuscale.sim",
    "gpuscale.report",
]


def _type_checking_imports(tree: ast.Module) -> dict[str, set[str]]:
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name)
        if node.test.id == "TYPE_CHECKING"
    )
    found: dict[str, set[str]] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom)
        assert node.module is not None
        found.setdefault(node.module, set()).update(alias.name for alias in node.names)
    return found


def _lazy_table(tree: ast.Module) -> dict[str, set[str]]:
    call = next(
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "lazy_exports"
    )
    table = ast.literal_eval(call.args[1])
    return {module: set(names) for module, names in table.items()}


def _homes(table: dict[str, set[str]]) -> dict[str, str]:
    return {member: module for module, names in table.items() for member in names}


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_table_and_type_checking_imports_export_all(name: str) -> None:
    package = importlib.import_module(name)
    tree = ast.parse(inspect.getsource(package))
    table = _lazy_table(tree)
    names = [member for members in table.values() for member in members]
    assert len(names) == len(set(names))
    assert sorted(names) == sorted(package.__all__)
    assert sorted(_homes(_type_checking_imports(tree))) == sorted(package.__all__)


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_every_name_is_the_object_both_places_name(name: str) -> None:
    package = importlib.import_module(name)
    tree = ast.parse(inspect.getsource(package))
    run_homes = _homes(_lazy_table(tree))
    typed_homes = _homes(_type_checking_imports(tree))
    for member in package.__all__:
        value = getattr(package, member)
        assert value is getattr(importlib.import_module(run_homes[member]), member), member
        assert value is getattr(importlib.import_module(typed_homes[member]), member), member
    assert set(package.__all__) <= set(dir(package))


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_an_unknown_name_is_an_attribute_error(name: str) -> None:
    package = importlib.import_module(name)
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = package.no_such_name
    with pytest.raises(ImportError):
        exec(f"from {name} import no_such_name")


def test_the_lint_registry_is_filled_when_read() -> None:
    from gpuscale.lint import REGISTRY, catalogue

    assert len(REGISTRY) == len(catalogue()) > 0
