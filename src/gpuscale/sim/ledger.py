"""The run's books: node-seconds and dollars per pool, GPU-seconds held and idle, nodes
added and removed. Pure.

Node time is counted from the moment a node is asked for (the provider bills it from
then) to the moment it is gone; GPU time is integrated between timeline records, the
state of the GPUs being constant in between.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from gpuscale.sim.cluster import Node
from gpuscale.sim.specs import SimPool

__all__ = ["CostReport", "Ledger"]


@dataclass(frozen=True, slots=True)
class CostReport:
    """Money and GPU time per pool over a run."""

    node_seconds: Mapping[str, float]
    dollars: Mapping[str, float]
    gpu_seconds: Mapping[str, float]
    idle_gpu_seconds: Mapping[str, float]
    """GPU-seconds on existing nodes not held by a Ready pod."""
    nodes_added: Mapping[str, int]
    nodes_removed: Mapping[str, int]


class Ledger:
    """Running totals per pool; the cluster tells it when nodes come and go."""

    __slots__ = (
        "_closed_node_seconds",
        "_gpu_seconds",
        "_idle_gpu_seconds",
        "_last_t",
        "_live",
        "_prices",
        "added",
        "gpus_stale",
        "gpus_state",
        "removed",
    )

    def __init__(self, pools: Sequence[SimPool]) -> None:
        self._prices = {p.name: p.price_per_hour for p in pools}
        self._gpu_seconds: dict[str, float] = {p.name: 0.0 for p in pools}
        self._idle_gpu_seconds: dict[str, float] = {p.name: 0.0 for p in pools}
        self._closed_node_seconds: dict[str, float] = {p.name: 0.0 for p in pools}
        self._live: dict[str, dict[int, float]] = {p.name: {} for p in pools}
        """Per pool, the created_at of every node not gone, in the order they came (the
        world's node list's order, so each pool's sum adds in the same order)."""
        self.added: dict[str, int] = {p.name: 0 for p in pools}
        self.removed: dict[str, int] = {p.name: 0 for p in pools}
        self.gpus_state: dict[str, tuple[int, int]] = {p.name: (0, 0) for p in pools}
        """GPUs (total, held by a Ready pod) per pool, as of the last record."""
        self.gpus_stale = True
        """A node came or went since :attr:`gpus_state` was taken (a pod's change is the
        recorder's to see: it marks its workload)."""
        self._last_t = 0.0

    def node_added(self, node: Node) -> None:
        self.added[node.pool.name] += 1
        self._live[node.pool.name][id(node)] = node.created_at
        self.gpus_stale = True

    def node_gone(self, node: Node, now: float) -> None:
        self._closed_node_seconds[node.pool.name] += now - node.created_at
        self.removed[node.pool.name] += 1
        del self._live[node.pool.name][id(node)]
        self.gpus_stale = True

    def node_seconds(self, t: float) -> dict[str, float]:
        """Node-seconds per pool from the start up to ``t``."""
        result = dict(self._closed_node_seconds)
        for pool, live in self._live.items():
            seconds = result[pool]
            for created in live.values():
                seconds += t - created
            result[pool] = seconds
        return result

    def cost(self, t: float) -> float:
        """Dollars spent on nodes from the start up to ``t``."""
        prices = self._prices
        return sum(prices[pool] * s / 3600.0 for pool, s in self.node_seconds(t).items())

    def integrate_gpus(self, t: float) -> None:
        """Add the GPU time since the last call, at the GPU state then."""
        dt = t - self._last_t
        if dt > 0:
            for pool, (total, busy) in self.gpus_state.items():
                self._gpu_seconds[pool] += total * dt
                self._idle_gpu_seconds[pool] += (total - busy) * dt
        self._last_t = t

    def observe_gpus(self, nodes: Iterable[Node]) -> None:
        """Take the GPUs' state now (total and held by a Ready pod, per pool)."""
        counts: dict[str, list[int]] = {name: [0, 0] for name in self._prices}
        for node in nodes:
            entry = counts[node.pool.name]
            entry[0] += len(node.gpu_slots)
            entry[1] += sum(1 for h in node.gpu_slots if h is not None and h.state == "Ready")
        self.gpus_state = {name: (c[0], c[1]) for name, c in counts.items()}
        self.gpus_stale = False

    def report(self, until: float) -> CostReport:
        """The totals up to ``until``."""
        node_seconds = self.node_seconds(until)
        return CostReport(
            node_seconds=node_seconds,
            dollars={k: self._prices[k] * v / 3600.0 for k, v in node_seconds.items()},
            gpu_seconds=dict(self._gpu_seconds),
            idle_gpu_seconds=dict(self._idle_gpu_seconds),
            nodes_added=dict(self.added),
            nodes_removed=dict(self.removed),
        )
