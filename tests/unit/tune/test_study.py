"""The study tries the user's configuration first: once, also across a resume, and again
when a stopped run left it unfinished; the best trial then never costs more than it. A
stored study refuses to resume with other inputs, and a bad storage is one line."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import optuna
import pytest
import sqlalchemy.exc

from gpuscale.errors import InputError, UnavailableError
from gpuscale.inputs import read_manifests, read_profile, read_trace
from gpuscale.sim.inputs import build_inputs
from gpuscale.sim.world import LoadSpec
from gpuscale.tune.objective import TuneProblem, evaluate
from gpuscale.tune.slo import parse_slos
from gpuscale.tune.space import derive_space, starting_with
from gpuscale.tune.study import _enqueue, _studies, run_study
from tests.unit.tune.fixtures import write_system


@pytest.fixture(scope="module")
def problem(tmp_path_factory: pytest.TempPathFactory) -> TuneProblem:
    folder, trace_path = write_system(tmp_path_factory.mktemp("study") / "system")
    manifests = read_manifests([folder])
    profile = read_profile(folder / "gpuscale.yaml")
    workload = build_inputs(manifests, profile).spec.workload("go-from-configmap")
    space, so = derive_space(manifests, profile, workload)
    trace = read_trace(trace_path)
    return TuneProblem(
        manifests=starting_with(manifests, "go-from-configmap", 2),
        profile=profile,
        scaled_object=so,
        space=space,
        workload="go-from-configmap",
        namespace="default",
        load=LoadSpec(traces={"go-from-configmap": trace.tiled(trace.period)}),
        until=trace.period,
        seed=0,
        slos=parse_slos(["late<=1%"]),
        kube_version="1.33",
    )


def _yours(problem: TuneProblem, storage: str | None, trials: int) -> list[dict[str, object]]:
    result = run_study(
        problem,
        trials=trials,
        front_trials=0,
        storage=storage,
        seed=4,
        first={"your config": problem.space.current},
    )
    assert sum(1 for t in result.trials if t.study == "tpe") == trials
    return [t.outcome for t in result.trials if t.settings == problem.space.current.as_dict()]


def test_the_users_configuration_is_the_first_trial_and_bounds_the_best(
    problem: TuneProblem,
) -> None:
    result = run_study(
        problem, trials=3, front_trials=0, seed=4, first={"your config": problem.space.current}
    )
    first = result.trials[0]
    assert first.settings == problem.space.current.as_dict()
    user = evaluate(problem, problem.space.current)
    assert first.outcome == user.as_dict(problem.slos)
    assert user.check.met
    assert result.best is not None
    assert result.best.outcome["dollars"] <= user.dollars


def test_a_resumed_study_does_not_try_it_twice(problem: TuneProblem, tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path / 'tune.db'}"
    assert len(_yours(problem, storage, 2)) == 1
    assert len(_yours(problem, storage, 4)) == 1


def test_a_run_stopped_while_trying_it_tries_it_again(problem: TuneProblem, tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path / 'tune.db'}"
    tpe, _ = _studies(storage, "gpuscale-tune", 4)
    _enqueue(tpe, problem.space, {"your config": problem.space.current})
    stale = tpe.ask()  # a run killed while the trial ran: left RUNNING in the storage
    problem.space.sample(stale)
    assert _yours(problem, storage, 2) == [
        evaluate(problem, problem.space.current).as_dict(problem.slos)
    ]
    states = [t.state for t in tpe.get_trials(deepcopy=False)]
    assert states.count(optuna.trial.TrialState.FAIL) == 1


_MADE = {"--slo": "late<=1%", "--trace": "sha256:aaaa", "--seed": "4"}


def _run(problem: TuneProblem, storage: str, fingerprint: dict[str, str], trials: int) -> int:
    result = run_study(
        problem, trials=trials, front_trials=0, storage=storage, seed=4, fingerprint=fingerprint
    )
    return result.resumed


def test_a_study_made_from_other_inputs_is_refused_untouched(
    problem: TuneProblem, tmp_path: Path
) -> None:
    db = tmp_path / "tune.db"
    storage = f"sqlite:///{db}"
    assert _run(problem, storage, _MADE, 2) == 0
    before = db.read_bytes()
    other = {**_MADE, "--slo": "late<=2%", "--trace": "sha256:bbbb"}
    with pytest.raises(InputError) as refused:
        _run(problem, storage, other, 3)
    line = str(refused.value)
    assert line.startswith(f"--study {db}: the study was made from other inputs: ")
    assert "--slo (late<=1% then, late<=2% now)" in line
    assert line.endswith(
        "--trace (fix: give a new --study file, or run with the inputs the study was made from)"
    )
    assert "sha256" not in line  # a digest is named, not shown
    assert "--seed" not in line
    assert refused.value.exit_code == 2
    assert db.read_bytes() == before
    assert _run(problem, storage, _MADE, 3) == 2  # the same inputs resume


def test_a_study_kept_without_a_fingerprint_is_refused_once_it_has_trials(
    problem: TuneProblem, tmp_path: Path
) -> None:
    storage = f"sqlite:///{tmp_path / 'old.db'}"
    run_study(problem, trials=1, front_trials=0, storage=storage, seed=4)  # no fingerprint
    with pytest.raises(InputError, match="does not record the inputs"):
        _run(problem, storage, _MADE, 2)
    empty = f"sqlite:///{tmp_path / 'empty.db'}"
    _studies(empty, "gpuscale-tune", 4)  # created, no trial yet: adopted
    assert _run(problem, empty, _MADE, 1) == 0
    with pytest.raises(InputError, match="other inputs"):
        _run(problem, empty, {**_MADE, "--seed": "5"}, 1)


def test_a_file_that_is_no_database_is_one_line(problem: TuneProblem, tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_text("not sqlite\n")
    with pytest.raises(InputError) as refused:
        _run(problem, f"sqlite:///{junk}", _MADE, 1)
    assert str(refused.value).startswith(f"--study {junk}: not a study's database: ")
    assert junk.read_text() == "not sqlite\n"


def test_a_missing_database_driver_names_its_package(problem: TuneProblem) -> None:
    if importlib.util.find_spec("psycopg") is not None:
        pytest.skip("psycopg is installed here")
    with pytest.raises(InputError) as refused:
        _run(problem, "postgresql://nobody@127.0.0.1:1/x", _MADE, 1)
    assert "psycopg is not installed" in str(refused.value)
    assert "pip install 'psycopg[binary]'" in str(refused.value)


def test_a_database_that_does_not_answer_is_an_outside_failure(
    problem: TuneProblem, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(url: str) -> None:
        raise sqlalchemy.exc.OperationalError(
            "connect", {}, ConnectionRefusedError("connection refused")
        )

    monkeypatch.setattr(optuna.storages, "RDBStorage", refused)
    with pytest.raises(UnavailableError) as failed:
        _run(problem, "postgresql://bob:hunter2@127.0.0.1:1/x", _MADE, 1)
    assert failed.value.exit_code == 1
    assert str(failed.value).startswith(
        "--study postgresql://bob:***@127.0.0.1:1/x: cannot reach the database: connection refused"
    )
