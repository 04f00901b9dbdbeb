"""Read manifests from text, keeping the line of every key.

The YAML is composed into ruamel.yaml's node graph (libyaml through
``ruamel.yaml.clib`` when installed, the pure-Python parser otherwise) and turned into
plain data here, so that each key and list item keeps its line and column, and comments
are found exactly (a ``#`` inside a quoted or block scalar, such as a program kept in a
ConfigMap, is not a comment). Plain scalars are typed here too, by the rules of
Kubernetes' own YAML decoder (sigs.k8s.io/yaml on go-yaml v2, ``resolve.go``), which are
YAML 1.1's: ``yes``/``on``/``y`` are booleans, ``0755`` is octal, ``1e3`` a float, and
timestamps stay strings; ruamel's resolver is bypassed, which also makes loading faster.

Aliases are expanded as go-yaml expands them, and limited as it limits them (go-yaml
v2.2.8+/v3 ``decode.go``: ``decoder.alias``, ``allowedAliasRatio``): an anchor whose value
holds an alias of itself is refused (Python would recurse without end), and so is a
document whose aliases expand to far more nodes than it holds ("billion laughs"), which
Kubernetes' decoder refuses too; both are a :class:`~gpuscale.errors.ManifestError`.

Pure: the text comes in as a string; :func:`gpuscale.inputs.read_manifests` reads files,
directories and stdin and calls :func:`load_text`.

Loading never validates: a document with a wrong type or a templated value
(``${replicas}``, ``<deployment_name>``, an unquoted Helm ``{{ .Values.x }}``, which YAML
reads as a nested flow mapping and which is kept here as its source text) loads, and
:func:`gpuscale.manifests.validate` says what is wrong. Only text that is not YAML at all
(or a document that is not a mapping) is a :class:`~gpuscale.errors.ManifestError`,
with ``file:line`` and a fix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.resolver import BaseResolver
from ruamel.yaml.tag import Tag

from gpuscale.errors import ManifestError
from gpuscale.manifests._model import KeyPath, Location, Manifest, format_path

__all__ = ["PROFILE_NAMES", "STDIN", "YamlDocument", "load_text", "parse_yaml"]

STDIN = "<stdin>"
"""The file name manifests read from standard input carry."""

PROFILE_NAMES = ("gpuscale.yaml", "gpuscale.yml")
"""File names of the gpuscale profile, which a directory scan skips (it is not a manifest)."""


@dataclass(frozen=True)
class YamlDocument:
    """One YAML document as plain data, with the location of every key and list item."""

    body: Any
    positions: Mapping[KeyPath, Location]
    start: Location
    comments: Mapping[int, str]


def parse_yaml(text: str, source: str) -> list[YamlDocument]:
    """The non-empty documents of ``text`` as plain data with positions (YAML 1.1 scalars).

    Raises :class:`ManifestError` (``source:line``) for text that is not YAML. The
    profile loader uses this too.
    """
    lines = text.splitlines()
    try:
        roots = [root for root in _parser().compose_all(text) if root is not None]
    except MarkedYAMLError as exc:
        raise _yaml_error(exc, source, lines) from None
    except YAMLError as exc:
        raise ManifestError(f"not valid YAML: {exc}", where=source, fix=_GENERIC_FIX) from None
    except RecursionError:
        raise _too_deep(source) from None
    spans: list[tuple[int, int, int, int]] = []
    built = []
    for root in roots:
        if isinstance(root, ScalarNode) and _scalar(root) is None:
            continue
        if isinstance(root, MappingNode) and _is_template(root):
            raise ManifestError(
                "a Helm template expression stands where a YAML document should start",
                where=f"{source}:{root.start_mark.line + 1}",
                fix="render the chart first (helm template ... | gpuscale ... -) or quote it",
            )
        builder = _Builder(source, lines, spans)
        try:
            body = builder.build(root, ())
        except RecursionError:
            raise _too_deep(f"{source}:{root.start_mark.line + 1}") from None
        start = Location(source, root.start_mark.line + 1, root.start_mark.column + 1)
        built.append((body, builder.positions, start))
    comments = _comments(lines, spans)
    return [YamlDocument(body, positions, start, comments) for body, positions, start in built]


_MERGE_TAG = "tag:yaml.org,2002:merge"
_COMMENT_START = re.compile(r"(?:^|(?<=\s))#")
_PLAIN = Tag(suffix="tag:gpuscale:plain")
_STR = Tag(suffix="tag:yaml.org,2002:str")
_SEQ = Tag(suffix="tag:yaml.org,2002:seq")
_MAP = Tag(suffix="tag:yaml.org,2002:map")
# go-yaml v2 resolve.go: its resolve table and its number syntax.
_BOOLEANS = {
    **dict.fromkeys(
        ("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True
    ),
    **dict.fromkeys(
        ("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False
    ),
}
_NULLS = frozenset(("", "~", "null", "Null", "NULL"))
_SPECIAL_FLOATS = {
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), float("inf")),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), float("-inf")),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), float("nan")),
}
_INT = re.compile(r"[-+]?(?:0b[01_]+|0o[0-7_]+|0x[0-9a-fA-F_]+|0[0-7_]+|[0-9][0-9_]*)")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")


class _DeferredResolver(BaseResolver):
    """Leaves plain scalars untyped (``_PLAIN``) for :func:`_plain` to type."""

    def __init__(self, version: Any = None, loader: Any = None, loadumper: Any = None) -> None:
        super().__init__(loadumper if loadumper is not None else loader)

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Tag:
        if kind is ScalarNode:
            return _PLAIN if implicit[0] else _STR
        return _SEQ if kind is SequenceNode else _MAP

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None

    @property
    def processing_version(self) -> Any:
        return (1, 1)


def _parser() -> YAML:
    yaml = YAML(typ="safe")
    yaml.Resolver = _DeferredResolver
    return yaml


def load_text(text: str, source: str) -> list[Manifest]:
    """The manifests in ``text`` (one or more YAML documents), named as coming from ``source``.

    Empty documents are skipped and ``List`` kinds are flattened into their items.
    Raises :class:`ManifestError` (``source:line``) for text that is not YAML or a
    document that is not a mapping.
    """
    manifests: list[Manifest] = []
    for document in parse_yaml(text, source):
        if not isinstance(document.body, dict):
            raise ManifestError(
                "expected a Kubernetes object (a mapping with apiVersion and kind), "
                f"found {_describe(document.body)}",
                where=str(document.start),
                fix="make each YAML document one object: apiVersion, kind, metadata, spec",
            )
        manifests.extend(_split(document))
    return manifests


_GENERIC_FIX = "check the indentation and quoting on that line"


def _yaml_error(exc: MarkedYAMLError, source: str, lines: list[str]) -> ManifestError:
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark is not None else 1
    problem = exc.problem or exc.context or "not valid YAML"
    context_line = exc.context_mark.line + 1 if exc.context_mark is not None else line
    nearby = " ".join(lines[max(0, min(context_line, line) - 1) : line])
    if "{{" in nearby or "{%" in nearby:
        fix = "quote the template expression, or render the chart first (helm template)"
    elif "\t" in nearby:
        fix = "indent with spaces; YAML does not allow tabs there"
    else:
        fix = _GENERIC_FIX
    message = f"not valid YAML: {problem}"
    if exc.context and context_line != line:
        message += f" ({exc.context} at line {context_line})"
    return ManifestError(message, where=f"{source}:{line}", fix=fix)


def _too_deep(where: str) -> ManifestError:
    return ManifestError(
        "the YAML is nested too deeply to read",
        where=where,
        fix="flatten the structure; Kubernetes objects are never nested this deep",
    )


# go-yaml decode.go: below this many decoded nodes, up to 99 % of them may come from
# alias expansion; above the high mark only 10 %; in between the share falls linearly.
_ALIAS_RATIO_LOW = 400_000
_ALIAS_RATIO_HIGH = 4_000_000


def _allowed_alias_ratio(decoded: int) -> float:
    """go-yaml ``allowedAliasRatio``: the share of decoded nodes aliases may account for."""
    if decoded <= _ALIAS_RATIO_LOW:
        return 0.99
    if decoded >= _ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW)


def _describe(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    return f"the scalar {value!r}"[:60]


def _is_template(node: MappingNode) -> bool:
    """``{{ x }}`` (a flow mapping whose key is itself a mapping): a Helm/Go template."""
    return bool(node.flow_style) and any(not isinstance(key, ScalarNode) for key, _ in node.value)


class _Builder:
    """Turns one document's nodes into plain data, recording the position of each key.

    The composer hands an alias over as the very node its anchor names, so a node met a
    second time is an alias: it is expanded again (as go-yaml does) while the counts of
    go-yaml's decoder bound the expansion, and a node met again while it is still being
    built is an anchor that holds itself.
    """

    def __init__(
        self, source: str, lines: list[str], spans: list[tuple[int, int, int, int]]
    ) -> None:
        self.source = source
        self.lines = lines
        self.spans = spans
        """Where quoted and block scalars are: ``#`` there is text, not a comment."""
        self.positions: dict[KeyPath, Location] = {}
        self._seen: set[int] = set()
        self._open: set[int] = set()
        self._decoded = 0
        self._expanded = 0
        self._alias_depth = 0

    def _location(self, node: Node) -> Location:
        return Location(self.source, node.start_mark.line + 1, node.start_mark.column + 1)

    def _count(self, path: KeyPath) -> None:
        """go-yaml ``decoder.unmarshal``'s bookkeeping: one more node, maybe from an alias."""
        self._decoded += 1
        if self._alias_depth:
            self._expanded += 1
            if (
                self._expanded > 100
                and self._decoded > 1000
                and self._expanded / self._decoded > _allowed_alias_ratio(self._decoded)
            ):
                raise ManifestError(
                    "excessive aliasing: the document's aliases expand to far more values "
                    "than it holds (Kubernetes' YAML decoder refuses it too)",
                    where=self._site(path),
                    fix="write the repeated values out, or use fewer nested aliases",
                )

    def _site(self, path: KeyPath) -> str:
        """``file:line`` of the key nearest to ``path`` (the composer drops aliases' marks)."""
        probe = path
        while probe:
            if isinstance(probe[-1], str) and probe in self.positions:
                return f"{self.source}:{self.positions[probe].line}"
            probe = probe[:-1]
        return self.source

    def build(self, node: Node, path: KeyPath) -> Any:
        identity = id(node)
        if identity not in self._seen:
            self._seen.add(identity)
            return self._build(node, path)
        self._count(path)
        if identity in self._open:
            raise ManifestError(
                f"an alias refers to the anchor (line {node.start_mark.line + 1}) whose "
                "value it stands in, so that value would contain itself without end",
                where=self._site(path),
                fix="replace the alias with the values it should repeat",
            )
        self._alias_depth += 1
        try:
            return self._build(node, path)
        finally:
            self._alias_depth -= 1

    def _build(self, node: Node, path: KeyPath) -> Any:
        self._count(path)
        if isinstance(node, MappingNode | SequenceNode):
            identity = id(node)
            self._open.add(identity)
            try:
                return self._collection(node, path)
            finally:
                self._open.discard(identity)
        if isinstance(node, ScalarNode) and node.style:
            start, end = node.start_mark, node.end_mark
            self.spans.append((start.line, start.column, end.line, end.column))
        try:
            return _scalar(node)
        except ValueError:
            # Python refuses to read an integer of more than sys.get_int_max_str_digits()
            # digits (4,300 by default), a guard against quadratic-time conversion.
            raise ManifestError(
                f"{format_path(path)}: a number of {len(str(node.value))} digits is too long "
                "to read",
                where=f"{self.source}:{node.start_mark.line + 1}",
                fix="write a number of ordinary size",
            ) from None

    def _collection(self, node: Node, path: KeyPath) -> Any:
        if isinstance(node, MappingNode):
            if _is_template(node):
                return self._source_text(node)
            return self._mapping(node, path)
        if isinstance(node, SequenceNode):
            items = []
            for index, item in enumerate(node.value):
                self.positions[(*path, index)] = self._location(item)
                items.append(self.build(item, (*path, index)))
            return items
        return None

    def _mapping(self, node: MappingNode, path: KeyPath) -> dict[str, Any]:
        result: dict[str, Any] = {}
        merged: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if (key_node.ctag is _PLAIN and key_node.value == "<<") or key_node.tag == _MERGE_TAG:
                for source in (
                    value_node.value if isinstance(value_node, SequenceNode) else [value_node]
                ):
                    value = self.build(source, path)
                    if isinstance(value, dict):
                        merged = {**value, **merged}
                continue
            key = str(key_node.value) if isinstance(key_node, ScalarNode) else "?"
            self._count(path)
            if key in result:
                first = self.positions[(*path, key)]
                raise ManifestError(
                    f"duplicate key {key!r} (first at line {first.line})",
                    where=f"{self.source}:{key_node.start_mark.line + 1}",
                    fix="keep one of the two; Kubernetes rejects duplicate keys",
                )
            self.positions[(*path, key)] = self._location(key_node)
            result[key] = self.build(value_node, (*path, key))
        return {**merged, **result} if merged else result

    def _source_text(self, node: Node) -> str:
        start, end = node.start_mark, node.end_mark
        if start.line == end.line:
            return str(self.lines[start.line][start.column : end.column]).strip()
        parts = [self.lines[start.line][start.column :]]
        parts.extend(self.lines[start.line + 1 : end.line])
        parts.append(self.lines[end.line][: end.column] if end.line < len(self.lines) else "")
        return " ".join(" ".join(parts).split())


def _scalar(node: Node) -> Any:
    value = str(node.value)
    if node.ctag is _PLAIN:
        return _plain(value)
    kind = str(node.tag).rsplit(":", 1)[-1]
    if kind == "null":
        return None
    if kind == "bool":
        return _BOOLEANS.get(value, value)
    if kind in ("int", "float"):
        typed = _plain(value)
        return typed if isinstance(typed, int | float) and not isinstance(typed, bool) else value
    return value


def _plain(text: str) -> Any:
    """A plain scalar typed as go-yaml v2 types it (null, bool, int, float, else str)."""
    if text in _NULLS:
        return None
    if text in _BOOLEANS:
        return _BOOLEANS[text]
    if text in _SPECIAL_FLOATS:
        return _SPECIAL_FLOATS[text]
    if not text or text[0] not in "+-.0123456789":
        return text
    if _INT.fullmatch(text):
        digits = text.replace("_", "")
        sign = -1 if digits.startswith("-") else 1
        body = digits.lstrip("+-")
        if body[:2] in ("0b", "0o", "0x"):
            return sign * int(body[2:], {"0b": 2, "0o": 8, "0x": 16}[body[:2]])
        if len(body) > 1 and body.startswith("0"):
            return sign * int(body, 8)
        return sign * int(body)
    if _FLOAT.fullmatch(text):
        return float(text)
    return text


def _comments(lines: list[str], spans: list[tuple[int, int, int, int]]) -> dict[int, str]:
    """Comment text by 1-based line, skipping ``#`` inside quoted and block scalars."""
    comments: dict[int, str] = {}
    for number, line in enumerate(lines):
        if "#" not in line:
            continue
        for match in _COMMENT_START.finditer(line):
            column = match.start()
            if not any(_inside(span, number, column) for span in spans):
                comments[number + 1] = line[column + 1 :].strip()
                break
    return comments


def _inside(span: tuple[int, int, int, int], line: int, column: int) -> bool:
    start_line, start_column, end_line, end_column = span
    if line < start_line or line > end_line:
        return False
    if line == start_line and column < start_column:
        return False
    return not (line == end_line and column >= end_column)


def _split(document: YamlDocument) -> list[Manifest]:
    body, positions, start = document.body, document.positions, document.start
    items = body.get("items")
    kind = body.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
        flattened: list[Manifest] = []
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            prefix = ("items", index)
            sub = {
                path[2:]: where
                for path, where in positions.items()
                if path[:2] == prefix and len(path) > 2
            }
            flattened.append(_manifest(item, sub, positions.get(prefix, start), document.comments))
        return flattened
    return [_manifest(body, positions, start, document.comments)]


def _manifest(
    body: dict[str, Any],
    positions: Mapping[KeyPath, Location],
    source: Location,
    comments: Mapping[int, str],
) -> Manifest:
    metadata = body.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    namespace = metadata.get("namespace")
    return Manifest(
        kind=_text(body.get("kind")),
        api_version=_text(body.get("apiVersion")),
        name=_text(metadata.get("name")),
        namespace=namespace if isinstance(namespace, str) and namespace else None,
        body=body,
        source=source,
        positions=positions,
        comments=comments,
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
