"""The search: an Optuna study whose trials are simulations. Not pure: it starts worker
processes (or sends the trials to a Ray cluster) and opens the study's database.

The study asks for trials in batches of ``jobs``, runs the batch in parallel (local
processes, or Ray tasks with ``ray_address``) and tells Optuna the results in the
order it asked, so a study is the same for a seed and a batch size however the workers
are scheduled. Optuna's storage (SQLite with ``--study``, or any database URL) holds
every finished trial as soon as it is told: a study stopped by Ctrl-C or a crash
resumes from them, the trials it was running marked failed and asked again.

The samplers: TPE with the SLOs as a constraint (``constraints_func``: the largest
relative excess over an SLO bound, feasible at <= 0) finds the cheapest configuration;
NSGA-II, in a second study beside it, spreads trials along the front of dollars
against attainment. The TPE study's first trials are the configurations given as
``first`` (the user's, KEDA's defaults), enqueued once (docs/tune.md, "The objective").
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import optuna

from gpuscale.errors import InputError
from gpuscale.tune.objective import InvalidCandidateError, Outcome, TuneProblem, evaluate
from gpuscale.tune.space import Settings, Space

__all__ = ["Progress", "StudyResult", "TrialRecord", "run_study"]

Progress = Callable[[int, int, float | None], None]
"""Called after each trial: (finished trials, wanted trials, best feasible dollars)."""

_PROBLEM: TuneProblem | None = None


@dataclass(frozen=True)
class TrialRecord:
    """One finished trial."""

    number: int
    study: Literal["tpe", "front"]
    settings: dict[str, Any]
    outcome: dict[str, Any]
    feasible: bool


@dataclass(frozen=True)
class StudyResult:
    """Every finished trial of both studies, and the best feasible one."""

    trials: tuple[TrialRecord, ...]
    best: TrialRecord | None
    resumed: int
    """Finished trials found in the storage when the run began."""


def _init_worker(problem: TuneProblem) -> None:
    global _PROBLEM  # noqa: PLW0603 - one problem per worker process, set once
    _PROBLEM = problem


def _run_one(settings: Settings) -> dict[str, Any] | str:
    assert _PROBLEM is not None
    return _trial(_PROBLEM, settings)


def _trial(problem: TuneProblem, settings: Settings) -> dict[str, Any] | str:
    try:
        outcome: Outcome = evaluate(problem, settings)
    except InvalidCandidateError as error:
        return f"refused by the validator: {error}"
    return {"outcome": outcome.as_dict(problem.slos), "excess": outcome.check.excess}


class _Local:
    def __init__(self, problem: TuneProblem, jobs: int) -> None:
        self.problem = problem
        self.pool: concurrent.futures.ProcessPoolExecutor | None = None
        if jobs > 1:
            self.pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=jobs,
                mp_context=multiprocessing.get_context("fork"),
                initializer=_init_worker,
                initargs=(problem,),
            )

    def map(self, batch: Sequence[Settings]) -> list[dict[str, Any] | str]:
        if self.pool is None:
            return [_trial(self.problem, s) for s in batch]
        return list(self.pool.map(_run_one, batch))

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)


class _Ray:
    def __init__(self, problem: TuneProblem, address: str) -> None:
        try:
            import ray  # noqa: PLC0415 - an optional extra, imported only when asked for
        except ImportError:
            raise InputError(
                "Ray is not installed",
                where="--ray-address",
                fix="pip install 'gpuscale[ray]', or run without --ray-address",
            ) from None
        self.ray = ray
        self.owned = not ray.is_initialized()
        if self.owned:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        self.problem_ref = ray.put(problem)
        self.remote = ray.remote(_trial)

    def map(self, batch: Sequence[Settings]) -> list[dict[str, Any] | str]:
        futures = [self.remote.remote(self.problem_ref, s) for s in batch]
        return list(self.ray.get(futures))

    def close(self) -> None:
        if self.owned:
            self.ray.shutdown()


def _constraints(trial: optuna.trial.FrozenTrial) -> Sequence[float]:
    return [float(trial.user_attrs.get("excess", 1.0))]


def _studies(storage: str | None, name: str, seed: int) -> tuple[optuna.Study, optuna.Study]:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with warnings.catch_warnings():
        # multivariate TPE and constraints_func are marked experimental in Optuna 4.
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return _create(storage, name, seed)


def _create(storage: str | None, name: str, seed: int) -> tuple[optuna.Study, optuna.Study]:
    tpe = optuna.create_study(
        storage=storage,
        study_name=name,
        direction="minimize",
        sampler=optuna.samplers.TPESampler(
            seed=seed, constraints_func=_constraints, n_startup_trials=10, multivariate=True
        ),
        load_if_exists=True,
    )
    front = optuna.create_study(
        storage=storage,
        study_name=f"{name}-front",
        directions=["minimize", "maximize"],
        sampler=optuna.samplers.NSGAIISampler(
            seed=seed, constraints_func=_constraints, population_size=10
        ),
        load_if_exists=True,
    )
    return tpe, front


def _fail_stale(study: optuna.Study) -> None:
    """Trials a stopped run left running: failed, so that they are asked again."""
    for trial in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
        study.tell(trial.number, state=optuna.trial.TrialState.FAIL)


def _enqueue(study: optuna.Study, space: Space, first: Mapping[str, Settings]) -> None:
    """Ask ``first`` (label -> configuration) before the sampler's own trials, each
    configuration the space holds exactly (:meth:`Space.point`): a study that has asked
    one already keeps it (finished, waiting, or refused by the validator) and is not
    given it twice on resume; one a stopped run failed is asked again."""
    for label, settings in first.items():
        point = space.point(settings)
        if point is None:
            continue
        asked = [
            t
            for t in study.get_trials(deepcopy=False)
            if t.user_attrs.get("first") == label
            and (t.state != optuna.trial.TrialState.FAIL or "refused" in t.user_attrs)
        ]
        if not asked:
            study.enqueue_trial(point, user_attrs={"first": label})


def _done(study: optuna.Study) -> int:
    return len(study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,)))


def _records(study: optuna.Study, kind: Literal["tpe", "front"]) -> Iterator[TrialRecord]:
    for trial in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,)):
        yield TrialRecord(
            number=trial.number,
            study=kind,
            settings=dict(trial.user_attrs["settings"]),
            outcome=dict(trial.user_attrs["outcome"]),
            feasible=float(trial.user_attrs["excess"]) <= 0,
        )


def _best(records: Sequence[TrialRecord]) -> TrialRecord | None:
    feasible = [r for r in records if r.feasible]
    if not feasible:
        return None
    return min(feasible, key=lambda r: (r.outcome["dollars"], r.study != "tpe", r.number))


def _run(
    study: optuna.Study,
    problem: TuneProblem,
    runner: _Local | _Ray,
    wanted: int,
    batch: int,
    *,
    front: bool,
    progress: Progress | None,
    counted: Callable[[], tuple[int, int, float | None]],
) -> None:
    while _done(study) < wanted:
        size = min(batch, wanted - _done(study))
        asked = [study.ask() for _ in range(size)]
        settings = [problem.space.sample(t) for t in asked]
        try:
            results = runner.map(settings)
        except BaseException:
            for trial in asked:
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
            raise
        for trial, chosen, result in zip(asked, settings, results, strict=True):
            if isinstance(result, str):
                trial.set_user_attr("refused", result)
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
                continue
            trial.set_user_attr("settings", chosen.as_dict())
            trial.set_user_attr("outcome", result["outcome"])
            trial.set_user_attr("excess", result["excess"])
            dollars = float(result["outcome"]["dollars"])
            values: Any = [dollars, float(result["outcome"]["attainment"])] if front else dollars
            study.tell(trial, values)
        if progress is not None:
            progress(*counted())


def run_study(
    problem: TuneProblem,
    *,
    trials: int,
    front_trials: int,
    jobs: int = 1,
    storage: str | None = None,
    name: str = "gpuscale-tune",
    seed: int = 0,
    ray_address: str | None = None,
    progress: Progress | None = None,
    first: Mapping[str, Settings] | None = None,
) -> StudyResult:
    """Run (or resume) the study until it has ``trials`` finished TPE trials and
    ``front_trials`` NSGA-II ones; ``jobs`` trials at a time. The TPE study tries
    ``first`` (label -> configuration, e.g. the user's own) before it samples, so that
    the best feasible trial never costs more than one of them that meets the SLOs."""
    tpe, front = _studies(storage, name, seed)
    for study in (tpe, front):
        _fail_stale(study)
    _enqueue(tpe, problem.space, first or {})
    resumed = _done(tpe) + _done(front)
    runner: _Local | _Ray = _Ray(problem, ray_address) if ray_address else _Local(problem, jobs)
    batch = max(1, jobs)
    total = trials + front_trials

    def counted() -> tuple[int, int, float | None]:
        best = _best([*_records(tpe, "tpe"), *_records(front, "front")])
        return _done(tpe) + _done(front), total, best.outcome["dollars"] if best else None

    try:
        if progress is not None:
            progress(*counted())
        _run(tpe, problem, runner, trials, batch, front=False, progress=progress, counted=counted)
        _run(
            front,
            problem,
            runner,
            front_trials,
            batch,
            front=True,
            progress=progress,
            counted=counted,
        )
    finally:
        with contextlib.suppress(Exception):
            runner.close()
    records = (*_records(tpe, "tpe"), *_records(front, "front"))
    return StudyResult(trials=records, best=_best(records), resumed=resumed)
