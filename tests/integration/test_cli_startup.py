"""What a fresh ``gpuscale`` process imports: ``--help`` stays light, each command pays for
what it uses.

Each case runs the real entry point (:func:`gpuscale.cli.main.main`) in a new interpreter
and reads ``sys.modules`` afterwards. Nothing is timed (``benchmarks/cli_startup.py``
measures the seconds); these tests catch a module-level import that would bring a heavy
module back into start-up.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuscale.cli.main import COMMAND_HELP

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]

# Libraries a help text never needs (each costs 20-150 ms to import), and gpuscale's own
# packages that only running a command may need. (Running any command with a non-flag
# option imports pydantic: Typer 0.29 converts option values with it.)
HEAVY_LIBRARIES = (
    "asyncio",
    "httptools",
    "httpx",
    "jsonschema",
    "kubernetes",
    "matplotlib",
    "numpy",
    "prometheus_client",
    "promql_parser",
    "pydantic",
    "pydo",
    "referencing",
    "ruamel.yaml",
)
HEAVY_GPUSCALE = (
    "gpuscale.app",
    "gpuscale.cloud",
    "gpuscale.controllers",
    "gpuscale.lint._run",
    "gpuscale.lint.rules",
    "gpuscale.live",
    "gpuscale.profile._model",
    "gpuscale.prometheus",
    "gpuscale.promql",
    "gpuscale.report",
    "gpuscale.sim",
)
_GAUGE_RUN = ["simulate", "examples/tutorial", "--scenario", "examples/tutorial-scenario.yaml"]
_NOT_IN_A_GAUGE_RUN = [
    "numpy",
    "matplotlib",
    "optuna",
    "kubernetes",
    "kubernetes_validate",
    "yaml",
    "asyncio",
    "httpx",
    "gpuscale.serving",
    "gpuscale.sim.requests",
    "gpuscale.sim.serving",
    "gpuscale.sim.load",
    "gpuscale.sim.traces",
    "gpuscale.report.plots",
    "gpuscale.report.page",
    "gpuscale.tune",
    "gpuscale.live",
    "gpuscale.lint",
]
_PROBE = """
import json, sys
from gpuscale.cli.main import main
code = main(sys.argv[1:])
sys.stdout.flush()
sys.stderr.write("\\n" + json.dumps({"code": code, "modules": sorted(sys.modules)}) + "\\n")
"""


def _run(*args: str) -> tuple[int, str, set[str]]:
    """Exit code, stdout and the imported modules of ``gpuscale ARGS`` in a new process."""
    env = {**os.environ, "COLUMNS": "100"}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    report = json.loads(done.stderr.rstrip("\n").rsplit("\n", 1)[-1])
    return report["code"], done.stdout, set(report["modules"])


def _heavy(modules: set[str]) -> list[str]:
    return sorted(
        name
        for name in modules
        for heavy in (*HEAVY_LIBRARIES, *HEAVY_GPUSCALE)
        if name == heavy or name.startswith(f"{heavy}.")
    )


def _command_modules(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.startswith("gpuscale.cli.") and m.endswith("_cmd"))


@pytest.mark.parametrize("args", [["--help"], [], ["--version"], ["lnt"]])
def test_the_root_imports_no_command_module(args: list[str]) -> None:
    _, _, modules = _run(*args)
    assert _command_modules(modules) == []
    assert _heavy(modules) == []


def test_root_help_lists_every_command_as_with_every_module_imported() -> None:
    code, lazy, _ = _run("--help")
    eager = subprocess.run(
        [
            sys.executable,
            "-c",
            "from gpuscale.cli.main import _register_commands, main; "
            "_register_commands(); main(['--help'])",
        ],
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "100"},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    assert code == 0
    assert lazy == eager
    for entry in COMMAND_HELP.values():
        assert f" {entry.name} " in lazy


def test_a_mistyped_command_is_still_suggested() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gpuscale", "lnt"],
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "100"},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 2
    assert "No such command 'lnt'. Did you mean 'lint'?" in done.stderr


@pytest.mark.parametrize(
    ("module", "name"),
    [pytest.param(module, entry.name, id=entry.name) for module, entry in COMMAND_HELP.items()],
)
def test_command_help_imports_only_its_own_module(module: str, name: str) -> None:
    code, out, modules = _run(name, "--help")
    assert code == 0
    assert f"Usage: gpuscale {name}" in out
    assert _command_modules(modules) == [f"gpuscale.cli.{module}"]
    assert _heavy(modules) == []


@pytest.mark.parametrize(
    ("args", "absent"),
    [
        # Linting validates schemas (schema-invalid) and looks for ./gpuscale.yaml, so it
        # needs jsonschema and the profile models, but nothing of the live commands.
        (["lint", "examples/tutorial-fixed/"], ["gpuscale.live", "gpuscale.cloud", "asyncio"]),
        (["lint", "--list"], ["gpuscale.profile._model", "jsonschema", "gpuscale.live"]),
        # The profile reads the cluster autoscaler's defaults from their dependency-free
        # module (gpuscale.controllers.autoscaler_defaults), not from the models.
        (
            ["profile", "show"],
            [
                "jsonschema",
                "gpuscale.lint",
                "gpuscale.controllers.cluster_autoscaler",
                "gpuscale.controllers.hpa",
                "gpuscale.controllers.scheduler",
            ],
        ),
        (["init", "--stdout"], ["jsonschema", "gpuscale.profile._model", "gpuscale.lint"]),
        # A run of gauge steps sends no requests: no numpy (the request model's), no vLLM
        # engine model; the Kubernetes schemas are read without kubernetes_validate's
        # module (it imports PyYAML); -o json prints without rich, the table without a
        # progress bar (docs/benchmarks/sim_startup.md).
        pytest.param(
            [*_GAUGE_RUN, "-o", "json"],
            [*_NOT_IN_A_GAUGE_RUN, "rich"],
            id="simulate-gauges-json",
        ),
        pytest.param(
            _GAUGE_RUN, [*_NOT_IN_A_GAUGE_RUN, "rich.progress"], id="simulate-gauges-text"
        ),
    ],
)
def test_a_command_pays_only_for_what_it_uses(args: list[str], absent: list[str]) -> None:
    code, out, modules = _run(*args)
    assert code == 0
    assert out
    loaded = [
        name for name in absent if any(m == name or m.startswith(f"{name}.") for m in modules)
    ]
    assert loaded == []


def _fresh(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout


@pytest.mark.parametrize("package", ["gpuscale.manifests", "gpuscale.profile", "gpuscale.lint"])
def test_importing_a_lazy_package_loads_none_of_its_modules(package: str) -> None:
    loaded = _fresh(
        f"import sys, {package}; print(sorted(m for m in sys.modules if m.startswith('gpuscale')))"
    )
    assert [m for m in eval(loaded) if m.startswith(f"{package}.")] == []


def test_the_lint_registry_is_full_when_first_read() -> None:
    counts = _fresh(
        "from gpuscale.lint import REGISTRY; n = len(REGISTRY); "
        "from gpuscale.lint import catalogue; print(n, len(catalogue()))"
    ).split()
    assert int(counts[0]) == int(counts[1]) > 0
