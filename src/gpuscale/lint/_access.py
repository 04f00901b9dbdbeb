"""Safe reads from manifest bodies, which may hold anything a user typed.

Every helper returns ``None`` (or an empty container) instead of raising when a value has
the wrong type, so a rule written with them cannot crash on a malformed or templated
manifest; it just finds nothing to say. ``is_templated`` recognises the placeholders
people leave in manifests (``${VAR}``, ``$VAR``, Helm ``{{ ... }}``, ``<name>``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gpuscale.lint._findings import KeyPath

__all__ = [
    "as_int",
    "as_list",
    "as_map",
    "as_str",
    "dig",
    "is_templated",
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


def as_list(value: Any) -> Sequence[Any] | None:
    """``value`` if it is a list, else ``None``."""
    return value if isinstance(value, list) else None


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


def is_templated(text: str) -> bool:
    """Whether ``text`` holds a placeholder that a person or a tool fills in before applying.

    Recognised: ``${VAR}`` and ``$VAR`` (envsubst, Grafana), ``{{ ... }}`` (Helm, Jinja),
    and ``<name>`` made of letters, digits, ``_``, ``-``, ``.`` and spaces (tutorials'
    ``<your-namespace>``).
    """
    if "{{" in text or "}}" in text or "${" in text:
        return True
    for index, char in enumerate(text[:-1]):
        if char == "$" and (text[index + 1].isalpha() or text[index + 1] == "_"):
            return True
    return _has_angle_placeholder(text)


def _has_angle_placeholder(text: str) -> bool:
    start = text.find("<")
    while start != -1:
        end = start + 1
        while end < len(text) and (text[end].isalnum() or text[end] in "_-. "):
            end += 1
        inner = text[start + 1 : end].strip()
        if end < len(text) and text[end] == ">" and inner and inner[0].isalpha():
            return True
        start = text.find("<", start + 1)
    return False
