"""The two references every ``gpuscale tune`` result is measured against, each a fixed
algorithm that reads only the trace, the profile and the SLOs (never the search's
results). Pure. ``docs/tune.md`` writes both down, with the lower bound's proof.

- :func:`lower_bound`: dollars no autoscaler can go below on this trace with this
  serving model while meeting the SLOs: the work the SLOs force to be served, divided by
  what one node's replicas serve at once, or the nodes that must stay up, whichever is
  more, at the cheapest usable pool's price.
- :func:`clairvoyant_schedule`: the replicas each minute needs with perfect knowledge of
  the arrivals, asked for as long before that minute as a new node and its pod take to
  become Ready, and dropped as soon as no minute within that lead needs them; fed to
  the simulator in place of KEDA (:class:`gpuscale.sim.scalers.ReplicaSchedule`).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from gpuscale.controllers.kubelet import ReadinessProbe
from gpuscale.profile import NodePool, Profile
from gpuscale.serving import Engine, RequestResult, RequestSpec, replay
from gpuscale.sim.scalers import ReplicaSchedule
from gpuscale.sim.specs import EngineCapacity, RequestCapacity, SimWorkload
from gpuscale.sim.traces import Trace
from gpuscale.tune.slo import SLO, percentile

__all__ = [
    "WINDOW_S",
    "LowerBound",
    "alone_on_engine",
    "clairvoyant_schedule",
    "floors",
    "lead_time",
    "lower_bound",
    "own_latency",
    "replicas_per_node",
    "service_times",
]

WINDOW_S = 60.0
"""The clairvoyant schedule's window: it sizes the replicas minute by minute."""


def service_times(
    capacity: RequestCapacity | EngineCapacity, trace: Trace
) -> npt.NDArray[np.float64]:
    """Each request's time on a replica slot, as the simulator's router computes it
    (``gpuscale.sim.requests.Router._service_times``): the fixed service time plus, with
    token rates and a trace with tokens, prompt / prefill rate + output / decode rate.

    For a vLLM engine (:class:`~gpuscale.sim.specs.EngineCapacity`), the least engine
    time the request adds to its replica's steps (:class:`gpuscale.serving.StepCost`):
    its prompt tokens at ``prefill_token`` each, and each output token after the first
    one decode slot of a step, ``decode_seq`` plus its share of the step's ``base`` when
    the step is full (``max_num_seqs`` sequences). Context reads are left out (>= 0)."""
    if isinstance(capacity, EngineCapacity):
        cost = capacity.cost
        per_token = cost.decode_seq + cost.base / capacity.config.max_num_seqs
        decodes = np.maximum(trace.output_tokens - 1, 0)
        return (trace.prompt_tokens * cost.prefill_token + decodes * per_token).astype(np.float64)
    base = capacity.service_time_s or 0.0
    if capacity.uses_tokens and trace.has_tokens:
        assert capacity.prefill_tokens_per_s is not None
        assert capacity.decode_tokens_per_s is not None
        return (
            base
            + trace.prompt_tokens / capacity.prefill_tokens_per_s
            + trace.output_tokens / capacity.decode_tokens_per_s
        ).astype(np.float64)
    return np.full(len(trace), base, dtype=np.float64)


def _slots(capacity: RequestCapacity | EngineCapacity) -> int:
    """How many requests' :func:`service_times` one replica adds up at once: the queue
    model's slots; 1 for an engine, whose per-request times already share its steps."""
    return 1 if isinstance(capacity, EngineCapacity) else capacity.concurrency


def own_latency(
    capacity: RequestCapacity | EngineCapacity, trace: Trace
) -> npt.NDArray[np.float64]:
    """The least latency each request has even alone on an idle replica: its service time
    in the queue model; for an engine, one step with its whole prompt and then one step
    (``base + decode_seq`` at least) per further output token."""
    if isinstance(capacity, EngineCapacity):
        cost = capacity.cost
        decodes = np.maximum(trace.output_tokens - 1, 0)
        first = cost.base + trace.prompt_tokens * cost.prefill_token
        return (first + decodes * (cost.base + cost.decode_seq)).astype(np.float64)
    return service_times(capacity, trace)


def _spec(index: int, arrival: float, prompt: int, output: int, timeout: float) -> RequestSpec:
    return RequestSpec(
        str(index), arrival, max(1, prompt), max(1, output), deadline=arrival + timeout
    )


def _refused(capacity: EngineCapacity, prompt: int, output: int) -> bool:
    """Whether the engine refuses the request at once: its tokens can never fit the KV
    cache (``Engine.add``; the simulator counts it dropped)."""
    blocks = -(-(max(1, prompt) + max(1, output)) // capacity.config.block_size)
    return blocks > capacity.config.usable_blocks


def alone_on_engine(
    capacity: EngineCapacity, trace: Trace, *, itl: bool
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Each request's TTFT and mean inter-token latency alone on an idle, warm engine: the
    serving model itself run with that one request (its prompt in chunks of the token
    budget, every step's context reads included). No configuration answers a request
    sooner. The ITL column (NaN for one-token answers) is computed only with ``itl``;
    the TTFT needs only the prefill, so it runs the prompt with one output token. A
    request the engine refuses (:func:`_refused`) never has a first token: infinite."""
    ttft = np.empty(len(trace), dtype=np.float64)
    mean_itl = np.full(len(trace), np.nan, dtype=np.float64)
    seen: dict[tuple[int, int], tuple[float, float]] = {}
    for i, (prompt, output) in enumerate(
        zip(trace.prompt_tokens.tolist(), trace.output_tokens.tolist(), strict=True)
    ):
        key = (int(prompt), int(output) if itl else 1)
        if _refused(capacity, int(prompt), int(output)):
            ttft[i], mean_itl[i] = math.inf, math.nan
            continue
        if key not in seen:
            engine = Engine(capacity.config, capacity.cost, itl=False)
            (result,) = replay(engine, [_spec(0, 0.0, *key, math.inf)])
            gap = result.mean_itl
            seen[key] = (result.ttft or 0.0, math.nan if gap is None else gap)
        ttft[i], mean_itl[i] = seen[key]
    return ttft, mean_itl


def floors(
    capacity: RequestCapacity | EngineCapacity, trace: Trace, slos: Sequence[SLO]
) -> dict[str, float]:
    """The unavoidable floor of each ``ttft_pNN`` / ``itl_pNN`` SLO: the percentile over
    the trace's requests, each alone on an idle, warm replica (:func:`alone_on_engine`).
    Queueing, batching and cold starts only add to it, so a bound below the floor is out
    of reach of every configuration. Empty on the queue model (no such SLO there)."""
    wanted = [s for s in slos if s.measure in ("ttft", "itl") and s.quantile is not None]
    if not wanted or not isinstance(capacity, EngineCapacity) or not len(trace):
        return {}
    ttft, mean_itl = alone_on_engine(capacity, trace, itl=any(s.measure == "itl" for s in wanted))
    columns = {"ttft": ttft, "itl": mean_itl[~np.isnan(mean_itl)]}
    return {
        s.key: percentile(columns[s.measure].tolist(), s.quantile)
        for s in wanted
        if s.quantile is not None
    }


def replicas_per_node(workload: SimWorkload, pool: NodePool) -> int:
    """How many of the workload's pods one node of ``pool`` holds, by GPUs (else 1)."""
    if pool.gpu_resource is None:
        return 1
    wanted = workload.requests.get(pool.gpu_resource, 0)
    return max(1, int(pool.gpus_per_node // wanted)) if wanted else 1


def _allowed_misses(slos: Sequence[SLO], counted: int) -> int:
    """How many counted requests the SLOs allow to go unanswered on time (``late``) or
    unanswered at all (``failed``): the fewest of the bounds; all when none bounds it."""
    allowed = counted
    for slo in slos:
        if slo.measure not in ("late", "failed"):
            continue
        bound = slo.bound * counted if slo.share else slo.bound
        most = math.floor(bound) if slo.op != "<" else math.ceil(bound) - 1
        allowed = min(allowed, max(0, most))
    return allowed


@dataclass(frozen=True, slots=True)
class LowerBound:
    """The lower bound and its parts."""

    dollars: float
    work_node_hours: float
    """Node-hours the forced work needs at full concurrency on every node."""
    floor_node_hours: float
    """Node-hours the pools' lowest counts and the start's nodes force."""
    forced_requests: int
    pool: str
    price_per_hour: float
    unavoidable_late: float = 0.0
    """Share of the counted requests whose own service time is over the latency target:
    late on an idle replica, so late under every configuration."""
    floors: Mapping[str, float] = field(default_factory=dict)
    """The floor of each ``ttft_pNN`` / ``itl_pNN`` SLO (:func:`floors`), by its key."""

    def as_dict(self) -> dict[str, float | int | str | dict[str, float]]:
        """JSON-ready."""
        return {
            "dollars": self.dollars,
            "work_node_hours": self.work_node_hours,
            "floor_node_hours": self.floor_node_hours,
            "forced_requests": self.forced_requests,
            "pool": self.pool,
            "price_per_hour": self.price_per_hour,
            "unavoidable_late": self.unavoidable_late,
            "floors": dict(self.floors),
        }


def lower_bound(
    *,
    trace: Trace,
    workload: SimWorkload,
    pools: Sequence[NodePool],
    lowest_nodes: int,
    initial_nodes: int,
    unneeded_time_s: float,
    until: float,
    slos: Sequence[SLO],
) -> LowerBound:
    """Dollars no configuration meeting ``slos`` can spend less than (``docs/tune.md``).

    ``lowest_nodes`` is the fewest nodes the pool may be held at (the lowest
    ``min_nodes`` the search may choose), ``initial_nodes`` the nodes running at the
    start, which the cluster autoscaler keeps for at least ``unneeded_time_s``."""
    capacity = workload.capacity
    if capacity is None or not pools:
        raise ValueError("the lower bound needs a workload that serves requests")
    cheapest = min(pools, key=lambda p: p.price_per_hour)
    per_node = replicas_per_node(workload, cheapest)
    early = trace.offsets < until - capacity.timeout_s
    counted = service_times(capacity, trace)[early]
    forced = len(counted) - _allowed_misses(slos, len(counted))
    work = float(np.sort(counted)[:forced].sum()) if forced > 0 else 0.0
    work_node_s = work / (_slots(capacity) * per_node)
    floor_node_s = max(lowest_nodes * until, initial_nodes * min(until, unneeded_time_s))
    node_s = max(work_node_s, floor_node_s)
    target = capacity.latency_target_s
    alone = own_latency(capacity, trace)[early]
    slow = int((alone > target).sum()) if target is not None else 0
    return LowerBound(
        dollars=node_s / 3600 * cheapest.price_per_hour,
        work_node_hours=work_node_s / 3600,
        floor_node_hours=floor_node_s / 3600,
        forced_requests=max(0, forced),
        pool=cheapest.name,
        price_per_hour=cheapest.price_per_hour,
        unavoidable_late=slow / len(counted) if len(counted) else 0.0,
        floors=floors(capacity, trace, slos),
    )


def lead_time(workload: SimWorkload, pool: NodePool, profile: Profile) -> float:
    """Seconds from asking for a replica to its being Ready when it needs a new node:
    the cluster autoscaler's wait for an unschedulable pod and its scan, the node's
    provisioning, the image pull, the start-up, and one readiness probe period."""
    autoscaler = profile.autoscaler
    wait = autoscaler.scale_up_delay_gpu if pool.gpu != "none" else autoscaler.scale_up_delay
    probe = workload.readiness.period_s if isinstance(workload.readiness, ReadinessProbe) else 0.0
    return (
        wait
        + autoscaler.scan_interval
        + pool.provisioning_time
        + workload.image_pull_s
        + workload.startup_s
        + probe
    )


def _fits(
    arrivals: Sequence[float],
    times: Sequence[float],
    *,
    replicas: int,
    concurrency: int,
    start: float,
    target: float,
) -> bool:
    """Whether ``replicas`` FIFO queues of ``concurrency`` slots, free at ``start`` and
    dealt the requests in turn, answer each request that could be on time (service time
    within ``target``) within ``target``."""
    if replicas <= 0:
        return not any(s <= target for s in times)
    free = [[start] * concurrency for _ in range(replicas)]
    for i, (arrival, service) in enumerate(zip(arrivals, times, strict=True)):
        slots = free[i % replicas]
        begin = max(arrival, heapq.heappop(slots))
        heapq.heappush(slots, begin + service)
        if service <= target and begin + service - arrival > target:
            return False
    return True


def _slice(trace: Trace, lo: int, hi: int) -> Trace:
    """Requests ``lo`` to ``hi`` of ``trace``, their times kept."""
    return Trace(
        trace.offsets[lo:hi],
        trace.prompt_tokens[lo:hi],
        trace.output_tokens[lo:hi],
        trace.source,
        trace.has_tokens,
        trace.format,
    )


def _cut(
    column: npt.NDArray[np.float64] | None, lo: int, hi: int
) -> npt.NDArray[np.float64] | None:
    return None if column is None else column[lo:hi]


def _engine_fits(
    window: Trace,
    alone: npt.NDArray[np.float64],
    *,
    replicas: int,
    capacity: EngineCapacity,
    slos: Sequence[SLO],
    alone_ttft: npt.NDArray[np.float64] | None,
) -> bool:
    """Whether ``replicas`` engines, idle at the window's start and dealt its requests in
    turn, answer each request that could be on time (``alone`` within the target) within
    the target, and keep each ``ttft_pNN`` SLO among the window's requests, or its floor
    there when that is higher (a failed request counts as slower than any bound)."""
    target = capacity.latency_target_s
    if replicas <= 0:
        return target is None or not bool((alone <= target).any())
    groups: list[list[RequestSpec]] = [[] for _ in range(replicas)]
    for i, (arrival, prompt, output) in enumerate(
        zip(
            window.offsets.tolist(),
            window.prompt_tokens.tolist(),
            window.output_tokens.tolist(),
            strict=True,
        )
    ):
        if not _refused(capacity, prompt, output):
            groups[i % replicas].append(_spec(i, arrival, prompt, output, capacity.timeout_s))
    results: dict[int, RequestResult] = {}
    for group in groups:
        if group:
            engine = Engine(capacity.config, capacity.cost, itl=False)
            results.update((int(r.id), r) for r in replay(engine, group))
    if target is not None:
        for i in np.flatnonzero(alone <= target).tolist():
            done = results.get(i)  # None: refused, late under every count
            if done is not None and (done.timed_out or done.e2e > target):
                return False
    for slo in slos:
        if slo.measure != "ttft" or slo.quantile is None or alone_ttft is None:
            continue
        values = [
            math.inf if r is None or r.timed_out or r.ttft is None else r.ttft
            for r in (results.get(i) for i in range(len(window)))
        ]
        floor = percentile(alone_ttft.tolist(), slo.quantile)
        if percentile(values, slo.quantile) > max(slo.bound, floor):
            return False
    return True


def _window_replicas(
    window: Trace,
    times: npt.NDArray[np.float64],
    start: float,
    capacity: RequestCapacity | EngineCapacity,
    *,
    most: int,
    slos: Sequence[SLO],
    alone: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64] | None] | None,
) -> int:
    if not len(window):
        return 0
    target = capacity.latency_target_s
    if isinstance(capacity, EngineCapacity):
        assert alone is not None
        engine_capacity = capacity

        def fits(count: int) -> bool:
            return _engine_fits(
                window,
                alone[0],
                replicas=count,
                capacity=engine_capacity,
                slos=slos,
                alone_ttft=alone[1],
            )

    elif target is None:
        return min(most, math.ceil(float(times.sum()) / (WINDOW_S * _slots(capacity))))
    else:
        queue_target, concurrency = target, capacity.concurrency

        def fits(count: int) -> bool:
            return _fits(
                window.offsets.tolist(),
                times.tolist(),
                replicas=count,
                concurrency=concurrency,
                start=start,
                target=queue_target,
            )

    low, high = 0, most
    while low < high:
        middle = (low + high) // 2
        if fits(middle):
            high = middle
        else:
            low = middle + 1
    return low


def clairvoyant_schedule(
    *,
    trace: Trace,
    workload: SimWorkload,
    lead_s: float,
    until: float,
    most: int,
    slos: Sequence[SLO] = (),
) -> tuple[ReplicaSchedule, tuple[int, ...]]:
    """The schedule, and the replicas each window needs.

    Window ``w`` (``[w·60s, (w+1)·60s)``) needs the fewest replicas that, free at the
    window's start and dealt its requests in turn, answer each of them within the
    latency target (a request that cannot be on time on an idle slot is not counted);
    on the queue model without a target, the window's work over its length. On the vLLM
    model the replicas are engines run on the window's requests (:func:`_engine_fits`),
    which also keep the window's ``ttft_pNN`` SLOs. At each window's start the schedule asks
    for the most any window starting within ``lead_s`` needs, so a replica that needs a
    new node is Ready in time, and drops the rest."""
    capacity = workload.capacity
    if capacity is None:
        raise ValueError("the clairvoyant schedule needs a workload that serves requests")
    times = service_times(capacity, trace)
    alone = None
    if isinstance(capacity, EngineCapacity):
        ttft_slo = any(s.measure == "ttft" for s in slos)
        alone = (
            own_latency(capacity, trace),
            alone_on_engine(capacity, trace, itl=False)[0] if ttft_slo else None,
        )
    count = max(1, math.ceil(until / WINDOW_S))
    edges = np.searchsorted(trace.offsets, np.arange(count + 1) * WINDOW_S)
    needs = []
    for w in range(count):
        lo, hi = int(edges[w]), int(edges[w + 1])
        window = _slice(trace, lo, hi)
        part = None if alone is None else (alone[0][lo:hi], _cut(alone[1], lo, hi))
        needs.append(
            _window_replicas(
                window, times[lo:hi], w * WINDOW_S, capacity, most=most, slos=slos, alone=part
            )
        )
    ahead = math.ceil(lead_s / WINDOW_S)
    planned = [max(needs[w : w + ahead + 1]) for w in range(count)]
    points_t: list[float] = []
    points_r: list[int] = []
    for w, replicas in enumerate(planned):
        if not points_r or points_r[-1] != replicas:
            points_t.append(w * WINDOW_S)
            points_r.append(replicas)
    return ReplicaSchedule(points_t, points_r, period_s=5.0), tuple(needs)
