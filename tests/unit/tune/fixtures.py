"""A small request-serving system and trace for the tune tests: the corrected tutorial's
manifests with a request-count query, a profile whose workload serves LLM requests,
and a deterministic 10-minute Azure-format trace that needs a few replicas."""

from __future__ import annotations

import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
FIXED = ROOT / "examples" / "tutorial-fixed"

QUERY = (
    'sum(gpuscale_requests_in_flight{namespace="gpu-demo", service="go-from-configmap"})'
    ' + sum(gpuscale_requests_queued{namespace="gpu-demo", service="go-from-configmap"})'
)

RESOURCES = (
    (FIXED / "resources.yaml")
    .read_text()
    .replace('sum(my_custom_gauge{namespace="gpu-demo", service="go-from-configmap"})', QUERY)
    .replace("threshold: '80'", "threshold: '6'")
)

PROFILE = (
    (FIXED / "gpuscale.yaml").read_text().replace("provisioning_time: 10m", "provisioning_time: 2m")
    + "    concurrency: 8\n    prefill_tokens_per_second: 8000\n"
    "    decode_tokens_per_second: 40\n    latency_target: 30s\n    request_timeout: 2m\n"
)


def trace_csv(minutes: int = 10, seed: int = 7) -> str:
    """Azure LLM trace rows: a rate rising from 1 to 4 requests/s and back."""
    rng = random.Random(seed)
    rows = ["TIMESTAMP,ContextTokens,GeneratedTokens"]
    t = 0.0
    end = minutes * 60.0
    while t < end:
        rate = 1.0 + 3.0 * (1 - abs(2 * t / end - 1))
        t += rng.expovariate(rate)
        minute, second = divmod(t, 60)
        hour, minute = divmod(int(minute), 60)
        stamp = f"2023-11-16 {18 + hour:02d}:{minute:02d}:{second:010.7f}"
        rows.append(f"{stamp},{rng.randint(200, 2000)},{rng.randint(20, 300)}")
    return "\n".join(rows) + "\n"


def write_system(folder: Path) -> tuple[Path, Path]:
    """The manifests' folder (with its gpuscale.yaml) and the trace file."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "resources.yaml").write_text(RESOURCES)
    (folder / "gpuscale.yaml").write_text(PROFILE)
    trace = folder.parent / "trace.csv"
    trace.write_text(trace_csv())
    return folder, trace
