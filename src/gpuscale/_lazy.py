"""Public names of a package, imported from their modules on first use (PEP 562).

Where it sits: ``gpuscale.manifests``, ``gpuscale.profile`` and ``gpuscale.lint`` re-export
names from private modules of very different weight (a constant next to pydantic models,
the lint rules, jsonschema). Importing such a package used to import all of them, so
``gpuscale lint --help`` loaded every rule to read one enum. With :func:`lazy_exports` the
package module holds only the table below; ``from gpuscale.lint import Severity`` imports
the one module that defines ``Severity``, and every name is looked up once.

Each package keeps its imports under ``if TYPE_CHECKING:`` for mypy and readers, and its
sorted ``__all__``; ``tests/unit/test_lazy_exports.py`` checks that the three agree.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, homes: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``, whose public names live
    in the modules ``homes`` maps to them (``{"gpuscale.lint._findings": ("Severity",)}``).
    """
    where = {name: module for module, names in homes.items() for name in names}

    def get_attribute(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def names() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return get_attribute, names
