"""Every documented profile field changes what the models are given, or says who else
reads it (issue 12: "every profile field reaches a model").

The test walks the profile's pydantic models (the same fields ``docs/profile.md``
documents, ``tests/unit/profile/test_docs.py``), changes one leaf at a time in the
tutorial's profile, builds the simulation's inputs, and compares them with the
unchanged ones. A field the simulation does not read must be listed in ``ELSEWHERE``
(with the command that reads it) or ``NOT_MODELLED`` (with why it is kept); a new field
in neither fails here until it reaches a model or goes.
"""

from __future__ import annotations

import copy
import json
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from gpuscale.inputs import read_manifests
from gpuscale.profile import Profile, load_profile_text
from gpuscale.sim.inputs import SimulationInputs, build_inputs

ROOT = Path(__file__).resolve().parents[3]
TUTORIAL = ROOT / "examples" / "tutorial"
BASE = yaml.safe_load((TUTORIAL / "gpuscale.yaml").read_text())
WORKLOAD = "go-from-configmap"

ELSEWHERE = {
    "cluster.name": "gpuscale cluster create (cloud/plan.py)",
    "cluster.region": "gpuscale cluster create",
    "cluster.version": "gpuscale cluster create",
    "cluster.vpc_uuid": "gpuscale cluster create",
    "cluster.ha": "gpuscale cluster create",
    "cluster.tags": "gpuscale cluster create",
    "prometheus.chart_version": "gpuscale install",
    "prometheus.evaluation_interval": "gpuscale install (the chart's evaluationInterval)",
    "keda.namespace": "gpuscale install, verify",
    "keda.release": "gpuscale install",
    "keda.chart_version": "gpuscale install",
    "cluster.gpu_metrics": "gpuscale cluster create / enable-gpu-metrics (the DOKS add-on); "
    "the simulation scrapes a GPU node's exporter either way",
    "catalogue[].prices_read": "gpuscale profile show (provenance of the prices)",
    "catalogue[].slug": "the name node_pools[].size refers to (renaming both changes nothing)",
    "workloads[].serving.calibration.date": "gpuscale calibrate (provenance of the values)",
    "workloads[].serving.calibration.source": "gpuscale calibrate (provenance of the values)",
    "workloads[].serving.calibration.residuals": "gpuscale calibrate (the fit's quality)",
    "workloads[].serving.calibration.range": "gpuscale calibrate (the range measured)",
    **{
        f"tune.{name}": "gpuscale tune (the bounds of its search space, gpuscale.tune.space)"
        for name in (
            "threshold",
            "activation_threshold",
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
            "keep",
        )
    },
}
"""Read by another command, not by the simulation."""

NOT_MODELLED: dict[str, str] = {}
"""Documented upstream settings no simulated behaviour depends on yet."""

CHANGES: dict[str, Any] = {
    "cluster.provider": "generic",
    "cluster.name": "other-cluster",
    "cluster.region": "nyc2",
    "cluster.version": "1.33",
    "cluster.vpc_uuid": "5a4981aa-9653-4bd1-bef5-d6bff52042e4",
    "cluster.ha": True,
    "cluster.tags": ["ml"],
    "cluster.gpu_metrics": False,
    "node_pools[].name": "gpu-two",
    "node_pools[].size": "gpu-h100x1-80gb",
    "node_pools[].gpu": "nvidia",
    "node_pools[].gpu_model": "mi325x",
    "node_pools[].gpus_per_node": 2,
    "node_pools[].cpu": 7,
    "node_pools[].memory": "9Gi",
    "node_pools[].labels": {"team": "ml"},
    "node_pools[].taints": [],
    "node_pools[].taints[].key": "other.com/gpu",
    "node_pools[].taints[].value": "yes",
    "node_pools[].taints[].effect": "NoExecute",
    "node_pools[].count": 3,
    "node_pools[].min_nodes": 1,
    "node_pools[].max_nodes": 3,
    "node_pools[].price_per_hour": 9.5,
    "node_pools[].provisioning_time": "7m",
    "autoscaler.scan_interval": "17s",
    "autoscaler.scale_up_delay": "7s",
    "autoscaler.scale_up_delay_gpu": "45s",
    "autoscaler.new_pod_scale_up_delay": "5s",
    "autoscaler.scale_down_unneeded_time": "3m",
    "autoscaler.scale_down_delay_after_add": "2m",
    "autoscaler.scale_down_delay_after_delete": "1m",
    "autoscaler.scale_down_delay_after_failure": "7m",
    "autoscaler.scale_down_utilization_threshold": 0.25,
    "autoscaler.scale_down_gpu_utilization_threshold": 0.25,
    "autoscaler.expander": "priority",
    "autoscaler.expander_priorities": {10: ["gpu.*"]},
    "autoscaler.max_nodes_total": 5,
    "hpa.sync_period": "20s",
    "hpa.tolerance": 0.2,
    "hpa.downscale_stabilization": "2m",
    "prometheus.release": "kps",
    "prometheus.selects_all_servicemonitors": True,
    "prometheus.namespace": "monitoring",
    "prometheus.chart_version": "70.0.0",
    "prometheus.address": "http://prom.example:9090",
    "prometheus.scrape_interval": "15s",
    "prometheus.evaluation_interval": "15s",
    "prometheus.lookback_delta": "2m",
    "prometheus.version": "2",
    "keda.namespace": "keda",
    "keda.release": "keda2",
    "keda.chart_version": "2.16.0",
    "timing.hpa_reconcile": "40ms",
    "timing.keda_start": "250ms",
    "timing.keda_poll": "30ms",
    "timing.autoscaler_run_once": "1s",
    "timing.pod_start": "3s",
    "timing.spread": 0.2,
    "workloads[].image_pull_time": "1m",
    "workloads[].startup_time": "1m",
    "workloads[].concurrency": 3,
    "workloads[].service_time": "2s",
    "workloads[].requests_per_second": 4.0,
    "workloads[].prefill_tokens_per_second": 1000.0,
    "workloads[].decode_tokens_per_second": 50.0,
    "workloads[].latency_target": "3s",
    "workloads[].request_timeout": "30s",
    "workloads[].serving.kind": "vllm",
    "workloads[].serving.preset": "mi300x/qwen2.5-7b",
    "workloads[].serving.served_model_name": "meta-llama/Llama-3.1-8B-Instruct",
    "workloads[].serving.max_num_seqs": 64,
    "workloads[].serving.max_num_batched_tokens": 8192,
    "workloads[].serving.num_gpu_blocks": 5000,
    "workloads[].serving.gpu_memory_utilization": 0.5,
    "workloads[].serving.block_size": 32,
    "workloads[].serving.step_cost.base": 0.01,
    "workloads[].serving.step_cost.prefill_token": 1e-4,
    "workloads[].serving.step_cost.decode_seq": 1e-3,
    "workloads[].serving.step_cost.context_token": 1e-6,
    "workloads[].serving.calibration.date": "2026-12-01",
    "workloads[].serving.calibration.source": "http://127.0.0.1:8000",
    "workloads[].serving.calibration.residuals": {"ttft": 0.05},
    "workloads[].serving.calibration.range": {"prompt_tokens": [16, 4096]},
    "catalogue[].slug": "my-gpu",
    "catalogue[].gpu_vendor": "nvidia",
    "catalogue[].gpu_model": "x1",
    "catalogue[].gpus": 2,
    "catalogue[].vcpus": 9,
    "catalogue[].memory": "10Gi",
    "catalogue[].price_per_hour": 3.25,
    "catalogue[].prices_read": "2026-12-01",
    "tune.threshold": [2, 20],
    "tune.activation_threshold": [0, 5],
    "tune.min_replicas": [0, 3],
    "tune.max_replicas": [2, 6],
    "tune.polling_interval": ["10s", "1m"],
    "tune.cooldown": ["1m", "5m"],
    "tune.scale_down_stabilization": ["0s", "10m"],
    "tune.scale_up_pods": [1, 4],
    "tune.scale_up_period": ["15s", "1m"],
    "tune.scale_down_pods": [1, 2],
    "tune.scale_down_period": ["30s", "5m"],
    "tune.gpu_min_nodes": [0, 1],
    "tune.keep": ["metric_type"],
}
"""One changed value per leaf (a value other than the tutorial's and the default)."""

CATALOGUE_ENTRY = {
    "slug": "my-size",
    "gpu_vendor": "amd",
    "gpu_model": "mi300x",
    "gpus": 1,
    "vcpus": 20,
    "memory": "240Gi",
    "price_per_hour": 1.99,
}


def _leaves(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    for name, info in model.model_fields.items():
        path = prefix + name
        nested = [a for a in (info.annotation, *_args(info.annotation)) if _is_model(a)]
        if not nested:
            yield path
            continue
        inner = nested[0]
        many = typing.get_origin(info.annotation) in (tuple, list, dict)
        yield from _leaves(inner, f"{path}[]." if many else f"{path}.")
        if many and path.endswith("taints"):
            yield path


def _args(annotation: object) -> tuple[object, ...]:
    out: list[object] = []
    for arg in typing.get_args(annotation):
        out += [arg, *_args(arg)]
    return tuple(out)


def _is_model(annotation: object) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


LEAVES = sorted(set(_leaves(Profile)))


def _profile_doc(path: str) -> dict[str, Any]:
    doc = copy.deepcopy(BASE)
    doc.setdefault("autoscaler", {})
    doc.setdefault("hpa", {})
    parts = path.split(".")
    value = CHANGES[path]
    section = parts[0]
    if section == "catalogue[]":
        entry = dict(CATALOGUE_ENTRY)
        doc["node_pools"][0] = {**doc["node_pools"][0], "size": entry["slug"]}
        if parts[1] == "slug":
            entry["slug"] = value
            doc["node_pools"][0]["size"] = value
        else:
            entry[parts[1]] = value
        doc["catalogue"] = [entry]
        return doc
    if section == "node_pools[]":
        pool = doc["node_pools"][0]
        field = parts[1]
        if field == "taints[]":
            pool["taints"] = [{"key": "amd.com/gpu", "effect": "NoSchedule", parts[2]: value}]
        elif field in ("min_nodes", "max_nodes"):
            pool.pop("count", None)
            pool[field] = value
        elif field == "count":
            pool.pop("min_nodes", None)
            pool.pop("max_nodes", None)
            pool[field] = value
        else:
            pool[field] = value
        return doc
    if path == "prometheus.selects_all_servicemonitors":
        doc["prometheus"]["release"] = "not-the-servicemonitors-label"
    if path.startswith("workloads[].serving."):
        doc = _serving_doc()
        serving = doc["workloads"][WORKLOAD]["serving"]
        if parts[2] == "kind":  # from the queue model to the preset's engine
            return doc
        if parts[2] == "step_cost":
            serving["step_cost"] = {parts[3]: value}
        elif parts[2] == "calibration":
            serving["calibration"] = {**_CALIBRATION, parts[3]: value}
        else:
            serving[parts[2]] = value
        return doc
    if section == "workloads[]":
        workload = doc["workloads"][WORKLOAD]
        if parts[1] in ("concurrency", "latency_target", "request_timeout"):
            workload["service_time"] = "1s"
        if parts[1] in ("prefill_tokens_per_second", "decode_tokens_per_second"):
            workload.setdefault("prefill_tokens_per_second", 500.0)
            workload.setdefault("decode_tokens_per_second", 20.0)
            workload.pop("service_time", None)
        workload[parts[1]] = value
        return doc
    doc.setdefault(section, {})[parts[1]] = value
    return doc


def _inputs(doc: dict[str, Any]) -> SimulationInputs:
    return build_inputs(
        read_manifests([TUTORIAL]),
        load_profile_text(json.dumps(doc), "gpuscale.yaml"),
        namespace="kube-system",
        gauges={WORKLOAD: ("my_custom_gauge",)},
    )


def _fingerprint(inputs: SimulationInputs) -> str:
    return repr(
        (
            inputs.spec,
            [(s.name, s.hpa, s.hpa_options) for s in inputs.scaled_objects],
            inputs.prometheus,
            sorted(inputs.latency_targets.items()),
            inputs.warnings,
        )
    )


_CALIBRATION = {"date": "2026-11-01", "source": "emulator", "residuals": {}, "range": {}}


def _serving_doc() -> dict[str, Any]:
    """The tutorial's workload served by the MI300X × Llama 3.1 8B preset's engine."""
    doc = copy.deepcopy(BASE)
    workload = doc["workloads"][WORKLOAD]
    for key in ("concurrency", "service_time", "requests_per_second"):
        workload.pop(key, None)
    workload["serving"] = {"kind": "vllm", "preset": "mi300x/llama-3.1-8b"}
    return doc


def _base_doc(path: str) -> dict[str, Any]:
    """The unchanged profile a change is compared with (catalogue cases add the entry)."""
    if path == "workloads[].serving.kind":
        doc = _serving_doc()
        del doc["workloads"][WORKLOAD]["serving"]
        return doc
    if path.startswith("workloads[].serving.calibration."):
        doc = _serving_doc()
        doc["workloads"][WORKLOAD]["serving"]["calibration"] = dict(_CALIBRATION)
        return doc
    if path.startswith("workloads[].serving."):
        return _serving_doc()
    if path.startswith("catalogue[]"):
        doc = _profile_doc("catalogue[].gpu_model")
        doc["catalogue"][0]["gpu_model"] = CATALOGUE_ENTRY["gpu_model"]
        return doc
    if path.startswith("workloads[].") and "tokens_per_second" in path:
        doc = copy.deepcopy(BASE)
        workload = doc["workloads"][WORKLOAD]
        workload.update({"prefill_tokens_per_second": 500.0, "decode_tokens_per_second": 20.0})
        workload.pop("service_time", None)
        return doc
    if path == "prometheus.selects_all_servicemonitors":
        doc = copy.deepcopy(BASE)
        doc["prometheus"]["release"] = "not-the-servicemonitors-label"
        doc["prometheus"]["selects_all_servicemonitors"] = False
        return doc
    if path in (
        "workloads[].concurrency",
        "workloads[].latency_target",
        "workloads[].request_timeout",
    ):
        doc = copy.deepcopy(BASE)
        doc["workloads"][WORKLOAD]["service_time"] = "1s"
        return doc
    if path.startswith("node_pools[].taints[]"):
        doc = copy.deepcopy(BASE)
        doc["node_pools"][0]["taints"] = [{"key": "amd.com/gpu", "effect": "NoSchedule"}]
        return doc
    return copy.deepcopy(BASE)


def test_every_field_is_classified() -> None:
    assert set(LEAVES) == set(CHANGES), "give the new field a changed value above"
    assert not (set(ELSEWHERE) & set(NOT_MODELLED))
    assert set(ELSEWHERE) | set(NOT_MODELLED) <= set(LEAVES)


@pytest.mark.parametrize("path", LEAVES)
def test_the_field_reaches_the_models_input(path: str) -> None:
    base = _fingerprint(_inputs(_base_doc(path)))
    changed = _fingerprint(_inputs(_profile_doc(path)))
    if path in ELSEWHERE or path in NOT_MODELLED:
        assert changed == base, f"{path} reaches the simulation: take it off the lists"
    else:
        assert changed != base, f"{path} changes nothing the models are given"
