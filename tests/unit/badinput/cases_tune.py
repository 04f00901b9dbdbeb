"""Bad inputs of ``gpuscale tune``: each is refused before any trial runs."""

from __future__ import annotations

from tests.unit.badinput._harness import Bad
from tests.unit.tune.fixtures import PROFILE, RESOURCES, trace_csv

_FILES: dict[str, str | bytes] = {
    "sys/resources.yaml": RESOURCES,
    "sys/gpuscale.yaml": PROFILE,
    "t.csv": trace_csv(minutes=2),
}
_RUN = ("tune", "{d}/sys", "--trace", "{d}/t.csv")


def _with(profile: str) -> dict[str, str | bytes]:
    return {**_FILES, "sys/gpuscale.yaml": profile}


CASES = [
    Bad("tune-slo-not-a-comparison", (*_RUN, "--slo", "late>>1%"), _FILES, ("--slo",)),
    Bad("tune-slo-unknown-measure", (*_RUN, "--slo", "speed_p99<=1s"), _FILES, ("--slo",)),
    Bad("tune-slo-share-over-100", (*_RUN, "--slo", "late<=150%"), _FILES, ("--slo",)),
    Bad(
        "tune-slo-ttft-needs-serving",
        (*_RUN, "--slo", "ttft_p95<=2s"),
        _FILES,
        ("gpuscale.yaml", "serving.kind: vllm"),
    ),
    Bad("tune-slo-twice", (*_RUN, "--slo", "late<=1%", "--slo", "late<=2%"), _FILES, ("--slo",)),
    Bad("tune-trials-zero", (*_RUN, "--slo", "late<=1%", "--trials", "0"), _FILES, ("--trials",)),
    Bad("tune-jobs-zero", (*_RUN, "--slo", "late<=1%", "--jobs", "0"), _FILES, ("--jobs",)),
    Bad(
        "tune-holdout-not-a-share",
        (*_RUN, "--slo", "late<=1%", "--holdout", "130%"),
        _FILES,
        ("--holdout",),
    ),
    Bad(
        "tune-holdout-without-percent",
        (*_RUN, "--slo", "late<=1%", "--holdout", "30"),
        _FILES,
        ("--holdout", "% sign", "--holdout 30%"),
    ),
    Bad(
        "tune-holdout-and-validate-trace",
        (*_RUN, "--slo", "late<=1%", "--holdout", "30%", "--validate-trace", "{d}/t.csv"),
        _FILES,
        ("--holdout",),
    ),
    Bad(
        "tune-late-without-latency-target",
        (*_RUN, "--slo", "late<=1%"),
        _with(PROFILE.replace("    latency_target: 30s\n", "")),
        ("gpuscale.yaml", "latency_target"),
    ),
    Bad(
        "tune-range-backwards",
        (*_RUN, "--slo", "late<=1%"),
        _with(PROFILE + "tune:\n  threshold: [9, 3]\n"),
        ("gpuscale.yaml:", "threshold"),
    ),
    Bad(
        "tune-keep-unknown-setting",
        (*_RUN, "--slo", "late<=1%"),
        _with(PROFILE + "tune:\n  keep: [replicas]\n"),
        ("gpuscale.yaml:", "tune.keep"),
    ),
    Bad(
        "tune-study-folder-missing",
        (*_RUN, "--slo", "late<=1%", "--study", "{d}/nowhere/tune.db"),
        _FILES,
        ("nowhere",),
    ),
    Bad(
        "tune-no-scaled-object",
        (*_RUN, "--slo", "late<=1%"),
        {**_FILES, "sys/resources.yaml": RESOURCES.split("---\napiVersion: keda.sh")[0]},
        ("no ScaledObject scales go-from-configmap",),
    ),
    Bad(
        "tune-min-replicas-above-derived-max",
        (*_RUN, "--slo", "late<=1%"),
        _with(PROFILE + "tune:\n  min_replicas: [20, 20]\n"),
        ("gpuscale.yaml:34:", "tune.min_replicas", "highest maxReplicaCount, 16"),
    ),
    Bad(
        "tune-gpu-min-nodes-above-pool",
        (*_RUN, "--slo", "late<=1%"),
        _with(PROFILE + "tune:\n  gpu_min_nodes: [9, 10]\n"),
        ("gpuscale.yaml:34:", "tune.gpu_min_nodes: low 9 is above the gpu pool's max_nodes 8"),
    ),
]

CASES += [
    Bad(
        "tune-study-not-a-database",
        (*_RUN, "--slo", "late<=1%", "--study", "{d}/junk.db"),
        {**_FILES, "junk.db": "not a database\n"},
        ("--study", "junk.db", "not a study's database"),
    ),
    Bad(
        "tune-study-unknown-database-url",
        (*_RUN, "--slo", "late<=1%", "--study", "nosuchdb://x/y"),
        _FILES,
        ("--study nosuchdb://x/y", "not a database URL"),
    ),
]
