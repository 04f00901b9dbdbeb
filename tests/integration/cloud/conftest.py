"""Fixtures for the DigitalOcean command tests: a fake API behind pydo's real client.

Every test that runs a command goes through :func:`run`, which keeps everything the
command printed; at teardown the ``no_token_leak`` fixture asserts that the API token
appears nowhere in stdout, stderr or the log records (pydo and azure-core logging at
DEBUG included).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpuscale.cli import cluster_cmd
from gpuscale.cli.main import main
from tests.integration.cloud.fake_do import TOKEN, FakeClock, FakeDigitalOcean, FakeTransport

PROFILE = """\
cluster:
  provider: doks
  name: gpu-keda
  region: atl1
  version: latest
node_pools:
  - name: gpu
    size: gpu-mi300x1-192gb
    gpu: amd
    gpus_per_node: 1
    min_nodes: 0
    max_nodes: 2
    labels: {workload: gpu}
    taints:
      - {key: amd.com/gpu, effect: NoSchedule}
      - {key: dedicated, value: ml, effect: NoExecute}
  - name: general
    size: s-4vcpu-8gb
    count: 2
"""


@dataclass
class Result:
    code: int
    out: str
    err: str


@dataclass
class Harness:
    fake: FakeDigitalOcean
    transport: FakeTransport
    clock: FakeClock
    profile: Path
    tmp: Path
    environ: dict[str, str]
    outputs: list[str]
    capsys: pytest.CaptureFixture[str]

    def run(self, *argv: str) -> Result:
        code = main(list(argv))
        captured = self.capsys.readouterr()
        self.outputs.extend([captured.out, captured.err])
        return Result(code, captured.out, captured.err)

    def write_profile(self, text: str, name: str = "gpuscale.yaml") -> Path:
        path = self.tmp / name
        path.write_text(text, encoding="utf-8")
        return path


@pytest.fixture
def harness(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Harness]:
    caplog.set_level(logging.DEBUG)
    fake = FakeDigitalOcean()
    transport = FakeTransport(fake)
    clock = FakeClock()
    environ = {"DIGITALOCEAN_ACCESS_TOKEN": TOKEN}
    profile = tmp_path / "gpuscale.yaml"
    profile.write_text(PROFILE, encoding="utf-8")
    monkeypatch.setattr(
        cluster_cmd,
        "runtime",
        cluster_cmd.CloudRuntime(
            transport=transport,
            clock=clock,
            sleep=clock.sleep,
            environ=environ,
            home=tmp_path / "home",
            poll_interval=10.0,
        ),
    )
    h = Harness(fake, transport, clock, profile, tmp_path, environ, [], capsys)
    yield h
    seen = "\n".join(h.outputs) + caplog.text
    for record in caplog.records:
        seen += str(record.args) + record.getMessage()
    for path in tmp_path.rglob("*"):
        if path.is_file() and not path.name.startswith("token"):
            seen += path.read_text(encoding="utf-8", errors="replace")
    assert TOKEN not in seen, "the DigitalOcean token leaked into output, logs or files"
    assert TOKEN[8:40] not in seen
