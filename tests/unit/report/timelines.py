"""Timelines built by hand for the report tests: the tutorial's flap and its fix.

Shaped after the story of ``gpuscale demo`` (issue #5): the gauge is set to 160 on one pod
at 60 s, Prometheus scrapes it at 75 s, the HPA asks for 2 replicas at 90 s, the second
pod is Pending until a GPU node provisioned from 100 s is Ready at 400 s, and it is Ready
at 460 s. The tutorial's query divides by the replica count, so it reads 80 with two
replicas and the HPA scales back to 1 at 765 s (300 s stabilization), then up to 2 at 795 s.
The fix holds 2. Both runs end at 900 s. The times are illustrative, not a simulation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuscale.timeline import (
    Decision,
    Header,
    Record,
    Timeline,
    WorkloadState,
    encode_header,
    encode_record,
)

PRICE = 1.99
WORKLOAD = "default/go-from-configmap"
METRIC = "s0-prometheus"


@dataclass(frozen=True)
class Step:
    t: float
    spec: int
    ready: int
    desired: int | None
    pending: int = 0
    starting: int = 0
    terminating: int = 0
    query: float | None = 0.0
    hpa: float | None = 0.0
    gauge: float = 0.0
    gpu_ready: int = 1
    gpu_provisioning: int = 0
    decisions: tuple[Decision, ...] = field(default=())


def build(header: Header, steps: list[Step], workload: str = WORKLOAD) -> Timeline:
    """Records from ``steps``, with cost integrated from the GPU nodes up at $1.99/h."""
    records = []
    cost, last_t, last_nodes = 0.0, 0.0, 0
    for step in steps:
        cost += last_nodes * PRICE * (step.t - last_t) / 3600
        last_t, last_nodes = step.t, step.gpu_ready + step.gpu_provisioning
        pods = {
            "Pending": step.pending,
            "Starting": step.starting,
            "Ready": step.ready,
            "Terminating": step.terminating,
        }
        records.append(
            Record(
                t=step.t,
                workloads=(
                    WorkloadState(
                        name=workload,
                        spec=step.spec,
                        status=step.pending + step.starting + step.ready,
                        ready=step.ready,
                        desired=step.desired,
                        pods={k: v for k, v in pods.items() if v},
                        metrics={f"query:{METRIC}": step.query, f"hpa:{METRIC}": step.hpa},
                    ),
                ),
                nodes={"gpu": {"ready": step.gpu_ready, "provisioning": step.gpu_provisioning}},
                cost_usd=round(cost, 6),
                load={"my_custom_gauge": step.gauge},
                decisions=step.decisions,
            )
        )
    return Timeline(header=header, records=tuple(records))


def _header(manifests: str, **meta: object) -> Header:
    return Header(
        world="simulate",
        pools={"gpu": {"price_per_hour": PRICE, "gpus_per_node": 1}},
        meta={
            "manifests": [manifests],
            "profile": "examples/tutorial/gpuscale.yaml",
            "scenario": "gauge-160.yaml",
            "seed": 1,
            "gpuscale_version": "0.1.0",
            "thresholds": {METRIC: 80},
            "approximations": ["image pull time is a fixed duration from the profile"],
            **meta,
        },
    )


_SCALE_UP = Decision(
    "hpa", "scale", "SucceededRescale", f"deployment/{WORKLOAD}", "metric 160 / target 80 -> 2"
)
_UNSCHEDULABLE = Decision(
    "scheduler",
    "fail",
    "FailedScheduling",
    "pod/default/go-2",
    "0/1 nodes are available: 1 Insufficient amd.com/gpu.",
)
_NODE_UP = Decision("cluster-autoscaler", "scale-up", "TriggeredScaleUp", "pool/gpu", "1 -> 2")


def _common_start() -> list[Step]:
    return [
        Step(0, spec=1, ready=1, desired=1),
        Step(
            60,
            spec=1,
            ready=1,
            desired=1,
            gauge=160,
            decisions=(Decision("load", "set-gauge", "Scenario", "pod/default/go-1", "160"),),
        ),
        Step(75, spec=1, ready=1, desired=1, gauge=160, query=160),
        Step(
            90,
            spec=2,
            ready=1,
            desired=2,
            pending=1,
            gauge=160,
            query=160,
            hpa=160,
            decisions=(_SCALE_UP, _UNSCHEDULABLE),
        ),
        Step(
            100,
            spec=2,
            ready=1,
            desired=2,
            pending=1,
            gauge=160,
            query=160,
            hpa=160,
            gpu_provisioning=1,
            decisions=(_NODE_UP,),
        ),
        Step(
            400,
            spec=2,
            ready=1,
            desired=2,
            starting=1,
            gauge=160,
            query=160,
            hpa=160,
            gpu_ready=2,
        ),
    ]


def tutorial() -> Timeline:
    """The tutorial's flap: 1 -> 2 -> 1 -> 2."""
    return build(
        _header("examples/tutorial/"),
        [
            *_common_start(),
            Step(460, spec=2, ready=2, desired=2, gauge=160, query=80, hpa=80, gpu_ready=2),
            Step(
                765,
                spec=1,
                ready=1,
                desired=1,
                terminating=1,
                gauge=160,
                query=80,
                hpa=80,
                gpu_ready=2,
                decisions=(
                    Decision(
                        "hpa",
                        "scale",
                        "SucceededRescale",
                        f"deployment/{WORKLOAD}",
                        "metric 80 / target 80 -> 1",
                    ),
                ),
            ),
            Step(
                795,
                spec=2,
                ready=1,
                desired=2,
                starting=1,
                terminating=1,
                gauge=160,
                query=160,
                hpa=160,
                gpu_ready=2,
                decisions=(_SCALE_UP,),
            ),
            Step(
                800,
                spec=2,
                ready=1,
                desired=2,
                starting=1,
                gauge=160,
                query=160,
                hpa=160,
                gpu_ready=2,
            ),
            Step(855, spec=2, ready=2, desired=2, gauge=160, query=80, hpa=80, gpu_ready=2),
            Step(900, spec=2, ready=2, desired=2, gauge=160, query=80, hpa=80, gpu_ready=2),
        ],
    )


def fixed() -> Timeline:
    """The fix: 1 -> 2, then holds 2."""
    return build(
        _header("examples/tutorial-fixed/"),
        [
            *_common_start(),
            Step(460, spec=2, ready=2, desired=2, gauge=160, query=160, hpa=80, gpu_ready=2),
            Step(900, spec=2, ready=2, desired=2, gauge=160, query=160, hpa=80, gpu_ready=2),
        ],
    )


def lines(timeline: Timeline) -> str:
    """The timeline as the text of a ``.jsonl`` file."""
    return (
        "\n".join([encode_header(timeline.header), *(encode_record(r) for r in timeline.records)])
        + "\n"
    )
