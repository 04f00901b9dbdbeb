"""Parse ``gpuscale.yaml`` into a :class:`Profile`, with one-line errors naming file:line.

The YAML is read with the manifest loader's parser, which keeps the line of every key;
pydantic's error locations (``("node_pools", 0, "max_nodes")``) are then mapped to the
line of that key (or of its nearest written ancestor, for a missing key), and the first
error, in file order, becomes a :class:`ProfileError` with the fix (a did-you-mean for a
misspelt key). Pure: :func:`gpuscale.inputs.read_profile` reads the file.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from gpuscale.errors import ManifestError, ProfileError
from gpuscale.kube import format_duration
from gpuscale.manifests import KeyPath, Location, format_path, nearest_location, parse_yaml
from gpuscale.profile._model import Profile, _admits, _seconds

__all__ = ["load_profile_text"]

_CATALOGUE_FIELDS = ("gpu", "gpus_per_node", "cpu", "memory", "price_per_hour")


def load_profile_text(text: str, source: str) -> Profile:
    """The profile in ``text`` (named ``source`` in errors). An empty text is all defaults."""
    try:
        documents = parse_yaml(text, source)
    except ManifestError as exc:
        raise ProfileError(exc.message, where=exc.where, fix=exc.fix) from None
    if len(documents) > 1:
        raise ProfileError(
            "a profile is one YAML document, found several",
            where=str(documents[1].start),
            fix="remove the extra --- documents",
        )
    if not documents:
        return Profile.default().located({}, source)
    document = documents[0]
    if not isinstance(document.body, dict):
        raise ProfileError(
            "a profile must be a mapping of sections (cluster, node_pools, ...)",
            where=str(document.start),
            fix="start with e.g. cluster: {provider: doks}",
        )
    try:
        profile = Profile.model_validate(document.body)
    except ValidationError as exc:
        raise _first_error(exc, document.body, document.positions, document.start) from None
    return profile.located(document.positions, source)


def _first_error(
    exc: ValidationError,
    body: dict[str, Any],
    positions: Mapping[KeyPath, Location],
    start: Location,
) -> ProfileError:
    converted: dict[tuple[Location, str, str], KeyPath] = {}
    for error in exc.errors():
        found = _convert(error, body, positions, start)
        converted.setdefault(found, _key_path(error))
    ordered = sorted(converted, key=lambda item: (item[0].line, item[0].column))
    where, message, fix = ordered[0]
    more = len(ordered) - 1
    if more:
        message += f" (and {more} more problem{'s' if more > 1 else ''})"
    return ProfileError(message, where=str(where), fix=fix, key_path=converted[ordered[0]])


def _key_path(error: ErrorDetails) -> KeyPath:
    return tuple(part for part in error["loc"] if isinstance(part, str | int))


def _locate(path: KeyPath, positions: Mapping[KeyPath, Location], start: Location) -> Location:
    return nearest_location(positions, path) or start


def _convert(
    error: ErrorDetails,
    body: dict[str, Any],
    positions: Mapping[KeyPath, Location],
    start: Location,
) -> tuple[Location, str, str]:
    path = _key_path(error)
    kind = error["type"]
    where = _locate(path, positions, start)
    name = format_path(path)
    if kind == "extra_forbidden":
        known = _fields_at(path[:-1])
        key = str(path[-1])
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
        parent = format_path(path[:-1]) if path[:-1] else "the profile"
        fix = f"did you mean {close[0]}?" if close else f"remove it; known keys: {', '.join(known)}"
        return where, f"unknown key {key!r} in {parent}", fix
    if kind == "missing":
        key = str(path[-1])
        parent_path = path[:-1]
        if len(parent_path) == 2 and parent_path[0] == "node_pools" and key in _CATALOGUE_FIELDS:
            size = _value(body, (*parent_path, "size"))
            where = _locate((*parent_path, "size"), positions, start)
            return (
                where,
                f"size {size!r} is not in the catalogue, so {format_path(parent_path)} "
                "must say what its nodes offer",
                "set gpu, gpus_per_node, cpu, memory and price_per_hour on the pool, "
                "or add the size under catalogue:",
            )
        return (
            where,
            f"missing key {key!r} in {format_path(parent_path) or 'the profile'}",
            (f"add {key}: ..."),
        )
    if kind in ("model_type", "model_attributes_type"):
        return where, *_mapping_wanted(path, error.get("input"))
    if kind == "dict_type" and path == ("workloads",):
        return (
            where,
            f"workloads: must be a mapping of Deployment name to its settings, got "
            f"{_shown(error.get('input'))}",
            "write e.g. workloads: {web: {startup_time: 2m, concurrency: 4}}",
        )
    words = {
        "greater_than": "longer than {}",
        "greater_than_equal": "{} or longer",
        "less_than": "shorter than {}",
        "less_than_equal": "{} or shorter",
    }
    if kind in words and _is_duration(path):
        limit = next(iter((error.get("ctx") or {"": 0}).values()))
        bound = words[kind].format(format_duration(float(limit)))
        return (
            where,
            f"{name}: must be {bound}, got {_shown(error.get('input'))}",
            f"write a duration {bound}, such as 30s or 5m",
        )
    if kind in ("float_type", "float_parsing") and _is_duration(path):
        return (
            where,
            f"{name}: expected a duration such as 30s or 5m, got {_shown(error.get('input'))}",
            "write a duration such as 30s, 5m or 1h30m",
        )
    if kind == "literal_error" and isinstance(error.get("input"), str):
        allowed = [str(v) for v in _literal_values(path)]
        if len(allowed) > 4:  # listed in both message and fix, they fill the screen
            return where, *_not_one_of(name, error["input"], allowed)
    message = str(error["msg"])
    if kind == "value_error":
        # A model's cross-field check names the field it is about first
        # ("max_replicas: low 5 ..."): report it at that key's line, under its path.
        field, _, rest = message[len("Value error, ") :].partition(": ")
        if rest and field in _fields_at(path):
            path = (*path, field)
            where, name = _locate(path, positions, start), format_path(path)
            message = rest
    for pydantic_word, ours in (("a valid tuple", "a list"), ("a valid dictionary", "a mapping")):
        message = message.replace(pydantic_word, ours)
    if message.startswith("Input should be "):
        message = "must be " + message[len("Input should be ") :]
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    given = error.get("input")
    if isinstance(given, dict):
        shown = " (got a mapping)"
    elif isinstance(given, list | tuple):
        shown = " (got a list)"
    else:
        written = str(given).lower() if isinstance(given, bool) else repr(given)
        shown = "" if written in message else f" (got {_brief(given)})"
    if " — " in message:
        message, fix = message.split(" — ", 1)
        shown = ""
    else:
        fix = _fix_for(kind, message, name)
    return where, f"{name or 'the profile'}: {message}{shown}", fix


def _not_one_of(name: str, given: str, allowed: list[str]) -> tuple[str, str]:
    """Message and fix for a word that is not one of a field's many values: a
    did-you-mean when one is close, else the values, listed once."""
    close = difflib.get_close_matches(given, allowed, n=1, cutoff=0.6)
    message = f"{name}: {_brief(given)} is not one of its values"
    if close:
        return message, f"did you mean {close[0]}?"
    return message, f"write one of {', '.join(allowed)}"


def _literal_values(path: KeyPath) -> tuple[Any, ...]:
    """The values the Literal field at ``path`` (a list item's too) admits."""
    fields = [part for part in path if isinstance(part, str)]
    parent = _model_at(tuple(path[: max(i for i, p in enumerate(path) if isinstance(p, str))]))
    field = parent.model_fields.get(fields[-1]) if parent is not None and fields else None
    return _literals_in(field.annotation) if field is not None else ()


def _literals_in(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) is typing.Literal:
        return typing.get_args(annotation)
    return tuple(v for argument in typing.get_args(annotation) for v in _literals_in(argument))


def _fix_for(kind: str, message: str, name: str) -> str:
    if kind in ("bool_type", "bool_parsing"):
        return "write true or false"
    if kind == "literal_error" and message.startswith("must be "):
        return "write " + message[len("must be ") :]
    if "duration" in message:
        return "write a duration such as 30s, 5m or 1h30m"
    if "quantity" in message:
        return "write a quantity such as 8Gi or 512Mi"
    if message.startswith("must be "):
        wanted = message[len("must be ") :].split(",", 1)[0]
        if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
            return f"write a value {wanted}"
        return f"write {wanted}"
    return f"change {name}"


def _brief(given: Any) -> str:
    """``given`` as the message shows it: its repr, cut to 40 characters."""
    text = repr(given)
    return text if len(text) <= 40 else f"{text[:30]}... ({len(text)} characters)"


def _shown(given: Any) -> str:
    if isinstance(given, dict):
        return "a mapping"
    return "a list" if isinstance(given, list | tuple) else _brief(given)


def _mapping_wanted(path: KeyPath, given: Any) -> tuple[str, str]:
    """Message and fix for a section (or list item) that is not a mapping, in the
    profile's words rather than pydantic's class names."""
    fields = _fields_at(path)
    leaf = next((str(part) for part in reversed(path) if isinstance(part, str)), "section")
    inner = ", ".join(f"{field}: ..." for field in fields[:2])
    example = f"{{{inner}, ...}}" if inner else "{...}"
    shown = _shown(given)
    name = format_path(path) or "the profile"
    written = f"- {example}" if isinstance(path[-1], int) else f"{leaf}: {example}"
    keys = ", ".join(fields[:6]) + (", ..." if len(fields) > 6 else "")
    return (
        f"{name}: must be a mapping ({written}), got {shown}",
        f"write {name} as a mapping of its keys ({keys})",
    )


def _value(body: Any, path: KeyPath) -> Any:
    node = body
    for part in path:
        if isinstance(node, dict) and isinstance(part, str):
            node = node.get(part)
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            return None
    return node


def _is_duration(path: KeyPath) -> bool:
    """Whether the field at ``path`` holds a duration (``Delay``/``Period``), or is a
    range (``tune.cooldown[0]``) of them."""
    while path and isinstance(path[-1], int) and path[0] == "tune":
        path = path[:-1]
    if not path or not isinstance(path[-1], str):
        return False
    parent = _model_at(path[:-1])
    field = parent.model_fields.get(path[-1]) if parent is not None else None
    if field is None:
        return False
    return _admits(field.annotation, _seconds) or any(
        getattr(m, "func", None) is _seconds for m in field.metadata
    )


def _model_at(path: KeyPath) -> type[BaseModel] | None:
    model: type[BaseModel] | None = Profile
    for part in path:
        if model is None:
            return None
        if isinstance(part, int) or part not in model.model_fields:
            continue
        model = _model_in(model.model_fields[part].annotation)
    return model


def _fields_at(path: KeyPath) -> list[str]:
    """Field names of the model found at ``path`` inside :class:`Profile`."""
    model = _model_at(path)
    return list(model.model_fields) if model is not None else []


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin is None and not isinstance(annotation, types.UnionType):
        return None
    for argument in typing.get_args(annotation):
        found = _model_in(argument)
        if found is not None:
            return found
    return None
