"""Property-based tests of the one validator (:func:`gpuscale.manifests.validate`).

1. Documents built from Kubernetes-ish pieces (a valid Deployment, Service and
   ScaledObject with arbitrary values put at their key paths, keys removed, huge
   integers, odd kinds) go through the real loader and the validator: nothing but
   gpuscale's own errors comes out.
2. Objects generated in the part of the space the simulator models (ports, names,
   selectors, replica bounds, thresholds, HPA behavior) are judged the same by ``render``,
   ``lint`` (its error findings from the validator's rules) and ``simulate``: one refuses
   exactly when the others do, on the same line.

Derandomized, with a fixed example budget, so CI runs the same cases every time.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscale.cli.main import main
from gpuscale.errors import GpuscaleError
from gpuscale.manifests import load_text, parse_yaml, validate
from tests.unit.badinput.cases_validator import BASE, SCENARIO

HUGE = "@HUGE@"
"""Stands for a 5,000-digit integer in the JSON text (json.dumps cannot write one)."""

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.sampled_from([0, -1, 1, 65535, 65536, 99999, 3600, 3601, 1800, 1801, 2**31]),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from(
        [
            "",
            "0",
            "-5",
            "80",
            "abc",
            "500m",
            "1Gi",
            "-1Gi",
            "0.5",
            "25%",
            "150%",
            "metrics",
            "Metrics_1",
            "a" * 70,
            "${X}",
            "{{ .Values.x }}",
            "Max",
            "Sometimes",
            "TCP",
            HUGE,
        ]
    ),
    st.text(st.characters(blacklist_categories=("Cs", "Cc", "Cn")), max_size=8),
)
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(
            st.sampled_from(
                ["name", "port", "value", "type", "matchLabels", "httpGet", "periodSeconds"]
            ),
            children,
            max_size=3,
        ),
    ),
    max_leaves=6,
)

BODIES = [document.body for document in parse_yaml(BASE, "base.yaml")]


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*prefix, index))
    return found


PATHS = [(index, path) for index, body in enumerate(BODIES) for path in _paths(body)]


def _set(body: Any, path: tuple[Any, ...], value: Any, *, delete: bool) -> None:
    for step in path[:-1]:
        body = body[step]
    if delete and isinstance(body, dict):
        body.pop(path[-1], None)
    else:
        body[path[-1]] = value


@st.composite
def documents(draw: st.DrawFn) -> str:
    bodies = json.loads(json.dumps(BODIES))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        index, path = draw(st.sampled_from(PATHS))
        try:
            _set(bodies[index], path, draw(values), delete=draw(st.booleans()))
        except (KeyError, IndexError, TypeError):
            continue  # an earlier change removed or replaced the parent
    if draw(st.booleans()):
        bodies.append({"apiVersion": "v1", "kind": "List", "items": draw(values)})
    text = "\n---\n".join(json.dumps(body) for body in bodies)
    return text.replace(f'"{HUGE}"', "9" * 5000)


@settings(
    derandomize=True,
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(documents())
def test_loader_and_validator_raise_only_gpuscale_errors(text: str) -> None:
    try:
        manifests = load_text(text, "doc.yaml")
        problems = validate(manifests)
    except GpuscaleError as error:
        failure: GpuscaleError | None = error
    else:
        failure = None
    if failure is not None:
        assert failure.where, failure
        return
    for problem in problems:
        assert problem.location.file == "doc.yaml"
        assert problem.location.line >= 1
        assert "\n" not in problem.one_line()


# --- render, lint and simulate agree ----------------------------------------------------

EDITS: dict[str, tuple[str, st.SearchStrategy[Any]]] = {
    "containerPort": ("containerPort: 8080", st.sampled_from([0, 1, 8080, 65535, 65536, 70000])),
    "service port": ("      port: 8080", st.sampled_from([0, 80, 8080, 65535, 99999])),
    "targetPort": ("targetPort: metrics", st.sampled_from(["metrics", "8080", "70000", "Bad_1"])),
    "threshold": ("threshold: '80'", st.sampled_from(["'80'", "'0'", "'-1'", "'0.0004'", "'x'"])),
    "window": (
        "stabilizationWindowSeconds: 300",
        st.sampled_from([-1, 0, 300, 3600, 3601]),
    ),
    "policy value": ("value: 1\n", st.sampled_from([-1, 0, 1, 3])),
    "period": ("periodSeconds: 60", st.sampled_from([0, 1, 60, 1800, 1801])),
    "min": ("minReplicaCount: 1", st.sampled_from([0, 1, 4, 5])),
    "container name": ("        - name: app\n", st.sampled_from(["app", "App_1", "a-b"])),
    "selector": ("    matchLabels:\n      app: web\n", st.sampled_from(["web", "other"])),
    "memory": ("memory: 128Mi", st.sampled_from(["64Mi", "128Mi", "256Mi", "1Gi"])),
}


def _apply(text: str, name: str, value: Any) -> str:
    old, _ = EDITS[name]
    if name == "container name":
        return text.replace(old, f"        - name: {value}\n", 1)
    if name == "selector":
        return text.replace(old, f"    matchLabels:\n      app: {value}\n", 1)
    if name == "policy value":
        return text.replace(old, f"value: {value}\n", 1)
    key = old.split(":", 1)[0]
    return text.replace(old, f"{key}: {value}", 1)


@st.composite
def edited_sets(draw: st.DrawFn) -> str:
    text = BASE
    for name in draw(st.lists(st.sampled_from(sorted(EDITS)), max_size=2, unique=True)):
        text = _apply(text, name, draw(EDITS[name][1]))
    return text


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


VALIDATOR_RULES = {"schema-invalid", "scaledobject-invalid", "replica-bounds-invalid"}


@settings(
    derandomize=True,
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(edited_sets())
def test_render_lint_and_simulate_agree(text: str) -> None:
    errors = [p for p in validate(load_text(text, "set.yaml")) if p.severity == "error"]
    lines = {f"set.yaml:{p.location.line}" for p in errors}
    with tempfile.TemporaryDirectory() as name, contextlib.chdir(name):
        Path("set.yaml").write_text(text)
        Path("scenario.yaml").write_text(SCENARIO)
        render_code, _, render_err = _cli("render", "set.yaml")
        lint_code, lint_out, _ = _cli("lint", "set.yaml", "-o", "json")
        sim_code, _, sim_err = _cli(
            "simulate", "set.yaml", "--scenario", "scenario.yaml", "--until", "30s"
        )
    findings = json.loads(lint_out)["findings"]
    refused = {
        f"set.yaml:{f['location']['line']}"
        for f in findings
        if f["severity"] == "error" and f["rule"] in VALIDATOR_RULES
    }
    sim_errors = [line for line in sim_err.splitlines() if line.startswith("gpuscale: error:")]
    if errors:
        assert render_code == 2, render_err
        assert lint_code == 1
        assert refused == lines, (refused, lines)
        assert sim_code == 2
        assert len(sim_errors) == 1
        assert sim_errors[0].startswith(f"gpuscale: error: {errors[0].location.file}:"), sim_errors
        assert any(line in sim_errors[0] for line in lines), (sim_errors, lines)
    else:
        assert render_code == 0, render_err
        assert not refused, findings
        assert sim_code == 0, sim_err
