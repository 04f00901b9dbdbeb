"""Safe reads from manifest bodies, which may hold anything a user typed.

Every helper returns ``None`` (or an empty container) instead of raising when a value has
the wrong type, so a rule written with them cannot crash on a malformed or templated
manifest; it just finds nothing to say. They are for raw parts of a body that no typed
view of :mod:`gpuscale.manifests` or :mod:`gpuscale.controllers.keda` reads; placeholders
are recognised by :func:`gpuscale.manifests.is_templated`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpuscale.manifests import KeyPath

__all__ = [
    "as_int",
    "as_map",
    "as_str",
    "dig",
    "iter_list",
    "iter_map",
]


def dig(body: Any, path: KeyPath) -> Any:
    """The value at ``path`` in ``body``, or ``None`` when any step is missing or mistyped."""
    node = body
    for step in path:
        if isinstance(step, int):
            if not isinstance(node, list) or not -len(node) <= step < len(node):
                return None
            node = node[step]
        else:
            if not (isinstance(node, dict | Mapping)) or step not in node:
                return None
            node = node[step]
    return node


def as_map(value: Any) -> Mapping[str, Any] | None:
    """``value`` if it is a mapping, else ``None``."""
    # Bodies are plain dicts: test for dict first, the abstract Mapping check is slower.
    return value if isinstance(value, dict | Mapping) else None


def as_str(value: Any) -> str | None:
    """``value`` if it is a string, else ``None``."""
    return value if isinstance(value, str) else None


def as_int(value: Any) -> int | None:
    """``value`` if it is an integer (not a bool), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def iter_map(value: Any) -> Iterator[tuple[str, Any]]:
    """The string-keyed items of ``value`` if it is a mapping; nothing otherwise."""
    if isinstance(value, dict | Mapping):
        for key, item in value.items():
            if isinstance(key, str):
                yield key, item


def iter_list(value: Any) -> Iterator[tuple[int, Any]]:
    """``(index, item)`` for ``value`` if it is a list; nothing otherwise."""
    if isinstance(value, list):
        yield from enumerate(value)
