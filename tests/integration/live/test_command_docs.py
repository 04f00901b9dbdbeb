"""The example outputs in ``docs/commands/deploy.md`` and ``verify.md`` are real.

Each block marked ``<!-- output: NAME -->`` in those pages is what the command printed
when run here against the fake API server (and, for verify, a real Prometheus behind a
port-forward; ``conftest.py``). Run with ``GPUSCALE_UPDATE_DOCS=1`` to write the blocks
after a deliberate change of the output; otherwise a difference fails.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuscale.cli import verify_cmd
from gpuscale.cli.main import main
from gpuscale.inputs import read_manifests
from tests.integration.live import chain as c
from tests.integration.live import objects as o
from tests.integration.live.conftest import Stack
from tests.integration.live.fake_kube import FakeKube

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
DOCS = REPO / "docs" / "commands"
UPDATE = os.environ.get("GPUSCALE_UPDATE_DOCS") == "1"
FIXED = "examples/tutorial-fixed"


def _transcript(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    out = capsys.readouterr()
    text = f"$ gpuscale {' '.join(argv)}\n{out.out}{out.err}"
    if code:
        text += f"$ echo $?\n{code}\n"
    return text


def _check(page: str, name: str, text: str) -> None:
    path = DOCS / page
    doc = path.read_text(encoding="utf-8")
    marker = f"<!-- output: {name} -->\n```text\n"
    start = doc.index(marker) + len(marker)
    end = doc.index("```\n", start)
    if UPDATE:
        path.write_text(doc[:start] + text + doc[end:], encoding="utf-8")
        return
    assert doc[start:end] == text, f"{page} block {name!r} is not what the command prints now"


def _stack(kube: FakeKube) -> None:
    for doc in (*o.KEDA_CRDS, *o.PROMETHEUS_OPERATOR_CRDS, o.namespace("gpu-demo")):
        kube.put(doc)


def test_deploy_outputs(
    fake_kube: FakeKube,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _stack(fake_kube)
    runs: list[tuple[str, Callable[[], str]]] = [
        ("server-dry-run", lambda: _transcript(capsys, "deploy", FIXED, "--dry-run=server")),
        ("first", lambda: _transcript(capsys, "deploy", FIXED)),
        ("again", lambda: _transcript(capsys, "deploy", FIXED)),
    ]
    for name, run in runs:
        _check("deploy.md", name, run())
    _check(
        "deploy.md",
        "client-dry-run",
        _transcript(
            capsys, "deploy", "examples/tutorial", "--force", "--dry-run=client", "-n", "gpu-demo"
        ),
    )
    theirs = read_manifests([FIXED]).by_kind("Deployment")[0].body
    theirs = json.loads(
        json.dumps(theirs).replace(
            '"terminationGracePeriodSeconds": 30', '"terminationGracePeriodSeconds": 60'
        )
    )
    fake_kube.applied_as(theirs, "kubectl-client-side-apply")
    _check("deploy.md", "conflict", _transcript(capsys, "deploy", FIXED))
    _check(
        "deploy.md", "force-conflicts", _transcript(capsys, "deploy", FIXED, "--force-conflicts")
    )
    for doc in o.KEDA_CRDS:
        fake_kube.delete(doc)
    _check("deploy.md", "no-keda", _transcript(capsys, "deploy", FIXED))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "resources.yaml").write_text(_bad_manifest(), encoding="utf-8")
    _check("deploy.md", "invalid", _transcript(capsys, "deploy", "resources.yaml"))


def _bad_manifest() -> str:
    text = (REPO / FIXED / "resources.yaml").read_text(encoding="utf-8")
    return text.replace("  # No replicas:", "  replicas: one  # No replicas:").replace(
        "periodSeconds: 5", "periodSeconds: -5"
    )


def test_verify_outputs(
    fake_kube: FakeKube,
    stacks: dict[bool, Stack],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(verify_cmd, "runtime", verify_cmd.VerifyRuntime(tty=False))
    stacks[False].install(fake_kube)
    _check(
        "verify.md",
        "tutorial",
        _transcript(capsys, "verify", "examples/tutorial", "-n", c.APP_NS),
    )
    fake_kube.objects.clear()
    stacks[True].install(fake_kube)
    _check("verify.md", "fixed", _transcript(capsys, "verify", FIXED))
