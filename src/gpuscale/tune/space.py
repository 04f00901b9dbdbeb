"""The search space of ``gpuscale tune``: which settings of the user's ScaledObject and
profile are searched, within which bounds, and how a point of the space becomes
manifests. Pure.

:func:`derive_space` reads the current values (KEDA's defaults where a key is not
written) and derives each bound from them (``docs/tune.md`` lists the rules); the
profile's ``tune:`` section overrides any bound, and ``tune.keep`` keeps a setting as
written. :meth:`Space.settings` turns a point (the values Optuna proposed) into a whole
:class:`Settings`, repaired so that KEDA's webhook and the API server would admit it
(``maxReplicaCount >= minReplicaCount``, ``idleReplicaCount < minReplicaCount``);
:func:`edits` lists the keys whose values differ from the user's, the minimal edit that
``--write`` applies to their files and :func:`apply` applies to the loaded manifests.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Literal, Protocol

from gpuscale.errors import InputError
from gpuscale.kube import find_untolerated_taint
from gpuscale.manifests import KeyPath, Manifest, ManifestSet
from gpuscale.profile import NodePool, Profile, TuneSpec
from gpuscale.sim.specs import SimWorkload

__all__ = [
    "DELETE",
    "Param",
    "Settings",
    "Space",
    "Suggester",
    "apply",
    "derive_space",
    "edits",
    "format_number",
    "starting_with",
    "workload_pools",
]

DELETE = object()
"""An edit that removes the key."""

_BEHAVIOR: KeyPath = ("spec", "advanced", "horizontalPodAutoscalerConfig", "behavior")
_MAX_PERIOD_S = 1800
"""The HPA's limit on a policy's periodSeconds (validation.go: at most 1800)."""
_MAX_WINDOW_S = 3600
"""The HPA's limit on stabilizationWindowSeconds (at most one hour)."""


class Suggester(Protocol):
    """What a search proposes values through (an Optuna trial has these methods)."""

    def suggest_float(self, name: str, low: float, high: float, *, log: bool = False) -> float:
        """A float in [low, high]."""

    def suggest_int(self, name: str, low: int, high: int) -> int:
        """An int in [low, high]."""

    def suggest_categorical(self, name: str, choices: Sequence[Any]) -> Any:
        """One of ``choices``."""


@dataclass(frozen=True, slots=True)
class Param:
    """One searched setting."""

    name: str
    kind: Literal["float", "int", "choice"]
    low: float = 0.0
    high: float = 0.0
    log: bool = False
    choices: tuple[Any, ...] = ()

    def suggest(self, trial: Suggester) -> Any:
        """The value ``trial`` proposes for this setting."""
        if self.kind == "choice":
            return trial.suggest_categorical(self.name, list(self.choices))
        if self.kind == "int":
            return trial.suggest_int(self.name, int(self.low), int(self.high))
        return trial.suggest_float(self.name, self.low, self.high, log=self.log)

    def describe(self) -> str:
        """``threshold 1.5–24 (log)``, ``select_policy Max|Min``."""
        if self.kind == "choice":
            return f"{self.name} " + "|".join(str(c) for c in self.choices)
        scale = " (log)" if self.log else ""
        return f"{self.name} {format_number(self.low)}–{format_number(self.high)}{scale}"


@dataclass(frozen=True, slots=True)
class Settings:
    """Every tunable setting of one configuration (seconds as whole numbers, as KEDA's
    and the HPA's fields take them)."""

    threshold: float
    activation_threshold: float
    metric_type: str
    min_replicas: int
    max_replicas: int
    idle_replicas: int | None
    polling_interval: int
    cooldown: int
    scale_down_stabilization: int
    scale_up_pods: int
    scale_up_period: int
    scale_down_pods: int
    scale_down_period: int
    select_policy: str
    gpu_min_nodes: int

    def as_dict(self) -> dict[str, Any]:
        """Name → value."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def format_number(value: float) -> str:
    """A threshold as KEDA reads it: at most 4 significant digits, never in e-notation
    (``12.5``, ``0.0031``, ``1200``)."""
    if value == 0 or not math.isfinite(value):
        return "0"
    digits = max(0, 3 - math.floor(math.log10(abs(value))))
    text = f"{round(value, digits):.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _number(value: Any, default: float) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def _whole(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _policy(rules: Mapping[str, Any], default: tuple[int, int]) -> tuple[int, int, int | None]:
    """The first Pods policy of a scaleUp/scaleDown rule: (value, periodSeconds, its
    index among the policies), or the default and None."""
    for index, policy in enumerate(rules.get("policies") or ()):
        if isinstance(policy, dict) and policy.get("type") == "Pods":
            value = _whole(policy.get("value"), default[0])
            return value, _whole(policy.get("periodSeconds"), default[1]), index
    return (*default, None)


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def workload_pools(workload: SimWorkload, profile: Profile) -> tuple[NodePool, ...]:
    """The node pools the workload's pods can run on: their nodes carry every
    nodeSelector label, offer every resource the pod requests (its GPUs included), and
    have no taint the pod does not tolerate (required node affinity is not read)."""
    out = []
    for pool in profile.node_pools:
        labels = pool.labels
        if any(labels.get(k) != v for k, v in workload.node_selector.items()):
            continue
        resources = {"cpu": pool.cpu, "memory": pool.memory}
        if pool.gpu_resource is not None:
            resources[pool.gpu_resource] = pool.gpus_per_node
        if any(resources.get(name, 0) < amount for name, amount in workload.requests.items()):
            continue
        if find_untolerated_taint(pool.node_taints, workload.tolerations) is not None:
            continue
        out.append(pool)
    return tuple(out)


@dataclass(frozen=True)
class Space:
    """The searched settings and the user's current ones."""

    params: tuple[Param, ...]
    current: Settings
    gpu_pool: str | None
    """The pool whose ``min_nodes`` is searched (None: no autoscaling pool to warm)."""
    gpu_pool_max: int
    query_allows_value: bool
    """Whether the trigger's query is an average (``metricType: Value`` then reads as the
    per-pod target it is)."""
    up_policy: int | None = None
    """Index of the user's scaleUp Pods policy (edited in place), None: none written."""
    down_policy: int | None = None
    """The same for scaleDown."""
    room: int = 0
    """Replicas the usable pools hold as the profile writes them (nodes × pods per node)."""
    pods_per_node: int = 1
    """Replicas one node of the GPU pool holds."""

    def gpu_max_nodes(self, settings: Settings) -> int:
        """The GPU pool's ``max_nodes`` that ``settings`` need: the profile's, raised by
        the nodes a ``maxReplicaCount`` above :attr:`room` needs (``docs/tune.md``)."""
        beyond = max(0, settings.max_replicas - self.room)
        return self.gpu_pool_max + -(-beyond // self.pods_per_node)

    def _max_replicas_range(self) -> tuple[int, int]:
        """The lowest and highest ``maxReplicaCount`` of the space (repaired to >= 1)."""
        param = next((p for p in self.params if p.name == "max_replicas"), None)
        if param is None:
            low = high = self.current.max_replicas
        elif param.kind == "choice":
            low = high = int(param.choices[0])
        else:
            low, high = int(param.low), int(param.high)
        return max(1, low), max(1, high)

    def fewest_at_start(self, start: int) -> int:
        """The fewest replicas a configuration of the space begins a run with when the
        run starts with ``start`` (:func:`apply` lowers it to ``maxReplicaCount``)."""
        return min(start, self._max_replicas_range()[0])

    @property
    def replica_ceiling(self) -> int:
        """The most replicas any configuration of the space may run."""
        return max(self.room, self._max_replicas_range()[1])

    def settings(self, point: Mapping[str, Any]) -> Settings:
        """The whole configuration at ``point`` (unsearched settings as they are),
        repaired to what the validators admit."""
        values = self.current.as_dict()
        for name, value in point.items():
            values[name] = value
        for name in (
            "min_replicas",
            "max_replicas",
            "polling_interval",
            "cooldown",
            "scale_down_stabilization",
            "scale_up_pods",
            "scale_up_period",
            "scale_down_pods",
            "scale_down_period",
            "gpu_min_nodes",
        ):
            values[name] = round(values[name])
        values["threshold"] = float(format_number(values["threshold"]))
        values["activation_threshold"] = float(format_number(values["activation_threshold"]))
        values["max_replicas"] = max(values["max_replicas"], values["min_replicas"], 1)
        if "max_replicas" in point:
            # Raised to minReplicaCount, it stays within its own bounds: minReplicaCount
            # is lowered instead (derive_space made sure the bounds overlap).
            values["max_replicas"] = min(values["max_replicas"], self._max_replicas_range()[1])
            values["min_replicas"] = min(values["min_replicas"], values["max_replicas"])
        if values["idle_replicas"] is not None and values["min_replicas"] < 1:
            values["idle_replicas"] = None
        values["polling_interval"] = max(1, values["polling_interval"])
        values["scale_up_pods"] = max(1, values["scale_up_pods"])
        values["scale_down_pods"] = max(1, values["scale_down_pods"])
        for name in ("scale_up_period", "scale_down_period"):
            values[name] = min(max(1, values[name]), _MAX_PERIOD_S)
        values["scale_down_stabilization"] = min(values["scale_down_stabilization"], _MAX_WINDOW_S)
        values["gpu_min_nodes"] = min(
            values["gpu_min_nodes"], self.gpu_max_nodes(Settings(**values))
        )
        return Settings(**values)

    def point(self, settings: Settings) -> dict[str, Any] | None:
        """The values of the searched settings that give exactly ``settings`` (what
        :meth:`settings` turns back into them), or None when one lies outside its
        bounds or the repairs would change it: ``settings`` is not in the space."""
        point = {p.name: getattr(settings, p.name) for p in self.params}
        for param in self.params:
            value = point[param.name]
            if param.kind == "choice":
                if value not in param.choices:
                    return None
            elif value is None or not param.low <= value <= param.high:
                return None
        return point if self.settings(point) == settings else None

    def sample(self, trial: Suggester) -> Settings:
        """A configuration proposed by ``trial``."""
        return self.settings({p.name: p.suggest(trial) for p in self.params})

    def describe(self) -> list[str]:
        """One line per searched setting."""
        return [p.describe() for p in self.params]

    def outside(self, tune: TuneSpec) -> list[str]:
        """One warning per bound written in ``tune`` that leaves out the user's current
        value: their configuration is not a point of the search (it is still measured
        as "your config")."""
        out = []
        for param in self.params:
            given = getattr(tune, param.name, None)
            value = getattr(self.current, param.name)
            if param.kind == "choice" or given is None or param.low <= value <= param.high:
                continue
            out.append(
                f"tune.{param.name} [{format_number(given[0])}, {format_number(given[1])}] "
                f"leaves out the current value {format_number(value)}: the search will not "
                "try it (widen the range to include it)"
            )
        return out


def _scaled_object(manifests: ManifestSet, target: str) -> Manifest:
    found = [
        m
        for m in manifests.by_kind("ScaledObject")
        if m.get(("spec", "scaleTargetRef", "name")) == target
    ]
    if not found:
        raise InputError(
            f"no ScaledObject scales {target}",
            where=", ".join(manifests.files) or "manifests",
            fix="tune a workload a ScaledObject scales (--workload)",
        )
    if len(found) > 1:
        raise InputError(
            f"{len(found)} ScaledObjects scale {target}",
            where=str(found[1].source),
            fix="keep one ScaledObject per workload",
        )
    return found[0]


def _current(so: Manifest, pool: NodePool | None) -> tuple[Settings, bool, int | None, int | None]:
    spec = so.spec
    trigger = _map((spec.get("triggers") or [{}])[0])
    metadata = _map(trigger.get("metadata"))
    behavior = _map(so.get(_BEHAVIOR))
    up, down = _map(behavior.get("scaleUp")), _map(behavior.get("scaleDown"))
    up_pods, up_period, up_index = _policy(up, (4, 15))
    down_pods, down_period, down_index = _policy(down, (1, 60))
    query = str(metadata.get("query", "")).strip()
    threshold = _number(metadata.get("threshold"), 1.0)
    idle = spec.get("idleReplicaCount")
    current = Settings(
        threshold=threshold if threshold > 0 else 1.0,
        activation_threshold=max(0.0, _number(metadata.get("activationThreshold"), 0.0)),
        metric_type=str(trigger.get("metricType") or "AverageValue"),
        min_replicas=_whole(spec.get("minReplicaCount"), 0),
        max_replicas=_whole(spec.get("maxReplicaCount"), 100),
        idle_replicas=idle if isinstance(idle, int) and not isinstance(idle, bool) else None,
        polling_interval=_whole(spec.get("pollingInterval"), 30),
        cooldown=_whole(spec.get("cooldownPeriod"), 300),
        scale_down_stabilization=_whole(down.get("stabilizationWindowSeconds"), 300),
        scale_up_pods=up_pods,
        scale_up_period=up_period,
        scale_down_pods=down_pods,
        scale_down_period=down_period,
        select_policy=str(down.get("selectPolicy") or "Max"),
        gpu_min_nodes=pool.lowest if pool is not None else 0,
    )
    return current, query.startswith("avg"), up_index, down_index


def derive_space(
    manifests: ManifestSet, profile: Profile, workload: SimWorkload
) -> tuple[Space, Manifest]:
    """The space around the ScaledObject that scales ``workload`` (and the ScaledObject)."""
    so = _scaled_object(manifests, workload.name)
    pools = workload_pools(workload, profile)
    gpu = next((p for p in pools if p.autoscaling and p.gpu != "none"), None)
    gpu = gpu or next((p for p in pools if p.autoscaling), None)
    current, allows_value, up_index, down_index = _current(so, gpu)
    per_node = 1
    if gpu is not None and gpu.gpu_resource is not None:
        wanted = workload.requests.get(gpu.gpu_resource, 0)
        per_node = max(1, int(gpu.gpus_per_node // wanted)) if wanted else 1
    room = sum(p.highest for p in pools) * per_node or current.max_replicas
    # The GPU pool may grow to twice its max_nodes when maxReplicaCount needs it.
    ceiling = room + (gpu.highest * per_node if gpu is not None and gpu.autoscaling else 0)
    tune: TuneSpec = profile.tune
    keep = set(tune.keep)
    t = current.threshold
    derived: list[Param] = []

    def add(
        name: str, default: tuple[float, float], kind: Literal["float", "int"], log: bool = False
    ) -> None:
        if name in keep:
            return
        given = getattr(tune, name)
        low, high = given if given is not None else default
        if kind == "int":
            low, high = math.ceil(low), math.floor(high)
        if low == high:
            derived.append(Param(name, "choice", choices=(int(low) if kind == "int" else low,)))
            return
        derived.append(Param(name, kind, float(low), float(high), log and low > 0))

    add("threshold", (t / 4, t * 4), "float", log=True)
    add("activation_threshold", (0.0, t), "float")
    add("min_replicas", (0, min(current.min_replicas + 1, room)), "int")
    add(
        "max_replicas",
        (1, max(1, min(ceiling, 2 * current.max_replicas))),
        "int",
    )
    if "idle_replicas" not in keep:
        derived.append(Param("idle_replicas", "choice", choices=(None, 0)))
    add("polling_interval", (5, max(60, current.polling_interval)), "int")
    add("cooldown", (30, max(600, current.cooldown)), "int")
    add("scale_down_stabilization", (0, 1800), "int")
    add("scale_up_pods", (1, 8), "int")
    add("scale_up_period", (15, 300), "int")
    add("scale_down_pods", (1, 4), "int")
    add("scale_down_period", (15, 600), "int")
    if "select_policy" not in keep:
        derived.append(Param("select_policy", "choice", choices=("Max", "Min")))
    if "metric_type" not in keep and allows_value:
        derived.append(Param("metric_type", "choice", choices=("AverageValue", "Value")))
    if gpu is not None:
        add("gpu_min_nodes", (0, min(2, gpu.highest)), "int")
    _check_overlap(derived, current, profile, gpu)
    space = Space(
        params=tuple(derived),
        current=current,
        gpu_pool=gpu.name if gpu is not None else None,
        gpu_pool_max=gpu.highest if gpu is not None else 0,
        query_allows_value=allows_value,
        up_policy=up_index,
        down_policy=down_index,
        room=room,
        pods_per_node=per_node,
    )
    return space, so


def _bounds(params: Sequence[Param], name: str, current: float) -> tuple[float, float]:
    """The lowest and highest value of ``name`` in the space (its current one when it is
    not searched)."""
    param = next((p for p in params if p.name == name), None)
    if param is None:
        return current, current
    if param.kind == "choice":
        return param.choices[0], param.choices[0]
    return param.low, param.high


def _check_overlap(
    params: Sequence[Param], current: Settings, profile: Profile, gpu: NodePool | None
) -> None:
    """Refuse bounds no repair can meet: the lowest minReplicaCount above the highest
    maxReplicaCount (when one of them is derived or kept; both written, the profile
    refuses it), and the GPU pool's warm nodes above its ``max_nodes``."""
    low = _bounds(params, "min_replicas", current.min_replicas)[0]
    high = _bounds(params, "max_replicas", current.max_replicas)[1]
    if low > high:
        written = "min_replicas" if profile.tune.min_replicas is not None else "max_replicas"
        where = profile.line_of(("tune", written))
        raise InputError(
            f"tune.min_replicas: the lowest minReplicaCount of the search, {low:g}, is above "
            f"the highest maxReplicaCount, {high:g}",
            where=str(where) if where is not None else profile.source,
            fix=f"write tune.min_replicas with a low of at most {high:g}, or tune.max_replicas "
            f"with a high of at least {low:g}",
        )
    if gpu is None or profile.tune.gpu_min_nodes is None:
        return
    low = profile.tune.gpu_min_nodes[0]
    if "gpu_min_nodes" not in profile.tune.keep and low > gpu.highest:
        where = profile.line_of(("tune", "gpu_min_nodes"))
        raise InputError(
            f"tune.gpu_min_nodes: low {low} is above the {gpu.name} pool's max_nodes {gpu.highest}",
            where=str(where) if where is not None else profile.source,
            fix=f"write tune.gpu_min_nodes with a low of at most {gpu.highest}, or raise "
            f"node_pools' {gpu.name} max_nodes",
        )


def _policy_edits(
    out: dict[KeyPath, Any], rule: str, index: int | None, value: int, period: int
) -> None:
    policies: KeyPath = (*_BEHAVIOR, rule, "policies")
    if index is None:
        out[policies] = [{"type": "Pods", "value": value, "periodSeconds": period}]
        return
    out[(*policies, index, "value")] = value
    out[(*policies, index, "periodSeconds")] = period


def edits(space: Space, settings: Settings) -> dict[KeyPath, Any]:
    """The ScaledObject keys to write for ``settings``: only those whose value differs
    from the user's (``DELETE`` removes one). A Pods policy the user wrote is edited in
    place; where none is written, one is added."""
    current = space.current
    out: dict[KeyPath, Any] = {}
    trigger: KeyPath = ("spec", "triggers", 0)
    if settings.threshold != current.threshold:
        out[(*trigger, "metadata", "threshold")] = format_number(settings.threshold)
    if settings.activation_threshold != current.activation_threshold:
        out[(*trigger, "metadata", "activationThreshold")] = format_number(
            settings.activation_threshold
        )
    if settings.metric_type != current.metric_type:
        out[(*trigger, "metricType")] = settings.metric_type
    simple = {
        "min_replicas": "minReplicaCount",
        "max_replicas": "maxReplicaCount",
        "polling_interval": "pollingInterval",
        "cooldown": "cooldownPeriod",
    }
    for name, key in simple.items():
        if getattr(settings, name) != getattr(current, name):
            out[("spec", key)] = getattr(settings, name)
    if settings.idle_replicas != current.idle_replicas:
        out[("spec", "idleReplicaCount")] = (
            DELETE if settings.idle_replicas is None else settings.idle_replicas
        )
    up = (settings.scale_up_pods, settings.scale_up_period)
    if up != (current.scale_up_pods, current.scale_up_period):
        _policy_edits(out, "scaleUp", space.up_policy, *up)
    if settings.scale_down_stabilization != current.scale_down_stabilization:
        out[(*_BEHAVIOR, "scaleDown", "stabilizationWindowSeconds")] = (
            settings.scale_down_stabilization
        )
    down = (settings.scale_down_pods, settings.scale_down_period)
    if down != (current.scale_down_pods, current.scale_down_period):
        _policy_edits(out, "scaleDown", space.down_policy, *down)
    if settings.select_policy != current.select_policy:
        out[(*_BEHAVIOR, "scaleDown", "selectPolicy")] = settings.select_policy
    return out


def _set(body: dict[str, Any], path: KeyPath, value: Any) -> None:
    node: Any = body
    for part in path[:-1]:
        if isinstance(part, int):
            node = node[part]
            continue
        if not isinstance(node.get(part), dict | list):
            node[part] = {}
        node = node[part]
    if value is DELETE:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = copy.deepcopy(value)


def _edited(manifest: Manifest, changes: Mapping[KeyPath, Any]) -> Manifest:
    body = copy.deepcopy(manifest.body)
    for path, value in changes.items():
        _set(body, path, value)
    return replace(manifest, body=body)


def _kept_in_range(workload: Manifest, settings: Settings) -> Manifest:
    """``workload`` starting with as many replicas as ``settings`` keep: its starting
    count within ``[minReplicaCount, maxReplicaCount]``."""
    replicas = workload.get(("spec", "replicas"))
    if not isinstance(replicas, int) or isinstance(replicas, bool):
        return workload
    kept = min(max(replicas, settings.min_replicas), settings.max_replicas)
    return workload if kept == replicas else _edited(workload, {("spec", "replicas"): kept})


def apply(
    space: Space,
    settings: Settings,
    manifests: ManifestSet,
    so: Manifest,
    profile: Profile,
) -> tuple[ManifestSet, Manifest, Profile]:
    """The manifests and the profile with ``settings`` in place (the edited ScaledObject
    is returned too, for the validator).

    The run starts from the state the configuration keeps (docs/tune.md, "Starting
    state"): the workload's starting replicas (:func:`starting_with`) are raised to its
    ``minReplicaCount`` and lowered to its ``maxReplicaCount``, in the simulation only."""
    edited = _edited(so, edits(space, settings))
    target = so.get(("spec", "scaleTargetRef", "name"))
    replaced = ManifestSet(
        [
            edited
            if m is so
            else _kept_in_range(m, settings)
            if m.kind in ("Deployment", "StatefulSet") and m.name == target
            else m
            for m in manifests
        ]
    )
    nodes = {"min_nodes": settings.gpu_min_nodes, "max_nodes": space.gpu_max_nodes(settings)}
    if space.gpu_pool is None or nodes == {
        "min_nodes": space.current.gpu_min_nodes,
        "max_nodes": space.gpu_pool_max,
    }:
        return replaced, edited, profile
    pools = tuple(
        pool.model_copy(update=nodes) if pool.name == space.gpu_pool and pool.autoscaling else pool
        for pool in profile.node_pools
    )
    return replaced, edited, profile.model_copy(update={"node_pools": pools})


def starting_with(manifests: ManifestSet, workload: str, replicas: int) -> ManifestSet:
    """The manifests with the Deployment ``workload`` running ``replicas`` at the start
    of the run (its ``spec.replicas``, in the simulation only: every configuration and
    reference starts from the same cluster, already serving the trace's first minute)."""
    return ManifestSet(
        [
            _edited(m, {("spec", "replicas"): replicas})
            if m.kind in ("Deployment", "StatefulSet") and m.name == workload
            else m
            for m in manifests
        ]
    )
