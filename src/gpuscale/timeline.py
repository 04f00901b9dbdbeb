"""The timeline: what happened to a workload's scaling chain, one record per change.

Both worlds write it (``gpuscale simulate`` and ``demo`` in virtual time, ``gpuscale
watch`` on a live cluster),
and everything that reports reads it, so prediction and reality compare line by line.

On disk it is JSON Lines: the first line is the :class:`Header`, every later line a
:class:`Record`. A record is written whenever anything it holds changes (a replica
count, a pod phase, a node state, a metric value, a controller decision); times are
seconds since the start of the run. This module only encodes and decodes lines; the
caller owns the file.

Pod phases used in ``WorkloadState.pods``: ``Pending`` (not bound to a node),
``Starting`` (bound; pulling the image or not yet Ready), ``Ready``, ``Terminating``.
Node states used in ``Record.nodes``: ``provisioning`` (asked for, not yet Ready),
``ready``, ``deleting``.

``Record.gpus`` (added in the same format version; absent in older files, which decode
to an empty mapping) gives per pool the GPUs on existing nodes (``total``) and those
held by Ready pods (``busy``), so idle GPU-hours can be computed from the timeline alone.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from gpuscale.errors import InputError

__all__ = [
    "FORMAT",
    "NODE_STATES",
    "POD_PHASES",
    "VERSION",
    "Decision",
    "Header",
    "Record",
    "Timeline",
    "WorkloadState",
    "World",
    "decode_lines",
    "encode_header",
    "encode_record",
]

FORMAT = "gpuscale-timeline"
VERSION = 1
POD_PHASES = ("Pending", "Starting", "Ready", "Terminating")
NODE_STATES = ("provisioning", "ready", "deleting")

World = Literal["simulate", "live"]


@dataclass(frozen=True, slots=True)
class Decision:
    """One controller decision, with the reason upstream would give for it."""

    controller: str
    """Who decided: ``keda``, ``hpa``, ``replicaset``, ``scheduler``, ``cluster-autoscaler``,
    ``kubelet``, ``prometheus`` or ``load``."""
    action: str
    """What it did: ``scale``, ``activate``, ``bind``, ``scale-up``, ``remove-node``, ``hold``..."""
    reason: str
    """Why, in upstream's words where there are some (``ScaleUpLimit``, ``FailedScheduling``)."""
    target: str = ""
    """The object acted on: ``deployment/ns/name``, ``pod/ns/name``, ``pool/name``."""
    detail: str = ""
    """The numbers behind the decision, e.g. ``metric 160 / target 80 -> desired 2``."""


@dataclass(frozen=True, slots=True)
class WorkloadState:
    """A scaled workload (Deployment or StatefulSet) at one instant."""

    name: str
    """``namespace/name`` of the workload."""
    spec: int
    """``spec.replicas``: what the scale subresource was last set to."""
    status: int
    """``status.replicas``: non-terminated pods, Pending ones included."""
    ready: int
    """Pods with the Ready condition."""
    desired: int | None = None
    """The HPA's ``status.desiredReplicas``; None before the HPA's first sync or without one."""
    pods: Mapping[str, int] = field(default_factory=dict)
    """Pod count per phase (see :data:`POD_PHASES`); phases with no pods may be left out."""
    metrics: Mapping[str, float | None] = field(default_factory=dict)
    """Named values: the trigger query's result (``query:<metric>``), what the HPA read
    (``hpa:<metric>``) and any workload metric worth plotting. None means no value."""


@dataclass(frozen=True, slots=True)
class Record:
    """Everything that changed at time ``t``, with the full state after the change."""

    t: float
    """Seconds since the start of the run."""
    workloads: tuple[WorkloadState, ...]
    nodes: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    """Node count per pool and state (see :data:`NODE_STATES`)."""
    cost_usd: float = 0.0
    """Money spent on nodes since the start of the run."""
    load: Mapping[str, float] = field(default_factory=dict)
    """The load driving the run at ``t``: ``request_rate``, gauge values set by a scenario."""
    decisions: tuple[Decision, ...] = ()
    """Decisions taken at ``t`` (may be empty when only state changed)."""
    gpus: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    """GPUs per pool: ``{"total": on existing nodes, "busy": held by Ready pods}``."""


@dataclass(frozen=True, slots=True)
class Header:
    """What produced the timeline."""

    world: World
    """``simulate`` (virtual time) or ``live`` (a real cluster, on its clock)."""
    started_at: str | None = None
    """Wall-clock start as ISO 8601 for ``live``; None in virtual time."""
    pools: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Node pools known at the start: ``{name: {"price_per_hour": .., "gpus_per_node": ..}}``."""
    meta: Mapping[str, Any] = field(default_factory=dict)
    """Free-form provenance: manifests, profile, scenario, seed, gpuscale version."""


@dataclass(frozen=True, slots=True)
class Timeline:
    """A decoded timeline."""

    header: Header
    records: tuple[Record, ...]


def _finite_or_none(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return value


def encode_header(header: Header) -> str:
    """The header as one JSON line (no trailing newline)."""
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "world": header.world,
        "started_at": header.started_at,
        "pools": header.pools,
        "meta": header.meta,
    }
    return json.dumps(doc, separators=(",", ":"), sort_keys=True)


def encode_record(record: Record) -> str:
    """A record as one JSON line (no trailing newline). Non-finite metric values become null."""
    doc: dict[str, Any] = {
        "t": record.t,
        "workloads": [
            {
                "name": w.name,
                "spec": w.spec,
                "status": w.status,
                "ready": w.ready,
                "desired": w.desired,
                "pods": dict(w.pods),
                "metrics": {k: _finite_or_none(v) for k, v in w.metrics.items()},
            }
            for w in record.workloads
        ],
        "nodes": {pool: dict(states) for pool, states in record.nodes.items()},
        "cost_usd": record.cost_usd,
        "load": dict(record.load),
        "decisions": [
            {k: v for k, v in _decision_dict(d).items() if v != ""} for d in record.decisions
        ],
    }
    if record.gpus:
        doc["gpus"] = {pool: dict(counts) for pool, counts in record.gpus.items()}
    return json.dumps(doc, separators=(",", ":"))


def _decision_dict(decision: Decision) -> dict[str, str]:
    return {
        "controller": decision.controller,
        "action": decision.action,
        "reason": decision.reason,
        "target": decision.target,
        "detail": decision.detail,
    }


def decode_lines(lines: Iterable[str], *, source: str = "<timeline>") -> Timeline:
    """Decode a timeline from its lines; errors name ``source:line`` and what was expected."""
    header: Header | None = None
    records: list[Record] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        try:
            doc = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"not a JSON line ({exc.msg})",
                where=where,
                fix="pass a file written by gpuscale simulate, demo or watch --timeline",
            ) from None
        if not isinstance(doc, dict):
            raise InputError(
                "expected a JSON object",
                where=where,
                fix="pass a file written by gpuscale simulate, demo or watch --timeline",
            )
        try:
            if header is None:
                header = _decode_header(doc)
            else:
                records.append(_decode_record(doc))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(
                f"malformed timeline {'header' if header is None else 'record'} ({exc!s})",
                where=where,
                fix="pass a file written by gpuscale simulate, demo or watch --timeline",
            ) from None
    if header is None:
        raise InputError(
            "empty timeline",
            where=source,
            fix="pass a file written by gpuscale simulate, demo or watch",
        )
    return Timeline(header=header, records=tuple(records))


def _decode_header(doc: Mapping[str, Any]) -> Header:
    if doc.get("format") != FORMAT:
        raise ValueError(f"first line must have format {FORMAT!r}")
    if doc.get("version") != VERSION:
        raise ValueError(
            f"unsupported version {doc.get('version')!r}, this gpuscale reads {VERSION}"
        )
    world = doc["world"]
    if world not in ("simulate", "live"):
        raise ValueError(f"unknown world {world!r}")
    return Header(
        world=world,
        started_at=doc.get("started_at"),
        pools=dict(doc.get("pools") or {}),
        meta=dict(doc.get("meta") or {}),
    )


def _decode_record(doc: Mapping[str, Any]) -> Record:
    return Record(
        t=float(doc["t"]),
        workloads=tuple(
            WorkloadState(
                name=str(w["name"]),
                spec=int(w["spec"]),
                status=int(w["status"]),
                ready=int(w["ready"]),
                desired=None if w.get("desired") is None else int(w["desired"]),
                pods={str(k): int(v) for k, v in (w.get("pods") or {}).items()},
                metrics={
                    str(k): None if v is None else float(v)
                    for k, v in (w.get("metrics") or {}).items()
                },
            )
            for w in doc["workloads"]
        ),
        nodes={
            str(pool): {str(s): int(n) for s, n in states.items()}
            for pool, states in (doc.get("nodes") or {}).items()
        },
        cost_usd=float(doc.get("cost_usd", 0.0)),
        load={str(k): float(v) for k, v in (doc.get("load") or {}).items()},
        decisions=tuple(
            Decision(
                controller=str(d["controller"]),
                action=str(d["action"]),
                reason=str(d["reason"]),
                target=str(d.get("target", "")),
                detail=str(d.get("detail", "")),
            )
            for d in doc.get("decisions") or ()
        ),
        gpus={
            str(pool): {str(k): int(n) for k, n in counts.items()}
            for pool, counts in (doc.get("gpus") or {}).items()
        },
    )
