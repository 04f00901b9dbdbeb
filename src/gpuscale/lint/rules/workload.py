"""Rules on the workloads' pod specs: GPU requests, node selection, tolerations, start-up.

GPU node facts (labels, taints): DOKS labels GPU nodes
``doks.digitalocean.com/gpu-brand: amd|nvidia`` and taints them
``amd.com/gpu:NoSchedule`` / ``nvidia.com/gpu:NoSchedule`` (DigitalOcean's reference
architecture digitalocean/scale-with-simplicity@a43174f
``reference-architectures/vllm-nfs`` tolerates and selects them); the profile's node
pools, when given, replace these defaults.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuscale.kube import Taint, Toleration
from gpuscale.lint._access import as_map, iter_list
from gpuscale.lint._context import LintContext
from gpuscale.lint._findings import Hit, Severity
from gpuscale.lint._k8s import (
    POD_SPEC,
    container_path,
    gpu_resources,
    workloads,
)
from gpuscale.lint._registry import rule
from gpuscale.lint._yaml import snippet
from gpuscale.lint.rules._common import (
    decided_scaled_objects,
    services_of_workload,
    target_workload,
)
from gpuscale.manifests import Container, KeyPath, Workload, is_templated
from gpuscale.profile import DOKS_LABEL_DOMAIN

if TYPE_CHECKING:
    from gpuscale.profile import NodePool, Profile

__all__: list[str] = []

_DOKS_LABELS = frozenset({"gpu-brand", "gpu-model", "node-pool", "node-pool-id"})
_GPU_BRANDS = frozenset({"amd", "nvidia"})
_KNOWN_DOMAINS = (
    DOKS_LABEL_DOMAIN,
    "cloud.google.com",
    "eks.amazonaws.com",
    "karpenter.k8s.aws",
    "karpenter.sh",
    "kubernetes.azure.com",
    "node.kubernetes.io",
    "topology.kubernetes.io",
    "kubernetes.io",
    "beta.kubernetes.io",
    "feature.node.kubernetes.io",
    "nvidia.com",
    "amd.com",
)
_SYSTEM_ONLY_TAINTS = frozenset(
    {
        "CriticalAddonsOnly",
        "node-role.kubernetes.io/control-plane",
        "node-role.kubernetes.io/master",
    }
)
_TOLERATIONS: KeyPath = (*POD_SPEC, "tolerations")
_AFFINITY_TERMS: KeyPath = (
    *POD_SPEC,
    "affinity",
    "nodeAffinity",
    "requiredDuringSchedulingIgnoredDuringExecution",
    "nodeSelectorTerms",
)


def _containers(work: Workload) -> Iterator[tuple[KeyPath, Container]]:
    """Init containers and containers with their key paths."""
    for index, container in enumerate(work.init_containers):
        yield container_path(index, init=True), container
    for index, container in enumerate(work.containers):
        yield container_path(index), container


def _vendor(resource: str) -> str | None:
    domain = resource.split("/", 1)[0]
    if domain == "amd.com":
        return "amd"
    if domain == "nvidia.com":
        return "nvidia"
    if domain == "gpu.intel.com":
        return "intel"
    return None


def _distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def _misspelled_domain(prefix: str) -> str | None:
    """The known provider domain ``prefix`` is a misspelling of, if any."""
    if prefix in _KNOWN_DOMAINS:
        return None
    if prefix.startswith("doks."):
        return DOKS_LABEL_DOMAIN
    best = min(_KNOWN_DOMAINS, key=lambda domain: _distance(prefix, domain))
    allowed = 2 if len(best) >= 12 else 1
    return best if _distance(prefix, best) <= allowed else None


@dataclass(frozen=True)
class _Selection:
    key: str
    values: tuple[str, ...]
    path: KeyPath
    """Where the key is (a nodeSelector key, or a matchExpressions entry's ``key``)."""


def _selections(work: Workload) -> Iterator[_Selection]:
    for key, value in work.node_selector.items():
        yield _Selection(key, (value,), (*POD_SPEC, "nodeSelector", key))
    for t, term in enumerate(work.required_node_affinity):
        for e, requirement in enumerate(term.match_expressions):
            values = requirement.values if requirement.operator == "In" else ()
            path = (*_AFFINITY_TERMS, t, "matchExpressions", e, "key")
            yield _Selection(requirement.key, values, path)


def _doks_fix(key_name: str, vendor: str | None) -> str:
    value = vendor if key_name == "gpu-brand" and vendor else "<value>"
    return snippet({"nodeSelector": {f"{DOKS_LABEL_DOMAIN}/{key_name}": value}})


def _gpu_pools_for(profile: Profile, vendor: str | None) -> list[NodePool]:
    """The profile's GPU pools offering ``vendor``'s GPUs (any GPU pool without one)."""
    return [pool for pool in profile.gpu_pools if vendor is None or pool.gpu == vendor]


def _pool_label(pool: NodePool) -> tuple[str, str] | None:
    """The label to select ``pool`` by: DOKS' node-pool label when it has it, else the
    first label the profile writes for it."""
    key = f"{DOKS_LABEL_DOMAIN}/node-pool"
    if key in pool.labels:
        return key, pool.labels[key]
    return next(iter(pool.labels.items()), None)


def _generic_fix(profile: Profile, vendor: str | None) -> str:
    """A fix for a cluster that is not DOKS: a label the profile's GPU pool carries, or no
    selector at all (what ``gpuscale init --provider generic`` writes, and why)."""
    for pool in _gpu_pools_for(profile, vendor):
        label = _pool_label(pool)
        if label is not None:
            return snippet({"nodeSelector": {label[0]: label[1]}}) + (
                f"\n# a label of the profile's {pool.name} pool"
            )
    resource = f"{vendor}.com/gpu" if vendor else "GPU"
    return (
        "# delete the nodeSelector: no GPU node label is common to all providers, and the\n"
        f"# {resource} request already keeps the pod off nodes without GPUs"
    )


def _selector_fix(ctx: LintContext, key_name: str, vendor: str | None) -> str:
    """The DOKS label fix, or on a profile whose cluster is not DOKS, the generic one."""
    profile = ctx.profile
    if profile is not None and profile.cluster.provider != "doks":
        return _generic_fix(profile, vendor)
    return _doks_fix(key_name, vendor)


def _gpu_container(work: Workload, resource: str | None = None) -> KeyPath:
    """The first container that asks for ``resource`` (any GPU when ``None``)."""
    for path, container in _containers(work):
        gpus = gpu_resources(container)
        if gpus and (resource is None or resource in gpus):
            return path
    return POD_SPEC


@rule(
    "gpu-node-selector",
    severity=Severity.ERROR,
    title="A node selector that no node can match, or that contradicts the GPU requested",
    explanation=(
        "A `nodeSelector` (or required node affinity) key that no node carries keeps every "
        "pod Pending forever, and the cluster autoscaler does not add nodes for it either. "
        "Reported: placeholders left in the key (`doks.<provider-domain>/gpu-brand`), a "
        "misspelled provider domain (`doks.digitalocean.cm`, the tutorial's mangled "
        "domain), a label name DOKS does not set under its domain, a `gpu-brand` value "
        "other than `amd` or `nvidia`, and a brand that contradicts the requested resource "
        "(`gpu-brand: nvidia` with `amd.com/gpu`). Real provider labels such as "
        "`doks.digitalocean.com/node-pool` or `eks.amazonaws.com/instance-family` are fine. "
        "With a DOKS profile, a `doks.digitalocean.com/node-pool` value must name one of "
        "its pools. With any profile, a GPU workload with no selector at all gets an info "
        "note when a GPU pool of its vendor carries a label to select it by (DOKS labels "
        "every pool; with `cluster.provider: generic` only the labels the profile writes "
        "count, and without one the GPU request alone places the pod, as `gpuscale init "
        "--provider generic` writes it). Fixes fit the provider: DOKS labels on DOKS (and "
        "without a profile); on a generic cluster, a label of the profile's GPU pool, or no "
        "selector at all."
    ),
    example=snippet({"nodeSelector": {"doks.<provider-domain>/gpu-brand": "amd"}}),
    fix=snippet({"nodeSelector": {f"{DOKS_LABEL_DOMAIN}/gpu-brand": "amd"}}),
)
def _gpu_node_selector(ctx: LintContext) -> Iterator[Hit]:
    for work in workloads(ctx):
        vendors = {v for v in map(_vendor, work.gpus_per_pod) if v}
        vendor = next(iter(vendors)) if len(vendors) == 1 else None
        selections = list(_selections(work))
        for selection in selections:
            yield from _check_selection(ctx, work, selection, vendor)
        if not selections and work.gpus_per_pod and ctx.profile is not None:
            labelled = [
                (pool, label)
                for pool in _gpu_pools_for(ctx.profile, vendor)
                if (label := _pool_label(pool)) is not None
            ]
            if labelled:
                pool, (key, value) = labelled[0]
                yield Hit(
                    obj=work.manifest,
                    key_path=_gpu_container(work),
                    message="the GPU workload has no nodeSelector or node affinity",
                    why=(
                        "The scheduler places it on a node with a free GPU anyway, but a "
                        f"selector on the label of the {pool.name} pool makes the "
                        "placement explicit and keeps the cluster autoscaler from considering "
                        "other GPU pools."
                    ),
                    fix=snippet({"nodeSelector": {key: value}}),
                    severity=Severity.INFO,
                )


def _check_selection(
    ctx: LintContext, work: Workload, selection: _Selection, vendor: str | None
) -> Iterator[Hit]:
    key = selection.key
    if "{{" in key or "${" in key:
        return
    prefix, _, name = key.rpartition("/")
    if is_templated(key):
        fixed_name = name if name and not is_templated(name) else "gpu-brand"
        yield Hit(
            obj=work.manifest,
            key_path=selection.path,
            message=f"the node selector key {key} still holds a placeholder",
            why=(
                f"No node has a label named {key}, so every pod stays Pending and the "
                "cluster autoscaler adds no node for it (it only scales up for pods that "
                "some node group could host)."
            ),
            fix=_selector_fix(ctx, fixed_name, vendor),
        )
        return
    if prefix:
        intended = _misspelled_domain(prefix)
        if intended is not None:
            yield Hit(
                obj=work.manifest,
                key_path=selection.path,
                message=f"{prefix} looks like a misspelling of {intended} in {key}",
                why=(
                    f"Nodes carry {intended}/... labels; no node has {key}, so every pod "
                    "stays Pending and the cluster autoscaler adds no node for it."
                ),
                fix=_selector_fix(ctx, name, vendor)
                if intended == DOKS_LABEL_DOMAIN
                else snippet({"nodeSelector": {f"{intended}/{name}": "<value>"}}),
            )
            return
    if prefix == DOKS_LABEL_DOMAIN and name not in _DOKS_LABELS:
        near = min(_DOKS_LABELS, key=lambda label: _distance(name, label))
        if _distance(name, near) <= 2:
            yield Hit(
                obj=work.manifest,
                key_path=selection.path,
                message=f"DOKS sets no label {key}; did you mean {DOKS_LABEL_DOMAIN}/{near}?",
                why=f"No DOKS node carries {key}, so the pods stay Pending.",
                fix=_selector_fix(ctx, near, vendor),
            )
            return
    if prefix == DOKS_LABEL_DOMAIN and name == "gpu-brand":
        yield from _check_brand(ctx, work, selection, vendor)
    if (
        prefix == DOKS_LABEL_DOMAIN
        and name == "node-pool"
        and ctx.profile is not None
        and ctx.profile.cluster.provider == "doks"
    ):
        pools = {pool.name for pool in ctx.profile.node_pools}
        wrong = [v for v in selection.values if v not in pools and not is_templated(v)]
        if pools and wrong and len(wrong) == len(selection.values):
            yield Hit(
                obj=work.manifest,
                key_path=selection.path,
                message=(
                    f"no node pool named {wrong[0]} in the profile ({', '.join(sorted(pools))})"
                ),
                why="No node carries that pool name, so the pods stay Pending.",
                fix=_doks_fix("node-pool", vendor).replace("<value>", sorted(pools)[0]),
            )
    if vendor and prefix in {"nvidia.com", "amd.com"} and prefix.split(".")[0] != vendor:
        yield Hit(
            obj=work.manifest,
            key_path=selection.path,
            message=(
                f"{key} selects {prefix.split('.')[0]} nodes but the pod requests {vendor}.com/gpu"
            ),
            why=(
                f"Nodes labelled by the {prefix} GPU tooling offer no {vendor}.com/gpu, so "
                "the pod can never be scheduled."
            ),
            fix=_selector_fix(ctx, "gpu-brand", vendor),
        )


def _check_brand(
    ctx: LintContext, work: Workload, selection: _Selection, vendor: str | None
) -> Iterator[Hit]:
    for value in selection.values:
        if is_templated(value):
            continue
        if value not in _GPU_BRANDS:
            yield Hit(
                obj=work.manifest,
                key_path=selection.path,
                message=f"{selection.key} is {value!r}; DOKS sets it to amd or nvidia",
                why=(
                    f"DOKS labels GPU nodes {selection.key}: amd or nvidia (lower case); no "
                    f"node has the value {value!r}, so the pods stay Pending."
                ),
                fix=_selector_fix(ctx, "gpu-brand", vendor or value.lower()),
            )
        elif vendor in _GPU_BRANDS and value != vendor:
            yield Hit(
                obj=work.manifest,
                key_path=selection.path,
                message=(f"{selection.key}: {value} contradicts the requested {vendor}.com/gpu"),
                why=(
                    f"Nodes labelled gpu-brand: {value} offer {value}.com/gpu, not "
                    f"{vendor}.com/gpu, so no node satisfies both and the pods stay Pending."
                ),
                fix=_selector_fix(ctx, "gpu-brand", vendor),
            )


def _gpu_taints(
    ctx: LintContext, resource: str
) -> tuple[list[tuple[NodePool | None, list[Taint]]], bool]:
    """The hard taints of each pool offering ``resource``; the flag says if from the profile."""
    if ctx.profile is not None and ctx.profile.node_pools:
        pools = [pool for pool in ctx.profile.gpu_pools if pool.gpu_resource == resource]
        hard = ("NoSchedule", "NoExecute")
        return [(pool, [t for t in pool.node_taints if t.effect in hard]) for pool in pools], True
    vendor = _vendor(resource)
    if vendor not in _GPU_BRANDS:
        return [], False
    return [(None, [Taint(key=f"{vendor}.com/gpu", effect="NoSchedule")])], False


@rule(
    "gpu-toleration-missing",
    severity=Severity.WARNING,
    title="A GPU workload does not tolerate the GPU nodes' taints",
    explanation=(
        "GPU node pools are usually tainted so that only GPU workloads land on them: DOKS "
        "taints them `amd.com/gpu:NoSchedule` or `nvidia.com/gpu:NoSchedule`, GKE "
        "`nvidia.com/gpu=present:NoSchedule`. A pod requesting a GPU without a matching "
        "toleration fits no node and stays Pending. A toleration matches by key with "
        "`operator: Exists`, or `Equal` with the taint's value, and an empty effect matches "
        "every effect (`ToleratesTaint` in `k8s.io/api/core/v1/toleration.go`). The "
        "profile's pools and taints are used when given, otherwise DOKS' defaults; clusters "
        "running the ExtendedResourceToleration admission plugin add the toleration "
        "themselves."
    ),
    example=snippet({"resources": {"limits": {"amd.com/gpu": 1}}}),
    fix=snippet(
        {
            "tolerations": [{"key": "amd.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [{"name": "app", "resources": {"limits": {"amd.com/gpu": 1}}}],
        }
    ),
)
def _gpu_toleration_missing(ctx: LintContext) -> Iterator[Hit]:
    for work in workloads(ctx):
        tolerations = work.tolerations
        fields = ((t.key, t.operator, t.value, t.effect) for t in tolerations)
        if any(is_templated(field) for group in fields for field in group):
            continue
        for resource in work.gpus_per_pod:
            pools, from_profile = _gpu_taints(ctx, resource)
            if not pools:
                continue
            if any(
                all(any(t.tolerates(taint) for t in tolerations) for taint in taints)
                for _, taints in pools
            ):
                continue
            missing = next(
                taint
                for _, taints in pools
                for taint in taints
                if not any(t.tolerates(taint) for t in tolerations)
            )
            source = (
                f"the profile's {', '.join(p.name for p, _ in pools if p)} pool(s)"
                if from_profile
                else "DOKS' default GPU taint"
            )
            written = work.manifest.get(_TOLERATIONS) is not None
            where = _TOLERATIONS if written else (*_gpu_container(work, resource), "resources")
            value = f"={missing.value}" if missing.value else ""
            toleration: dict[str, Any] = {"key": missing.key}
            toleration.update(
                {"operator": "Equal", "value": missing.value}
                if missing.value
                else {"operator": "Exists"}
            )
            toleration["effect"] = missing.effect
            yield Hit(
                obj=work.manifest,
                key_path=where,
                message=(
                    f"requests {resource} but does not tolerate {missing.key}{value}:"
                    f"{missing.effect}"
                ),
                why=(
                    f"GPU nodes carry the taint {missing.key}{value}:{missing.effect} ({source}); "
                    "a pod without a matching toleration fits no GPU node, stays Pending, and "
                    "the cluster autoscaler adds no node for it."
                ),
                fix=snippet({"tolerations": [toleration]}),
            )


@rule(
    "unneeded-toleration",
    severity=Severity.WARNING,
    title="An application tolerates a taint meant for system components",
    explanation=(
        "`CriticalAddonsOnly` and the control-plane taints keep ordinary workloads off nodes "
        "reserved for cluster add-ons and the control plane; a toleration for them (or an "
        "empty key with `operator: Exists`, which tolerates every taint) lets the "
        "application land there. GPU nodes need only the GPU taint's toleration. Only "
        "Deployments and StatefulSets outside `kube-system` are checked: system agents "
        "(DaemonSets, add-ons) legitimately tolerate these."
    ),
    example=snippet(
        {
            "tolerations": [
                {"key": "CriticalAddonsOnly", "operator": "Exists"},
                {"key": "amd.com/gpu", "operator": "Exists"},
            ]
        }
    ),
    fix=snippet({"tolerations": [{"key": "amd.com/gpu", "operator": "Exists"}]}),
)
def _unneeded_toleration(ctx: LintContext) -> Iterator[Hit]:
    for work in workloads(ctx):
        if ctx.namespace_of(work.manifest) == "kube-system":
            continue
        raw = [as_map(item) or {} for _, item in iter_list(work.manifest.get(_TOLERATIONS))]
        system = [_system_only(t) for t in work.tolerations]
        kept = [dict(item) for item, drop in zip(raw, system, strict=True) if not drop]
        for index, toleration in enumerate(work.tolerations):
            if not system[index]:
                continue
            key = toleration.key
            what = f"the {key} taint" if key else "every taint (empty key, operator Exists)"
            yield Hit(
                obj=work.manifest,
                key_path=(*_TOLERATIONS, index, "key") if key else (*_TOLERATIONS, index),
                message=f"the workload tolerates {what}, which is meant for system components",
                why=(
                    f"Nodes are tainted with {key or 'such taints'} to keep ordinary workloads "
                    "off nodes reserved for cluster add-ons or the control plane; tolerating "
                    "it lets this application be scheduled there. A GPU workload needs only "
                    "the GPU taint's toleration."
                ),
                fix=snippet({"tolerations": kept}) if kept else "# delete the toleration",
            )


def _system_only(toleration: Toleration) -> bool:
    """Whether the toleration is for a system-only taint (or, with an empty key and
    ``Exists``, for every taint)."""
    if toleration.key in _SYSTEM_ONLY_TAINTS:
        return True
    return toleration.key == "" and toleration.operator == "Exists"


@rule(
    "gpu-requests-limits",
    severity=Severity.ERROR,
    title="A GPU is requested without an equal limit",
    explanation=(
        "GPUs are extended resources, which cannot be overcommitted: the API server requires "
        "a limit, and a request, when given, must equal it (`ValidateResourceRequirements` in "
        '`pkg/apis/core/validation/validation.go`; kubernetes.io "Schedule GPUs"). Put '
        "the GPU count in `limits` (a request then defaults to it)."
    ),
    example=snippet({"resources": {"requests": {"nvidia.com/gpu": 1}}}),
    fix=snippet({"resources": {"limits": {"nvidia.com/gpu": 1}}}),
)
def _gpu_requests_limits(ctx: LintContext) -> Iterator[Hit]:
    for work in workloads(ctx):
        for path, container in _containers(work):
            for resource in gpu_resources(container):
                request = work.manifest.get((*path, "resources", "requests", resource))
                limit = work.manifest.get((*path, "resources", "limits", resource))
                if request is None or is_templated(request) or is_templated(limit):
                    continue
                if limit is None:
                    message = f"requests {resource}: {request} without a limit"
                    why = "the API server rejects a container that requests it without a limit"
                    fixed = request
                elif container.requests.get(resource) != container.limits.get(resource):
                    message = f"{resource} request {request} differs from its limit {limit}"
                    why = "it cannot be overcommitted: its request must equal its limit"
                    fixed = limit
                else:
                    continue
                yield Hit(
                    obj=work.manifest,
                    key_path=(*path, "resources", "requests", resource),
                    message=message,
                    why=f"{resource} is an extended resource: {why} "
                    "(ValidateResourceRequirements).",
                    fix=snippet({"resources": {"limits": {resource: fixed}}}),
                )


_SEPARATORS = (";", "&&", "||", "|", "(", ")", "\n", "`", "$(")
_BUILD_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("go", "mod", "tidy"),
    ("go", "mod", "download"),
    ("go", "run"),
    ("go", "build"),
    ("go", "get"),
    ("go", "install"),
    ("pip", "install"),
    ("pip3", "install"),
    ("python", "-m", "pip", "install"),
    ("python3", "-m", "pip", "install"),
    ("uv", "pip", "install"),
    ("uv", "sync"),
    ("poetry", "install"),
    ("pipenv", "install"),
    ("npm", "install"),
    ("npm", "i"),
    ("npm", "ci"),
    ("yarn", "install"),
    ("pnpm", "install"),
    ("apt-get", "install"),
    ("apt", "install"),
    ("apk", "add"),
    ("yum", "install"),
    ("dnf", "install"),
    ("cargo", "build"),
    ("cargo", "run"),
    ("cargo", "install"),
    ("git", "clone"),
)
_PREFIX_WORDS = frozenset({"sudo", "exec", "time", "nohup", "env", "then", "do", "else", "!"})
_SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh"})


def _command_words(words: list[str]) -> list[str]:
    """``words`` without leading wrappers (``exec``, ``env``, ``VAR=value``...), the
    program named by its file name (``/usr/local/go/bin/go`` as ``go``)."""
    words = list(words)
    while words and (words[0].rsplit("/", 1)[-1] in _PREFIX_WORDS or "=" in words[0]):
        words.pop(0)
    if words:
        words[0] = words[0].rsplit("/", 1)[-1]
    return words


def _shell_commands(text: str) -> Iterator[list[str]]:
    for separator in _SEPARATORS:
        text = text.replace(separator, "\n")
    for line in text.split("\n"):
        words = _command_words(line.split())
        if words:
            yield words


def _build_step(words: list[str]) -> str | None:
    """The build or install command ``words`` (one command's argv) runs, if any."""
    flags = [w for w in words if not w.startswith("-") or w == "-m"]
    for pattern in _BUILD_COMMANDS:
        if tuple(flags[: len(pattern)]) == pattern:
            return " ".join(pattern)
    return None


def _build_steps(text: str) -> list[str]:
    """The build steps of a shell script."""
    return [step for words in _shell_commands(text) if (step := _build_step(words))]


def _shell_script(argv: list[str], start: int) -> int | None:
    """The index of the script in ``argv[start:]`` = ``sh -c SCRIPT`` (``bash -lc``,
    ``sh -ec``... too), or ``None`` when the shell is not given ``-c``."""
    index = start + 1
    takes_script = False
    while index < len(argv) and argv[index].startswith("-") and argv[index] != "--":
        option = argv[index]
        takes_script |= not option.startswith("--") and "c" in option[1:]
        index += 1
    if index < len(argv) and argv[index] == "--":
        index += 1
    return index if takes_script and index < len(argv) else None


def _argv_steps(argv: list[str], *, entrypoint_unknown: bool) -> list[tuple[int, str]]:
    """``(index in argv, step)`` for each build step the container's argv runs.

    ``argv`` is ``command`` followed by ``args``, one word an element, as the kubelet
    execs it (no shell): a build command there is matched as it stands, and only the
    script a shell is given with ``-c`` is read as shell. When ``command`` is not written,
    the image's entrypoint is unknown and may be a shell, so an ``args`` element that
    reads as a command line is read as a script too.
    """
    found: list[tuple[int, str]] = []
    skipped = len(argv) - len(_command_words(argv))
    words = _command_words(argv)
    if words and words[0] in _SHELLS:
        script = _shell_script(words, 0)
        if script is not None:
            found += [(skipped + script, step) for step in _build_steps(words[script])]
    elif words and (step := _build_step(words)) is not None:
        found.append((skipped, step))
    if entrypoint_unknown and not found:
        for index, element in enumerate(argv):
            if len(element.split()) > 1:
                found += [(index, step) for step in _build_steps(element)]
    return found


@rule(
    "compile-at-start",
    severity=Severity.WARNING,
    title="The container builds or installs code every time it starts",
    explanation=(
        "A container whose command runs `go mod tidy`/`go run`, `pip install`, `npm "
        "install` and the like downloads and builds at every start: each new replica needs "
        "the network and a package registry, takes minutes longer to become ready (on a GPU "
        "node that is billed from its first second), and may get different dependency "
        "versions than the last one. Build an image once (a Dockerfile, ko, a buildpack) "
        "and run the binary. `command` and `args` are read as the one argv the kubelet "
        'execs: exec form (`command: ["go", "run", "main.go"]`, `["python", "-m", "pip", '
        '"install", "x"]`) is matched word by word, and only the script a shell runs with '
        "`-c` (`sh -c`, `bash -lc`...) is read as shell. When `command` is not written the "
        "image's entrypoint may be a shell, so an `args` element that reads as a command "
        "line is read as a script too."
    ),
    example=snippet(
        {
            "containers": [
                {"name": "app", "image": "golang:1.24", "args": ["go mod tidy && go run ."]}
            ]
        }
    ),
    fix=snippet(
        {
            "containers": [
                {
                    "name": "app",
                    "image": "registry.example.com/app:1.0.0",
                    "command": ["/app/server"],
                }
            ]
        }
    ),
)
def _compile_at_start(ctx: LintContext) -> Iterator[Hit]:
    for work in workloads(ctx):
        for path, container in _containers(work):
            argv = [*container.command, *container.args]
            found = _argv_steps(argv, entrypoint_unknown=not container.command)
            if not found:
                continue
            steps = list(dict.fromkeys(step for _, step in found))
            field = "command" if found[0][0] < len(container.command) else "args"
            name = container.name or "the container"
            yield Hit(
                obj=work.manifest,
                key_path=(*path, field),
                message=f"{name} runs {', '.join(steps)} at every start",
                why=(
                    f"The container runs {', '.join(steps)} each time a replica starts, which "
                    "downloads (and builds) code: every new replica needs the network and the "
                    "package registries, and "
                    "becomes ready minutes later than a prebuilt image would (time a GPU "
                    "node is billed for while the workload is short of capacity), possibly "
                    "with different dependency versions."
                ),
                fix=snippet(
                    {
                        "containers": [
                            {
                                "name": container.name or "app",
                                "image": "<registry>/<image>:<version>",
                                "command": ["<the built binary>"],
                            }
                        ]
                    }
                )
                + "\n# build the image once (Dockerfile, ko, buildpack) and push it",
            )


@rule(
    "no-readiness-probe",
    severity=Severity.WARNING,
    title="A served or autoscaled container has no readiness probe",
    explanation=(
        "A container without a readiness probe is Ready as soon as it has started: "
        '"If a container does not provide a readiness probe, the default state is '
        'Success" (kubernetes.io, Pod Lifecycle: container probes). A replica that still '
        "installs packages, loads a model or warms up is then put behind its Service and "
        "gets requests it cannot answer; a rolling update counts it as available and "
        "removes an old replica that could; and with `metricType: Value` the HPA multiplies "
        "the metric by the number of Ready pods (`GetExternalMetricReplicas` → "
        "`getReadyPodsCount` in `pkg/controller/podautoscaler/replica_calculator.go`), so "
        "it counts the replica as capacity before it has any. Checked on the containers "
        "that declare ports (or the only container) of Deployments and StatefulSets that a "
        "Service or a ScaledObject in the set points at; a `startupProbe` also holds "
        "readiness back until it succeeds, so it counts as well."
    ),
    example=snippet(
        {"containers": [{"name": "app", "image": "app:1.0", "ports": [{"containerPort": 8080}]}]}
    ),
    fix=snippet(
        {
            "containers": [
                {
                    "name": "app",
                    "image": "app:1.0",
                    "ports": [{"name": "http", "containerPort": 8080}],
                    "readinessProbe": {
                        "httpGet": {"path": "/readyz", "port": "http"},
                        "periodSeconds": 5,
                    },
                }
            ]
        }
    ),
)
def _no_readiness_probe(ctx: LintContext) -> Iterator[Hit]:
    scaled = {
        id(w.manifest) for so in decided_scaled_objects(ctx) if (w := target_workload(ctx, so))
    }
    for work in workloads(ctx):
        served = bool(services_of_workload(ctx, work))
        if not served and id(work.manifest) not in scaled:
            continue
        with_ports = [c for c in work.containers if c.ports]
        candidates = with_ports or (list(work.containers) if len(work.containers) == 1 else [])
        for index, container in enumerate(work.containers):
            if container not in candidates or container.readiness_probe is not None:
                continue
            path = container_path(index)
            if work.manifest.get((*path, "startupProbe")) is not None:
                continue
            why_served = "its Service sends it requests" if served else "it is scaled by KEDA"
            ports = [p.name or p.container_port for p in container.ports]
            port: Any = ports[0] if ports else "<port>"
            yield Hit(
                obj=work.manifest,
                key_path=path,
                message=(
                    f"container {container.name or index} has no readinessProbe: it counts as "
                    "Ready as soon as it starts"
                ),
                why=(
                    "Without a readiness probe Kubernetes marks the container Ready the moment "
                    f"it starts, so {why_served} while it is still starting (installing, "
                    "loading, warming up), a rolling update treats it as available, and with "
                    "metricType Value the HPA counts it as capacity. A GPU replica can take "
                    "minutes to serve after its container starts."
                ),
                fix=snippet(
                    {
                        "readinessProbe": {
                            "httpGet": {"path": "/readyz", "port": port},
                            "periodSeconds": 5,
                        }
                    }
                )
                + "\n# point it at an endpoint that answers only once the replica can serve",
            )
