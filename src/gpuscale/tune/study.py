"""The search: an Optuna study whose trials are simulations. Not pure: it starts worker
processes (or sends the trials to a Ray cluster) and opens the study's database.

The study asks for trials in batches of ``jobs``, runs the batch in parallel (local
processes, or Ray tasks with ``ray_address``) and tells Optuna the results in the
order it asked, so a study is the same for a seed and a batch size however the workers
are scheduled. Optuna's storage (SQLite with ``--study``, or any database URL) holds
every finished trial as soon as it is told: a study stopped by Ctrl-C or a crash
resumes from them, the trials it was running marked failed and asked again. A stored
study records the fingerprint of the inputs that define its objective when it is created
and refuses to resume with others (:func:`_same_inputs`), so that its trials are never
mixed with those of another workload, trace or SLO.

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
import re
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import optuna

from gpuscale.errors import InputError, UnavailableError
from gpuscale.tune.objective import InvalidCandidateError, Outcome, TuneProblem, evaluate
from gpuscale.tune.space import Settings, Space

__all__ = ["Fingerprint", "Progress", "StudyResult", "TrialRecord", "run_study"]

Progress = Callable[[int, int, float | None], None]
"""Called after each trial: (finished trials, wanted trials, best feasible dollars)."""

Fingerprint = Mapping[str, str]
"""What defines a study's objective, by the name the user knows it by (``--slo``,
``manifests``): a value to show (``late<=1%``) or a digest (``sha256:...``)."""

_FINGERPRINT = "fingerprint"
"""The study's user attribute that holds its :data:`Fingerprint`."""

_DRIVERS = {
    "psycopg": "psycopg[binary]",
    "psycopg2": "psycopg2-binary",
    "MySQLdb": "mysqlclient",
    "pymysql": "PyMySQL",
}
"""A database driver's module -> the package that installs it."""

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


def _shown(storage: str) -> str:
    """The ``--study`` a storage URL came from, for messages: a SQLite file's path, else
    the URL with its password masked."""
    return re.sub(r"(://[^/@:]*:)[^/@]*@", r"\1***@", storage.removeprefix("sqlite:///"))


def _open(storage: str | None) -> optuna.storages.BaseStorage | None:
    """Optuna's storage for a database URL, its failures as one line: a missing driver
    or a file that is no database is bad input; a database server that does not answer
    is an outside service that failed."""
    if storage is None:
        return None
    import sqlalchemy.exc  # noqa: PLC0415 - Optuna's own dependency, needed only here

    where = f"--study {_shown(storage)}"
    try:
        return optuna.storages.RDBStorage(storage)
    except ImportError as error:
        module = getattr(error.__cause__, "name", None)
        package = _DRIVERS.get(module, module) if module else "the URL's database driver"
        raise InputError(
            f"the database driver {module or ''} is not installed",
            where=where,
            fix=f"pip install '{package}', or give a SQLite file",
        ) from None
    except sqlalchemy.exc.ArgumentError as error:
        raise InputError(
            f"not a database URL SQLAlchemy knows ({error})",
            where=where,
            fix="give a SQLite file, or a URL such as postgresql://user@host/db",
        ) from None
    except sqlalchemy.exc.OperationalError as error:
        if storage.startswith("sqlite:"):
            raise InputError(
                f"cannot open the SQLite file: {error.orig}",
                where=where,
                fix="give a file you can write, or a new one",
            ) from None
        raise UnavailableError(
            f"cannot reach the database: {error.orig}",
            where=where,
            fix="start the database or correct the URL, or give a SQLite file",
        ) from None
    except sqlalchemy.exc.DatabaseError as error:
        raise InputError(
            f"not a study's database: {error.orig}",
            where=where,
            fix="give a new --study file, or the one the study was kept in",
        ) from None
    except RuntimeError as error:  # a schema of another Optuna version
        raise InputError(
            str(error).split(". ")[0],
            where=where,
            fix=f"optuna storage upgrade --storage {storage}, or give a new --study file",
        ) from None


def _same_inputs(
    storage: optuna.storages.BaseStorage, names: Sequence[str], fingerprint: Fingerprint, where: str
) -> None:
    """Refuse a stored study made from other inputs, before anything is written to it;
    one stored before fingerprints were recorded is refused once it holds trials, as its
    inputs cannot be told."""
    for name in names:
        try:
            study_id = storage.get_study_id_from_name(name)
        except KeyError:
            continue
        recorded = storage.get_study_user_attrs(study_id).get(_FINGERPRINT)
        if recorded is None:
            if storage.get_all_trials(study_id, deepcopy=False):
                raise InputError(
                    "the study does not record the inputs it was made from (an older "
                    "gpuscale kept it), so its trials cannot be told to be this search's",
                    where=where,
                    fix="give a new --study file",
                )
            continue
        differ = [
            key for key in {**recorded, **fingerprint} if recorded.get(key) != fingerprint.get(key)
        ]
        if differ:
            raise InputError(
                "the study was made from other inputs: "
                + ", ".join(
                    _difference(key, recorded.get(key), fingerprint.get(key)) for key in differ
                ),
                where=where,
                fix="give a new --study file, or run with the inputs the study was made from",
            )


def _difference(key: str, then: str | None, now: str | None) -> str:
    """``--slo (late<=1% then, late<=2% now)``; a digest is named, not shown."""
    if any(v is None or v.startswith("sha256:") for v in (then, now)):
        return key
    return f"{key} ({then} then, {now} now)"


def _studies(
    storage: str | optuna.storages.BaseStorage | None,
    name: str,
    seed: int,
    fingerprint: Fingerprint | None = None,
) -> tuple[optuna.Study, optuna.Study]:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    opened = _open(storage) if isinstance(storage, str) else storage
    if opened is not None and fingerprint is not None:
        assert isinstance(storage, str)
        _same_inputs(opened, (name, f"{name}-front"), fingerprint, f"--study {_shown(storage)}")
    with warnings.catch_warnings():
        # multivariate TPE and constraints_func are marked experimental in Optuna 4.
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        studies = _create(opened, name, seed)
    if fingerprint is not None:
        for study in studies:
            if _FINGERPRINT not in study.user_attrs:
                study.set_user_attr(_FINGERPRINT, dict(fingerprint))
    return studies


def _create(
    storage: optuna.storages.BaseStorage | None, name: str, seed: int
) -> tuple[optuna.Study, optuna.Study]:
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
    fingerprint: Fingerprint | None = None,
) -> StudyResult:
    """Run (or resume) the study until it has ``trials`` finished TPE trials and
    ``front_trials`` NSGA-II ones; ``jobs`` trials at a time. The TPE study tries
    ``first`` (label -> configuration, e.g. the user's own) before it samples, so that
    the best feasible trial never costs more than one of them that meets the SLOs.
    ``fingerprint`` is recorded in a new stored study, and a stored study with another
    is refused (:class:`InputError`) before anything is written to it."""
    tpe, front = _studies(storage, name, seed, fingerprint)
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
