"""The study tries the user's configuration first: once, also across a resume, and again
when a stopped run left it unfinished; the best trial then never costs more than it."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest

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
