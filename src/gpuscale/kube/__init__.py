"""Kubernetes value types, defined once: taints and tolerations, label selectors and node
selector terms, exact resource quantities, durations.

Every layer that reasons about Kubernetes objects reads these: ``manifests`` builds them
from YAML, ``controllers`` (the scheduler, the cluster autoscaler, the HPA) decide with
them, ``sim`` and ``lint`` pass them through, ``live`` builds them from the API server's
objects. The package is a pure leaf: it imports nothing of gpuscale but ``errors`` and
``_gomath`` and does no I/O. Each module follows the upstream file it names, with
upstream's behaviour on the odd inputs (an unknown operator, a non-integer ``Gt`` value,
a sub-milli quantity) rather than a guess.
"""

from gpuscale.kube._duration import format_duration, parse_duration
from gpuscale.kube._quantity import (
    Amount,
    QuantityLike,
    milli_value,
    parse_quantity,
    parse_quantity_amount,
    quantity_or_none,
    scaled_value,
    whole_value,
)
from gpuscale.kube._selectors import (
    LABEL_OPERATORS,
    NODE_OPERATORS,
    LabelSelector,
    NodeSelectorTerm,
    Requirement,
    node_affinity_matches,
    selector_matches,
)
from gpuscale.kube._taints import (
    TAINT_EFFECTS,
    TOLERATION_OPERATORS,
    Taint,
    Toleration,
    find_untolerated_taint,
)

__all__ = [
    "LABEL_OPERATORS",
    "NODE_OPERATORS",
    "TAINT_EFFECTS",
    "TOLERATION_OPERATORS",
    "Amount",
    "LabelSelector",
    "NodeSelectorTerm",
    "QuantityLike",
    "Requirement",
    "Taint",
    "Toleration",
    "find_untolerated_taint",
    "format_duration",
    "milli_value",
    "node_affinity_matches",
    "parse_duration",
    "parse_quantity",
    "parse_quantity_amount",
    "quantity_or_none",
    "scaled_value",
    "selector_matches",
    "whole_value",
]
