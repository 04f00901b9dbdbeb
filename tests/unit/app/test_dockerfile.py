"""The Dockerfile runs ``gpuscale app`` as a non-root user with nothing installed at start.

Docker cannot run here; ``tests/integration/app/test_entrypoint.py`` runs the same
entrypoint as a real process.
"""

from __future__ import annotations

import re

from tests.unit.app.dockerfile import DOCKERFILE, exec_form, stages

INSTALLERS = re.compile(r"\b(pip3?|apt-get|apt|apk|curl|wget|uv|go|npm|conda)\b")


def test_entrypoint_is_gpuscale_app_in_exec_form() -> None:
    last = stages(DOCKERFILE.read_text())[-1]
    [entrypoint] = last.all("ENTRYPOINT")
    assert exec_form(entrypoint) == ["gpuscale", "app"]
    assert last.all("CMD") == [], "defaults live in gpuscale app itself (0.0.0.0:8080)"


def test_runs_as_a_numeric_non_root_user() -> None:
    last = stages(DOCKERFILE.read_text())[-1]
    users = last.all("USER")
    assert users, "the final stage must switch user"
    user = users[-1].split(":")[0]
    assert user.isdigit()
    assert int(user) != 0
    keywords = [key for key, _ in last.instructions]
    assert "RUN" not in keywords[keywords.index("USER") :], "nothing runs after USER"


def test_nothing_installs_at_run_time() -> None:
    last = stages(DOCKERFILE.read_text())[-1]
    for keyword in ("ENTRYPOINT", "CMD", "HEALTHCHECK", "ONBUILD"):
        for args in last.all(keyword):
            assert not INSTALLERS.search(args), f"{keyword} {args}"
    for args in last.all("RUN"):
        assert not INSTALLERS.search(args), f"the final stage installs at build: RUN {args}"


def test_build_stage_installs_wheels_only() -> None:
    build = stages(DOCKERFILE.read_text())[0]
    [run] = build.all("RUN")
    assert "--only-binary=:all:" in run, "no compiler: every dependency must come as a wheel"


def test_slim_python_base_and_port() -> None:
    all_stages = stages(DOCKERFILE.read_text())
    assert len(all_stages) == 2
    for stage in all_stages:
        assert re.fullmatch(r"python:3\.1[1-9]-slim(-\w+)?", stage.base), stage.base
    last = all_stages[-1]
    assert last.all("EXPOSE") == ["8080"]
    assert last.all("STOPSIGNAL") == ["SIGTERM"]
    assert last.env()["PATH"].startswith("/opt/gpuscale/bin:")


def test_healthcheck_absence_is_explained() -> None:
    text = DOCKERFILE.read_text()
    last = stages(text)[-1]
    assert last.all("HEALTHCHECK") or "No HEALTHCHECK:" in text


def test_dockerignore_keeps_the_context_small() -> None:
    ignore = (DOCKERFILE.parent / ".dockerignore").read_text().split()
    assert ignore[ignore.index("*")] == "*"
    assert {"!pyproject.toml", "!README.md", "!src/"} <= set(ignore)


def test_the_image_installs_only_what_gpuscale_app_needs() -> None:
    """The wheel goes in without its dependencies, then only the requirements
    ``python -m gpuscale._app_requirements`` prints (pip brings what those need)."""
    build = stages(DOCKERFILE.read_text())[0]
    [run] = build.all("RUN")
    steps = [step.strip() for step in run.split("&&")]
    wheel = next(s for s in steps if "gpuscale-*.whl" in s and " install " in s)
    assert "--no-deps" in wheel
    [listing] = [s for s in steps if "-m gpuscale._app_requirements" in s]
    target = listing.split(">")[-1].strip()
    assert any(s.endswith(f"install --only-binary=:all: -r {target}") for s in steps)
    assert steps.index(listing) > steps.index(wheel)


def test_app_requirements_are_pyprojects_own_ranges() -> None:
    import tomllib

    from gpuscale._app_requirements import APP_DISTRIBUTIONS, app_requirements

    declared = tomllib.loads((DOCKERFILE.parent / "pyproject.toml").read_text())["project"][
        "dependencies"
    ]

    def key(requirement: str) -> tuple[str, frozenset[str]]:
        match = re.match(r"([A-Za-z0-9._-]+)(.*)", requirement)
        assert match is not None, requirement
        name, rest = match.groups()
        spec = rest.partition(";")[0].replace(" ", "")
        return re.sub(r"[-_.]+", "-", name).lower(), frozenset(spec.split(","))

    wanted = app_requirements()
    assert [key(r)[0] for r in wanted] == list(APP_DISTRIBUTIONS)
    assert {key(r) for r in wanted} <= {key(r) for r in declared}
    assert len(wanted) < len(declared) / 3
