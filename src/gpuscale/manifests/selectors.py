"""Label selectors as Kubernetes evaluates them: which Services a ServiceMonitor scrapes,
which pods a Deployment or Service selects, which nodes a pod may land on.

Follows ``k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go`` (``LabelSelectorAsSelector``:
``matchLabels`` and ``matchExpressions`` ANDed; an empty selector matches everything, a
missing one nothing) and ``k8s.io/apimachinery/pkg/labels/selector.go``
(``Requirement.Matches``: ``In`` needs the label with a listed value, ``NotIn`` matches
when the label is absent or has another value, ``Exists``/``DoesNotExist`` look at the key
only). Node affinity adds ``Gt``/``Lt`` on integer label values and ORs its terms, as
``k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go`` does.
Malformed selectors (an unknown operator, ``In`` without values, ``Exists`` with values)
are rejected as the API server rejects them, with a :class:`ManifestError`.
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


@dataclass(frozen=True)
class Requirement:
    """One ``matchExpressions`` entry: ``key operator values``."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy this requirement (``Requirement.Matches`` upstream)."""
        present = self.key in labels
        if self.operator == "In":
            return present and labels[self.key] in self.values
        if self.operator == "NotIn":
            return not present or labels[self.key] not in self.values
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        if self.operator in ("Gt", "Lt"):
            if not present:
                return False
            try:
                have, want = int(labels[self.key]), int(self.values[0])
            except ValueError:
                return False
            return have > want if self.operator == "Gt" else have < want
        return False


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class NodeSelectorTerm:
    """One ``nodeSelectorTerms`` entry of required node affinity: all requirements ANDed."""

    match_expressions: tuple[Requirement, ...] = ()

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


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True
