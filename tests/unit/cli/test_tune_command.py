"""``gpuscale tune`` end to end on a 10-minute trace: same seed, same recommendation;
``--write`` changes only the tuned keys; a killed study resumes with its finished
trials; trials run in processes and on a local Ray."""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gpuscale.cli.main import main
from tests.unit.tune.fixtures import write_system

ROOT = Path(__file__).resolve().parents[3]


def _tune(
    capsys: pytest.CaptureFixture[str], folder: Path, trace: Path, *extra: str
) -> dict[str, Any]:
    args = ["tune", str(folder), "--trace", str(trace), "--slo", "late<=1%", "-o", "json"]
    assert main([*args, *extra]) == 0
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return document


@pytest.fixture
def system(tmp_path: Path) -> tuple[Path, Path]:
    return write_system(tmp_path / "system")


def test_same_seed_same_recommendation(
    system: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    first = _tune(capsys, *system, "--trials", "12", "--seed", "5")
    second = _tune(capsys, *system, "--trials", "12", "--seed", "5")
    assert first["recommended"] == second["recommended"]
    assert [t["settings"] for t in first["all_trials"]] == [
        t["settings"] for t in second["all_trials"]
    ]
    assert first["trials"] == 12 + 3
    # The study tries your configuration first: the same run as its row on the tune part.
    assert first["all_trials"][0]["outcome"] == first["parts"][0]["rows"]["your config"]
    rows = first["parts"][0]["rows"]
    assert set(rows) == {"your config", "recommended", "KEDA defaults", "clairvoyant"}
    assert rows["recommended"]["slo_met"]
    assert rows["recommended"]["dollars"] <= rows["your config"]["dollars"] + 1e-9
    bound = first["parts"][0]["lower_bound"]["dollars"]
    assert bound <= rows["recommended"]["dollars"]


def test_the_text_output_names_the_files_written(
    system: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, trace = system
    out = tmp_path / "tuned"
    args = ["tune", str(folder), "--trace", str(trace), "--slo", "late<=1%", "--trials", "12"]
    assert main([*args, "--write", str(out)]) == 0
    err = capsys.readouterr().err
    written = sorted(str(p) for p in out.iterdir())
    assert written, "the recommendation changes something on this trace"
    line = next(x for x in err.splitlines() if x.startswith("gpuscale: wrote "))
    assert sorted(line.removeprefix("gpuscale: wrote ").split(", ")) == written


def test_a_range_that_leaves_out_your_value_is_warned(
    system: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, trace = system
    profile = folder / "gpuscale.yaml"
    profile.write_text(profile.read_text() + "tune:\n  max_replicas: [1, 2]\n")
    args = ["tune", str(folder), "--trace", str(trace), "--slo", "late<=1%", "--trials", "4"]
    assert main([*args, "--front-trials", "0", "-o", "json"]) == 0
    err = capsys.readouterr().err
    assert "gpuscale: warning: tune.max_replicas [1, 2] leaves out the current value 8" in err


def test_jobs_run_in_processes_and_a_batch_size_is_deterministic(
    system: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    one = _tune(capsys, *system, "--trials", "6", "--front-trials", "0", "--jobs", "2")
    two = _tune(capsys, *system, "--trials", "6", "--front-trials", "0", "--jobs", "2")
    assert one["trials"] == 6
    assert [t["outcome"] for t in one["all_trials"]] == [t["outcome"] for t in two["all_trials"]]


def test_write_changes_only_the_tuned_keys(
    system: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, trace = system
    out = tmp_path / "tuned"
    page = tmp_path / "tune.html"
    document = _tune(
        capsys, folder, trace, "--trials", "12", "--write", str(out), "--report", str(page)
    )
    assert page.read_text().count("data:image/png;base64,") == 3
    assert document["written"]["report"] == str(page)
    # Only the files the recommendation changes are written, and the JSON names them.
    assert sorted(document["written"]["write"]) == sorted(str(p) for p in out.iterdir())
    edits = document["recommended"]["edits"]
    assert edits, "the recommendation changes something on this trace"
    before = (folder / "resources.yaml").read_text().splitlines()
    after = (out / "resources.yaml").read_text().splitlines()
    changed = [
        line[1:]
        for line in difflib.unified_diff(before, after, lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    tuned = {str(path).split(".")[-1] for path in edits}
    for line in changed:
        key = line.strip().lstrip("- ").split(":")[0]
        assert key in tuned, (key, changed)
    removed = [line for line in difflib.ndiff(before, after) if line.startswith("- ")]
    assert len(removed) <= len(edits)
    assert [c for c in before if c.lstrip().startswith("#")] == [
        c for c in after if c.lstrip().startswith("#")
    ]
    from gpuscale.inputs import read_manifests
    from gpuscale.manifests import validate_or_raise

    validate_or_raise(read_manifests([out / "resources.yaml"]))


def _complete(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=0.2) as connection:
            (count,) = connection.execute(
                "SELECT COUNT(*) FROM trials WHERE state = 'COMPLETE'"
            ).fetchone()
    except sqlite3.Error:
        return 0
    return int(count)


def test_a_killed_study_resumes_with_its_finished_trials(
    system: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, trace = system
    db = tmp_path / "tune.db"
    args = [str(folder), "--trace", str(trace), "--slo", "late<=1%", "--study", str(db)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    process = subprocess.Popen(
        [sys.executable, "-m", "gpuscale", "tune", *args, "--trials", "5000"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while _complete(db) < 15 and time.monotonic() < deadline:
            assert process.poll() is None, "the study ended before it was killed"
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    kept = _complete(db)
    assert kept >= 15
    assert (
        main(["tune", *args, "--trials", str(kept + 5), "--front-trials", "2", "-o", "json"]) == 0
    )
    document = json.loads(capsys.readouterr().out)
    assert document["resumed_trials"] >= kept
    assert sum(1 for t in document["all_trials"] if t["study"] == "tpe") == kept + 5


def test_trials_run_on_a_local_ray(
    system: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("ray", reason="ray is not installed (pip install 'gpuscale[ray]')")
    document = _tune(
        capsys,
        *system,
        "--trials",
        "3",
        "--front-trials",
        "0",
        "--jobs",
        "2",
        "--ray-address",
        "local",
    )
    assert document["trials"] == 3
    assert all(t["outcome"]["requests"] > 0 for t in document["all_trials"])


def test_a_ttft_slo_on_the_vllm_example(capsys: pytest.CaptureFixture[str]) -> None:
    trace = ROOT.parent / "shared" / "traces" / "AzureLLMInferenceTrace_conv.csv"
    if not trace.exists():
        trace = Path("/work/shared/traces/AzureLLMInferenceTrace_conv.csv")
    if not trace.exists():
        pytest.skip("the shared traces are not here")
    args = ["tune", str(ROOT / "examples" / "vllm"), "--trace", str(trace)]
    args += ["--slo", "ttft_p95<=2s", "--until", "5m", "--trials", "3", "--front-trials", "0"]
    assert main([*args, "-o", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    rows = document["parts"][0]["rows"]
    assert rows["your config"]["failed"] < rows["your config"]["requests"]
    for row in rows.values():
        if row["failed"] == row["requests"]:  # KEDA's defaults: scaled to zero, never back
            assert row["slo_values"]["ttft_p95<=2s"] is None  # never answered
            assert not row["slo_met"]
            continue
        assert 0 < row["latency_s"]["ttft_p95"] < row["latency_s"]["p95"]
        if row["failed"] == 0:
            assert row["slo_values"]["ttft_p95<=2s"] == pytest.approx(row["latency_s"]["ttft_p95"])


def test_write_edits_the_profile_when_the_gpu_pool_warms(
    system: tuple[Path, Path], tmp_path: Path
) -> None:
    from gpuscale.cli._tune_write import write_recommended
    from gpuscale.inputs import read_manifests, read_profile

    folder, _ = system
    manifests = read_manifests([folder])
    profile = read_profile(folder / "gpuscale.yaml")
    (so,) = manifests.by_kind("ScaledObject")
    out = tmp_path / "warm"
    written = write_recommended(
        out,
        manifests=manifests,
        scaled_object=so,
        changes={},
        profile=profile,
        pool="gpu",
        min_nodes=1,
    )
    assert written == [str(out / "gpuscale.yaml")]
    before = (folder / "gpuscale.yaml").read_text().splitlines()
    after = (out / "gpuscale.yaml").read_text().splitlines()
    changed = [d for d in difflib.ndiff(before, after) if d[:2] in ("- ", "+ ")]
    assert changed == ["-     min_nodes: 0", "+     min_nodes: 1"]
    assert read_profile(out / "gpuscale.yaml").pool("gpu").min_nodes == 1  # type: ignore[union-attr]


def test_keda_defaults_are_tried_first_only_where_the_space_holds_them(
    system: tuple[Path, Path],
) -> None:
    from gpuscale.cli._tune_score import keda_default_settings
    from gpuscale.inputs import read_manifests, read_profile
    from gpuscale.sim.inputs import build_inputs
    from gpuscale.sim.world import LoadSpec
    from gpuscale.tune.objective import TuneProblem
    from gpuscale.tune.space import derive_space, edits

    def problem(folder: Path, name: str, up_to: int | None = None) -> tuple[TuneProblem, Any]:
        manifests = read_manifests([folder])
        profile = read_profile(folder / "gpuscale.yaml")
        if up_to is not None:  # the profile's tune.max_replicas: [1, up_to]
            tune = profile.tune.model_copy(update={"max_replicas": (1, up_to)})
            profile = profile.model_copy(update={"tune": tune})
        workload = build_inputs(manifests, profile).spec.workload(name)
        space, so = derive_space(manifests, profile, workload)
        found = TuneProblem(
            manifests, profile, so, space, name, "default", LoadSpec(), 60.0, 0, (), "1.33"
        )
        return found, workload

    fixture, workload = problem(system[0], "go-from-configmap")
    assert keda_default_settings(fixture, workload) is None  # it writes spec.advanced
    vllm, workload = problem(ROOT / "examples" / "vllm", "vllm-llama")
    defaults = keda_default_settings(vllm, workload)
    assert defaults is not None
    assert (defaults.min_replicas, defaults.max_replicas, defaults.idle_replicas) == (0, 100, None)
    assert (defaults.polling_interval, defaults.cooldown) == (30, 300)
    assert {path[-1] for path in edits(vllm.space, defaults)} == {
        "minReplicaCount",
        "maxReplicaCount",
    }
    assert vllm.space.point(defaults) is None  # maxReplicaCount 100: above the space's 16
    wider, workload = problem(ROOT / "examples" / "vllm", "vllm-llama", up_to=100)
    defaults = keda_default_settings(wider, workload)
    assert defaults is not None
    point = wider.space.point(defaults)
    assert point is not None
    assert wider.space.settings(point) == defaults


def test_a_validation_miss_says_when_the_run_held_its_starting_replicas() -> None:
    from gpuscale.cli._tune import _held
    from gpuscale.tune.objective import Outcome
    from gpuscale.tune.slo import SloCheck

    held = Outcome(
        dollars=4.69,
        gpu_hours=2.36,
        node_hours=2.36,
        check=SloCheck({"ttft_p95<=2s": 2.0005}, met=False, excess=0.0003),
        attainment=1.0,
        requests=3890,
        late=0,
        failed=0,
        latency={},
        pending_p99_s=0.0,
        replica_changes=0,
        flaps=0,
        cold_starts=0,
        nodes_added=0,
        timeline=((0.0, 8, 8),),
    )
    assert "held the 8 replicas the part starts with" in _held(held)
    scaled = dataclasses.replace(held, replica_changes=2, timeline=((0.0, 8, 8), (60.0, 9, 8)))
    assert _held(scaled) == ""


def test_a_study_resumed_with_another_slo_or_trace_is_refused(
    system: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, trace = system
    db = tmp_path / "tune.db"
    study = ["--trials", "2", "--front-trials", "0", "--study", str(db), "--until", "10m"]
    _tune(capsys, folder, trace, *study)
    before = db.read_bytes()
    shorter = tmp_path / "shorter.csv"
    shorter.write_text("".join(trace.read_text().splitlines(keepends=True)[:-3]))
    args = ["tune", str(folder), "--trace", str(shorter), "--slo", "late<=5%", *study]
    assert main(args) == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("gpuscale: error:")]
    assert errors == [
        f"gpuscale: error: --study {db}: the study was made from other inputs: --trace, "
        "--slo (late<=1% then, late<=5% now) (fix: give a new --study file, or run with "
        "the inputs the study was made from)"
    ]
    assert "Traceback" not in err
    assert db.read_bytes() == before
    # The same inputs, --until written another way: resumed.
    again = _tune(capsys, folder, trace, "--trials", "3", *study[2:-1], "600s")
    assert again["resumed_trials"] == 2
    assert again["trials"] == 3
