"""Label selectors and node selector terms as Kubernetes evaluates them: which Services a
ServiceMonitor scrapes, which pods a Deployment or Service selects, which nodes a pod may
land on.

Upstream, as of Kubernetes 1.35: ``k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go``
(``LabelSelectorAsSelector``: ``matchLabels`` and ``matchExpressions`` ANDed; an empty
selector matches everything, a missing one nothing);
``k8s.io/apimachinery/pkg/labels/selector.go`` (``NewRequirement``'s validation and
``Requirement.Matches``: ``In`` needs the label with a listed value, ``NotIn`` matches when
the label is absent or has another value, ``Exists``/``DoesNotExist`` look at the key only,
``Gt``/``Lt`` compare the label and the single value as int64 and fail when either is not
an integer, and an operator it does not know matches nothing); and
``k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go`` (node
affinity: ``Gt``/``Lt`` on top of the label operators, requirements of a term ANDed, terms
ORed, an empty term matching nothing). Malformed selectors (an unknown operator, ``In``
without values, ``Exists`` with values) are rejected when parsed, as the API server
rejects them, with a :class:`ManifestError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuscale.errors import ManifestError

__all__ = [
    "LABEL_OPERATORS",
    "NODE_OPERATORS",
    "LabelSelector",
    "NodeSelectorTerm",
    "Requirement",
    "node_affinity_matches",
    "selector_matches",
]

LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
"""Operators of a ``metav1.LabelSelectorRequirement``."""
NODE_OPERATORS = (*LABEL_OPERATORS, "Gt", "Lt")
"""Operators of a ``v1.NodeSelectorRequirement`` (node affinity)."""


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ``matchExpressions`` entry of a label selector or a node selector term."""

    key: str
    """Label key."""
    operator: str
    """``In``, ``NotIn``, ``Exists``, ``DoesNotExist``; node affinity adds ``Gt``/``Lt``."""
    values: tuple[str, ...] = ()
    """Values for ``In``/``NotIn``; one integer for ``Gt``/``Lt``; none otherwise."""

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy this requirement (``Requirement.Matches``)."""
        operator = self.operator
        if operator == "In":
            return self.key in labels and labels[self.key] in self.values
        if operator == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if operator == "Exists":
            return self.key in labels
        if operator == "DoesNotExist":
            return self.key not in labels
        if operator in ("Gt", "Lt"):
            if self.key not in labels or len(self.values) != 1:
                return False
            have, want = _int64(labels[self.key]), _int64(self.values[0])
            if have is None or want is None:
                return False
            return have > want if operator == "Gt" else have < want
        return False


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A ``metav1.LabelSelector``: every ``match_labels`` pair and every requirement."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[Requirement, ...] = ()

    @property
    def is_empty(self) -> bool:
        """An empty selector (``{}``) matches every object."""
        return not self.match_labels and not self.match_expressions

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether an object with ``labels`` is selected."""
        return all(labels.get(key) == value for key, value in self.match_labels) and all(
            requirement.matches(labels) for requirement in self.match_expressions
        )

    @classmethod
    def from_map(cls, labels: Mapping[str, Any]) -> LabelSelector:
        """A set-based selector from a plain map, such as a Service's ``spec.selector``."""
        return cls(match_labels=tuple((str(k), _label_value(v)) for k, v in labels.items()))

    @classmethod
    def from_spec(cls, spec: Any, *, where: str = "selector") -> LabelSelector:
        """Parse a ``{matchLabels, matchExpressions}`` mapping.

        ``where`` names the place (``file:line``) for the :class:`ManifestError` raised on
        a malformed selector.
        """
        if spec is None:
            return cls()
        if not isinstance(spec, Mapping):
            raise ManifestError(
                "a label selector must be a mapping",
                where=where,
                fix="write matchLabels: {key: value} and/or matchExpressions: [...]",
            )
        labels = spec.get("matchLabels") or {}
        if not isinstance(labels, Mapping):
            raise ManifestError(
                "matchLabels must be a mapping of label to value",
                where=where,
                fix="write matchLabels: {app: my-app}",
            )
        expressions = spec.get("matchExpressions") or []
        if not isinstance(expressions, list):
            raise ManifestError(
                "matchExpressions must be a list",
                where=where,
                fix="write matchExpressions: [{key: k, operator: In, values: [v]}]",
            )
        return cls(
            match_labels=tuple((str(k), _label_value(v)) for k, v in labels.items()),
            match_expressions=tuple(
                _requirement(item, LABEL_OPERATORS, where) for item in expressions
            ),
        )


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """One ``nodeSelectorTerms`` entry of required node affinity: all requirements ANDed."""

    match_expressions: tuple[Requirement, ...] = ()
    """The requirements, all of which must hold (``matchFields`` is not modelled)."""

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a node with ``labels`` satisfies the term (an empty term matches none)."""
        if not self.match_expressions:
            return False
        return all(requirement.matches(labels) for requirement in self.match_expressions)

    @classmethod
    def from_spec(cls, spec: Any, *, where: str = "nodeSelectorTerms") -> NodeSelectorTerm:
        """Parse ``{matchExpressions: [...]}`` (``matchFields`` is not modelled)."""
        if not isinstance(spec, Mapping):
            raise ManifestError(
                "a node selector term must be a mapping",
                where=where,
                fix="write - matchExpressions: [{key: k, operator: In, values: [v]}]",
            )
        expressions = spec.get("matchExpressions") or []
        if not isinstance(expressions, list):
            raise ManifestError(
                "matchExpressions must be a list", where=where, fix="write a list of requirements"
            )
        return cls(tuple(_requirement(item, NODE_OPERATORS, where) for item in expressions))


def selector_matches(spec: Any, labels: Mapping[str, str]) -> bool:
    """Whether the ``metav1.LabelSelector`` ``spec`` selects ``labels``; ``None`` selects none."""
    if spec is None:
        return False
    return LabelSelector.from_spec(spec).matches(labels)


def node_affinity_matches(terms: tuple[NodeSelectorTerm, ...], labels: Mapping[str, str]) -> bool:
    """Whether a node with ``labels`` satisfies required node affinity: any term (ORed).

    No terms at all means no constraint.
    """
    if not terms:
        return True
    return any(term.matches(labels) for term in terms)


def _label_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _requirement(item: Any, operators: tuple[str, ...], where: str) -> Requirement:
    if not isinstance(item, Mapping) or not isinstance(item.get("key"), str):
        raise ManifestError(
            "each matchExpressions entry needs a key, an operator and (for In/NotIn) values",
            where=where,
            fix="write {key: k, operator: In, values: [v]}",
        )
    key, operator = item["key"], item.get("operator")
    if operator not in operators:
        raise ManifestError(
            f"unknown operator {operator!r} for key {key!r}",
            where=where,
            fix=f"use one of {', '.join(operators)} (case matters)",
        )
    raw = item.get("values") or []
    if not isinstance(raw, list):
        raise ManifestError(
            f"values of {key!r} must be a list", where=where, fix="write values: [a, b]"
        )
    values = tuple(_label_value(v) for v in raw)
    if operator in ("In", "NotIn") and not values:
        raise ManifestError(
            f"operator {operator} on {key!r} needs at least one value",
            where=where,
            fix="list the values, or use Exists/DoesNotExist",
        )
    if operator in ("Exists", "DoesNotExist") and values:
        raise ManifestError(
            f"operator {operator} on {key!r} takes no values",
            where=where,
            fix="remove values, or use In/NotIn",
        )
    if operator in ("Gt", "Lt") and (len(values) != 1 or not _is_int(values[0])):
        raise ManifestError(
            f"operator {operator} on {key!r} needs exactly one integer value",
            where=where,
            fix='write values: ["4"]',
        )
    return Requirement(key=key, operator=operator, values=values)


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: None for anything else (Python's ``int`` would
    also take ``_`` separators, surrounding spaces and values past int64)."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body.isascii() or not body.isdigit():
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


def _is_int(text: str) -> bool:
    return _int64(text) is not None
