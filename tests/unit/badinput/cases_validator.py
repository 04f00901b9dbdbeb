"""Objects the API server or KEDA would refuse, met by render, lint, simulate and deploy.

One validator (:func:`gpuscale.manifests.validate`) decides for all four commands, so each
mutation of a valid set below is run through each of them and must give the same
``file:line`` and key: ``render`` and ``simulate`` exit 2 with one error line, ``lint -o
json`` exits 1 with one error finding (its exit code for findings, docs/commands/lint.md),
``deploy --dry-run=client -n demo`` exits 2 before contacting anything, and so does
``deploy`` against no cluster at all. Upstream sources of
each refusal are cited in ``gpuscale.manifests._admission``.
"""

from __future__ import annotations

from tests.unit.badinput._harness import Bad

BASE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
  labels:
    app: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
        - name: app
          image: ghcr.io/gpuscale/gpuscale:0.1.0
          ports:
            - name: metrics
              containerPort: 8080
          readinessProbe:
            httpGet:
              path: /readyz
              port: metrics
            periodSeconds: 5
          resources:
            requests:
              cpu: 100m
              memory: 128Mi
            limits:
              memory: 256Mi
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: demo
  labels:
    app: web
spec:
  selector:
    app: web
  ports:
    - name: metrics
      port: 8080
      targetPort: metrics
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: web
  namespace: demo
spec:
  scaleTargetRef:
    name: web
  minReplicaCount: 1
  maxReplicaCount: 4
  advanced:
    horizontalPodAutoscalerConfig:
      behavior:
        scaleDown:
          stabilizationWindowSeconds: 300
          policies:
            - type: Pods
              value: 1
              periodSeconds: 60
  triggers:
    - type: prometheus
      metricType: AverageValue
      metadata:
        serverAddress: http://prometheus-operated.monitoring.svc.cluster.local:9090
        threshold: '80'
        query: sum(my_gauge{namespace="demo", service="web"})
        ignoreNullValues: "false"
"""
"""A set every command accepts (tests/unit/manifests/test_admission.py checks it)."""

SCENARIO = "until: 2m\nsteps:\n  - at: 0s\n    set_gauge: {name: my_gauge, value: 10}\n"

# (id, text replaced, replacement, text on the refused line, key the line must name)
MUTATIONS: list[tuple[str, str, str, str, str]] = [
    ("threshold-zero", "threshold: '80'", "threshold: '0'", "threshold:", "threshold"),
    ("threshold-negative", "threshold: '80'", "threshold: '-5'", "threshold:", "threshold"),
    ("threshold-below-milli", "threshold: '80'", "threshold: '0.0004'", "threshold:", "threshold"),
    ("threshold-not-a-number", "threshold: '80'", "threshold: 'abc'", "threshold:", "threshold"),
    (
        "threshold-missing",
        "        threshold: '80'\n",
        "",
        "AverageValue\n      metadata:",
        "threshold",
    ),
    (
        "stabilization-negative",
        "stabilizationWindowSeconds: 300",
        "stabilizationWindowSeconds: -1",
        "stabilizationWindowSeconds",
        "stabilizationWindowSeconds",
    ),
    (
        "stabilization-above-3600",
        "stabilizationWindowSeconds: 300",
        "stabilizationWindowSeconds: 3601",
        "stabilizationWindowSeconds",
        "stabilizationWindowSeconds",
    ),
    ("policy-value-zero", "value: 1\n", "value: 0\n", "value: 0", "value"),
    (
        "policy-period-zero",
        "periodSeconds: 60",
        "periodSeconds: 0",
        "periodSeconds: 0",
        "periodSeconds",
    ),
    (
        "policy-period-above-1800",
        "periodSeconds: 60",
        "periodSeconds: 1801",
        "periodSeconds: 1801",
        "periodSeconds",
    ),
    (
        "select-policy-unknown",
        "          stabilizationWindowSeconds: 300\n",
        "          stabilizationWindowSeconds: 300\n          selectPolicy: Sometimes\n",
        "selectPolicy",
        "selectPolicy",
    ),
    (
        "policies-empty",
        (
            "          policies:\n"
            "            - type: Pods\n"
            "              value: 1\n"
            "              periodSeconds: 60\n"
        ),
        "          policies: []\n",
        "policies",
        "policies",
    ),
    ("service-port-99999", "      port: 8080", "      port: 99999", "port: 99999", "port"),
    ("service-port-zero", "      port: 8080", "      port: 0", "port: 0", "port"),
    (
        "service-target-port-70000",
        "targetPort: metrics",
        "targetPort: 70000",
        "targetPort",
        "targetPort",
    ),
    (
        "service-target-port-bad-name",
        "targetPort: metrics",
        "targetPort: Metrics_Port",
        "targetPort",
        "targetPort",
    ),
    (
        "service-duplicate-port",
        "      targetPort: metrics\n",
        (
            "      targetPort: metrics\n"
            "    - name: again\n"
            "      port: 8080\n"
            "      targetPort: metrics\n"
        ),
        "name: again\n      port",
        "port",
    ),
    (
        "service-second-port-unnamed",
        "      targetPort: metrics\n",
        "      targetPort: metrics\n    - port: 9090\n",
        "- port: 9090",
        "ports[1]",
    ),
    (
        "service-duplicate-port-name",
        "      targetPort: metrics\n",
        "      targetPort: metrics\n    - name: metrics\n      port: 9090\n",
        "targetPort: metrics\n    - name: metrics",
        "name",
    ),
    (
        "service-port-name-invalid",
        "    - name: metrics\n      port: 8080",
        "    - name: Metrics_1\n      port: 8080",
        "Metrics_1",
        "name",
    ),
    (
        "service-no-ports",
        "  ports:\n    - name: metrics\n      port: 8080\n      targetPort: metrics\n",
        "  ports: []\n",
        "ports: []",
        "ports",
    ),
    (
        "container-port-70000",
        "containerPort: 8080",
        "containerPort: 70000",
        "containerPort",
        "containerPort",
    ),
    (
        "container-port-zero",
        "containerPort: 8080",
        "containerPort: 0",
        "containerPort",
        "containerPort",
    ),
    (
        "container-port-negative",
        "containerPort: 8080",
        "containerPort: -80",
        "containerPort",
        "containerPort",
    ),
    (
        "host-port-70000",
        "containerPort: 8080\n",
        "containerPort: 8080\n              hostPort: 70000\n",
        "hostPort",
        "hostPort",
    ),
    (
        "container-port-name-too-long",
        "            - name: metrics\n              containerPort",
        "            - name: metrics-of-the-app\n              containerPort",
        "metrics-of-the-app",
        "name",
    ),
    (
        "container-port-name-duplicate",
        "              containerPort: 8080\n",
        (
            "              containerPort: 8080\n"
            "            - name: metrics\n"
            "              containerPort: 9090\n"
        ),
        "containerPort: 8080\n            - name: metrics",
        "name",
    ),
    (
        "container-name-duplicate",
        "          resources:\n",
        (
            "          resources:\n"
            "            limits: {memory: 256Mi}\n"
            "            requests: {cpu: 100m, memory: 128Mi}\n"
            "        - name: app\n"
            "          image: busybox\n"
            "          resources:\n"
        ),
        "128Mi}\n        - name: app",
        "name",
    ),
    ("container-name-invalid", "        - name: app\n", "        - name: App_1\n", "App_1", "name"),
    (
        "init-container-name-clash",
        "      containers:\n",
        "      initContainers:\n        - name: app\n          image: busybox\n      containers:\n",
        "      containers:\n        - name: app",
        "name",
    ),
    (
        "containers-empty",
        "      containers:\n        - name: app\n",
        "      containers: []\n      initContainers:\n        - name: app\n",
        "containers: []",
        "containers",
    ),
    (
        "selector-mismatch",
        "    matchLabels:\n      app: web\n",
        "    matchLabels:\n      app: other\n",
        "  selector:",
        "selector",
    ),
    (
        "selector-empty",
        "    matchLabels:\n      app: web\n",
        "    matchLabels: {}\n",
        "  selector:",
        "selector",
    ),
    (
        "replicas-negative",
        "spec:\n  selector:\n    matchLabels",
        "spec:\n  replicas: -1\n  selector:\n    matchLabels",
        "replicas",
        "replicas",
    ),
    ("request-above-limit", "memory: 128Mi", "memory: 512Mi", "memory: 512Mi", "memory"),
    ("cpu-request-negative", "cpu: 100m", "cpu: -100m", "cpu: -100m", "cpu"),
    (
        "gpu-fraction",
        "              memory: 256Mi\n",
        "              memory: 256Mi\n              amd.com/gpu: '0.5'\n",
        "amd.com/gpu",
        "amd.com/gpu",
    ),
    (
        "probe-two-handlers",
        "            periodSeconds: 5\n",
        "            periodSeconds: 5\n            tcpSocket: {port: 8080}\n",
        "tcpSocket",
        "tcpSocket",
    ),
    (
        "probe-no-handler",
        "            httpGet:\n              path: /readyz\n              port: metrics\n",
        "",
        "readinessProbe",
        "readinessProbe",
    ),
    (
        "probe-period-negative",
        "periodSeconds: 5",
        "periodSeconds: -5",
        "periodSeconds: -5",
        "periodSeconds",
    ),
    (
        "probe-port-99999",
        "              port: metrics\n",
        "              port: 99999\n",
        "port: 99999",
        "port",
    ),
    (
        "liveness-success-threshold",
        "          resources:\n",
        (
            "          livenessProbe:\n"
            "            tcpSocket: {port: 8080}\n"
            "            successThreshold: 3\n"
            "          resources:\n"
        ),
        "successThreshold",
        "successThreshold",
    ),
    (
        "restart-policy-never",
        "      containers:\n",
        "      restartPolicy: Never\n      containers:\n",
        "restartPolicy",
        "restartPolicy",
    ),
    (
        "strategy-recreate-with-rolling-update",
        "spec:\n  selector:\n    matchLabels",
        (
            "spec:\n"
            "  strategy:\n"
            "    type: Recreate\n"
            "    rollingUpdate: {maxSurge: 1}\n"
            "  selector:\n"
            "    matchLabels"
        ),
        "rollingUpdate",
        "rollingUpdate",
    ),
    (
        "strategy-surge-and-unavailable-zero",
        "spec:\n  selector:\n    matchLabels",
        (
            "spec:\n"
            "  strategy:\n"
            "    rollingUpdate:\n"
            "      maxSurge: 0\n"
            "      maxUnavailable: 0\n"
            "  selector:\n"
            "    matchLabels"
        ),
        "maxUnavailable",
        "maxUnavailable",
    ),
    (
        "strategy-unavailable-above-100-percent",
        "spec:\n  selector:\n    matchLabels",
        (
            "spec:\n"
            "  strategy:\n"
            "    rollingUpdate:\n"
            "      maxUnavailable: 150%\n"
            "  selector:\n"
            "    matchLabels"
        ),
        "maxUnavailable",
        "maxUnavailable",
    ),
    (
        "progress-deadline-below-min-ready",
        "spec:\n  selector:\n    matchLabels",
        "spec:\n  minReadySeconds: 30\n  progressDeadlineSeconds: 10\n  selector:\n    matchLabels",
        "progressDeadlineSeconds",
        "progressDeadlineSeconds",
    ),
    (
        "min-above-max",
        "minReplicaCount: 1",
        "minReplicaCount: 5",
        "minReplicaCount",
        "ReplicaCount",
    ),
    (
        "idle-not-below-min",
        "  minReplicaCount: 1\n",
        "  minReplicaCount: 1\n  idleReplicaCount: 1\n",
        "idleReplicaCount",
        "IdleReplicaCount",
    ),
    (
        "metric-type-utilization",
        "metricType: AverageValue",
        "metricType: Utilization",
        "metricType",
        "metricType",
    ),
    (
        "trigger-names-repeat",
        "    - type: prometheus\n      metricType",
        (
            "    - type: prometheus\n"
            "      name: load\n"
            "      metadata: {serverAddress: 'http://p:9090', threshold: '5', query: 'sum(x)'}\n"
            "    - type: prometheus\n"
            "      name: load\n"
            "      metricType"
        ),
        "sum(x)'}\n    - type: prometheus\n      name: load",
        "name",
    ),
    (
        "server-address-missing",
        "        serverAddress: http://prometheus-operated.monitoring.svc.cluster.local:9090\n",
        "",
        "AverageValue\n      metadata:",
        "serverAddress",
    ),
    (
        "ignore-null-values-maybe",
        'ignoreNullValues: "false"',
        'ignoreNullValues: "maybe"',
        "ignoreNullValues",
        "ignoreNullValues",
    ),
    (
        "scaledobject-name-too-long",
        "kind: ScaledObject\nmetadata:\n  name: web\n",
        "kind: ScaledObject\nmetadata:\n  name: " + "w" * 70 + "\n",
        "w" * 70,
        "name",
    ),
    (
        "service-namespace-invalid",
        "kind: Service\nmetadata:\n  name: web\n  namespace: demo\n",
        "kind: Service\nmetadata:\n  name: web\n  namespace: Demo_NS\n",
        "Demo_NS",
        "namespace",
    ),
]


def _line(text: str, needle: str) -> int:
    """The line on which ``needle``'s first occurrence in ``text`` ends."""
    return text[: text.index(needle) + len(needle.rstrip("\n"))].count("\n") + 1


def _cases() -> list[Bad]:
    cases: list[Bad] = []
    for name, old, new, needle, key in MUTATIONS:
        assert old in BASE, name
        text = BASE.replace(old, new, 1)
        where = f"bad.yaml:{_line(text, needle)}"
        files: dict[str, str | bytes] = {"bad.yaml": text}
        names = (where, key)
        cases += [
            Bad(
                id=f"validator-render-{name}", argv=("render", "bad.yaml"), files=files, names=names
            ),
            Bad(
                id=f"validator-lint-{name}",
                argv=("lint", "bad.yaml", "-o", "json"),
                files=files,
                names=names,
                exit=1,
                lint_json=True,
            ),
            Bad(
                id=f"validator-simulate-{name}",
                argv=("simulate", "bad.yaml", "--scenario", "scenario.yaml"),
                files={**files, "scenario.yaml": SCENARIO},
                names=names,
            ),
            Bad(
                id=f"validator-deploy-{name}",
                argv=("deploy", "bad.yaml", "--dry-run=client", "-n", "demo"),
                files=files,
                names=names,
            ),
        ]
    return cases


_HUGE = BASE.replace("minReplicaCount: 1", "minReplicaCount: " + "9" * 5000)
_LIST_SCALAR = "apiVersion: v1\nkind: List\nitems: 3\n"
_LIST_ITEM = "apiVersion: v1\nkind: List\nitems:\n  - 3\n"


def _no_cluster_cases() -> list[Bad]:
    """``deploy`` with no ``--dry-run`` and no cluster: the refusal comes before any
    connection (every fourth refusal, which is enough to show the order)."""
    cases = []
    for name, old, new, needle, key in MUTATIONS[::4]:
        text = BASE.replace(old, new, 1)
        cases.append(
            Bad(
                id=f"validator-deploy-no-cluster-{name}",
                argv=("deploy", "bad.yaml", "--kubeconfig", "no-such-kubeconfig"),
                files={"bad.yaml": text},
                names=(f"bad.yaml:{_line(text, needle)}", key),
            )
        )
    return cases


CASES = [
    *_cases(),
    *_no_cluster_cases(),
    *(
        Bad(
            id=f"validator-{command}-huge-integer",
            argv=(command, "bad.yaml", *extra),
            files={"bad.yaml": _HUGE, "scenario.yaml": SCENARIO},
            names=(f"bad.yaml:{_line(_HUGE, 'minReplicaCount')}", "minReplicaCount", "5000 digits"),
        )
        for command, extra in (
            ("render", ()),
            ("lint", ()),
            ("simulate", ("--scenario", "scenario.yaml")),
            ("deploy", ("--dry-run=client", "-n", "demo")),
        )
    ),
    *(
        Bad(
            id=f"validator-{command}-bad-namespace-flag",
            argv=(command, "bad.yaml", *extra, "-n", "Bad_NS"),
            files={"bad.yaml": BASE, "scenario.yaml": SCENARIO},
            names=("--namespace", "Bad_NS"),
        )
        for command, extra in (
            ("render", ()),
            ("lint", ()),
            ("simulate", ("--scenario", "scenario.yaml")),
            ("deploy", ("--dry-run=client",)),
        )
    ),
    *(
        Bad(
            id=f"validator-{command}-list-{what}",
            argv=(command, "bad.yaml"),
            files={"bad.yaml": text},
            names=(f"bad.yaml:{line}", "items"),
        )
        for command in ("render", "lint")
        for what, text, line in (("items-scalar", _LIST_SCALAR, 3), ("item-scalar", _LIST_ITEM, 4))
    ),
]
