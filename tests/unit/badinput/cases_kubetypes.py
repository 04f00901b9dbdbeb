"""Bad Kubernetes values met by ``simulate``: node selector terms, label selectors,
tolerations and quantities, as :mod:`gpuscale.kube` parses them (and the API server
would reject them: an unknown operator, ``In`` without values, ``Gt`` on a non-integer).

Each case is the corrected tutorial (``examples/tutorial-fixed``) with one value broken,
so the error line must name the file, the line of the broken key and the fix.
"""

from __future__ import annotations

from pathlib import Path

from tests.unit.badinput._harness import Bad

_ROOT = Path(__file__).resolve().parents[3]
_EXAMPLE = _ROOT / "examples" / "tutorial-fixed"
_RESOURCES = (_EXAMPLE / "resources.yaml").read_text(encoding="utf-8")
_PROFILE = (_EXAMPLE / "gpuscale.yaml").read_text(encoding="utf-8")
_SCENARIO = (_ROOT / "examples" / "tutorial-scenario.yaml").read_text(encoding="utf-8")

_SELECTOR = """      nodeSelector:
        doks.digitalocean.com/gpu-brand: amd
"""
_TOLERATIONS = """      tolerations:
        - key: amd.com/gpu
          operator: Exists
          effect: NoSchedule
"""
_REQUESTS = """            requests:
              cpu: 100m
"""
_SERVICE_SELECTOR = """  selector:
    matchLabels:
      app: go-from-configmap
  template:"""


def _affinity(expressions: str) -> str:
    return (
        _SELECTOR
        + """      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
"""
        + expressions
    )


def _case(id: str, old: str, new: str, *names: str) -> Bad:
    assert old in _RESOURCES, old
    return Bad(
        id=f"kube-{id}",
        argv=("simulate", "resources.yaml", "--scenario", "scenario.yaml"),
        files={
            "resources.yaml": _RESOURCES.replace(old, new, 1),
            "gpuscale.yaml": _PROFILE,
            "scenario.yaml": _SCENARIO,
        },
        names=("resources.yaml:", *names),
    )


_TERM = "              - matchExpressions:\n"

CASES = [
    _case(
        "affinity-unknown-operator",
        _SELECTOR,
        _affinity(_TERM + '                  - {key: gpus, operator: Ge, values: ["4"]}\n'),
        "'Ge'",
        "Gt",
    ),
    _case(
        "affinity-operator-wrong-case",
        _SELECTOR,
        _affinity(_TERM + "                  - {key: zone, operator: in, values: [a]}\n"),
        "'in'",
    ),
    _case(
        "affinity-in-without-values",
        _SELECTOR,
        _affinity(_TERM + "                  - {key: zone, operator: In}\n"),
        "In",
        "zone",
    ),
    _case(
        "affinity-exists-with-values",
        _SELECTOR,
        _affinity(_TERM + "                  - {key: zone, operator: Exists, values: [a]}\n"),
        "Exists",
        "zone",
    ),
    _case(
        "affinity-gt-not-an-integer",
        _SELECTOR,
        _affinity(_TERM + "                  - {key: gpus, operator: Gt, values: [four]}\n"),
        "Gt",
        "gpus",
    ),
    _case(
        "affinity-gt-two-values",
        _SELECTOR,
        _affinity(_TERM + '                  - {key: gpus, operator: Lt, values: ["4", "8"]}\n'),
        "Lt",
        "gpus",
    ),
    _case(
        "affinity-gt-underscore-integer",
        _SELECTOR,
        _affinity(_TERM + '                  - {key: gpus, operator: Gt, values: ["1_0"]}\n'),
        "Gt",
    ),
    _case(
        "affinity-values-not-a-list",
        _SELECTOR,
        _affinity(_TERM + "                  - {key: zone, operator: In, values: a}\n"),
        "values",
    ),
    _case(
        "affinity-expression-without-key",
        _SELECTOR,
        _affinity(_TERM + "                  - {operator: Exists}\n"),
        "key",
    ),
    _case(
        "affinity-term-not-a-mapping",
        _SELECTOR,
        _affinity("              - zone\n"),
        "mapping",
    ),
    _case(
        "affinity-expressions-not-a-list",
        _SELECTOR,
        _affinity("              - matchExpressions: {key: zone}\n"),
        "matchExpressions",
    ),
    _case(
        "selector-unknown-operator",
        _SERVICE_SELECTOR,
        """  selector:
    matchLabels:
      app: go-from-configmap
    matchExpressions:
      - {key: tier, operator: Gt, values: ["1"]}
  template:""",
        "'Gt'",
    ),
    _case(
        "selector-match-labels-not-a-mapping",
        _SERVICE_SELECTOR,
        """  selector:
    matchLabels: [app]
  template:""",
        "matchLabels",
    ),
    _case(
        "toleration-not-a-mapping",
        _TOLERATIONS,
        "      tolerations:\n        - amd.com/gpu\n",
        "tolerations[0]",
    ),
    _case(
        "quantity-unknown-suffix",
        _REQUESTS,
        "            requests:\n              cpu: 100x\n",
        "cpu",
    ),
    _case(
        "quantity-not-a-number",
        _REQUESTS,
        "            requests:\n              cpu: [1]\n",
        "cpu",
    ),
]
