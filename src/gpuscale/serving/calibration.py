"""Fitting :class:`~gpuscale.serving.StepCost` to what a client measures of a server.

Pure (numpy, no clock, no I/O): ``gpuscale calibrate`` (``gpuscale.live.calibrate``)
plans a sweep with :func:`plan_sweep`, measures it against a real endpoint and hands
the :class:`Observation` records to :func:`fit_step_cost`.

What each measurement says under the engine's step model (``docs/serving.md``; the
scheduler of ``vllm/v1/core/sched/scheduler.py`` that :mod:`._engine` follows):

- **Time to first token at concurrency 1**, a prompt of ``P`` tokens no larger than the
  step's token budget: one step holding the whole prompt, ``base + prefill_token × P +
  context_token × P`` (its context is the prompt), plus what the server does around the
  engine for one request (HTTP, tokenising, the first chunk): a constant ``overhead``
  fitted beside the four terms and reported, not written.
- **Inter-token latency with ``N`` requests decoding together**: each step decodes one
  token for each of the ``N`` and attends their contexts, ``base + decode_seq × N +
  context_token × Σ context``. The client measures it over the window in which every
  request of the batch has its first token and none has finished (so nothing is in
  prefill and the batch is exactly ``N``), with the mean context of that window.

Rows are weighted by ``1 / observed`` (each observation's relative error counts the
same, so milliseconds of ITL weigh as much as a second of TTFT) and solved by least
squares; a term that comes out negative is set to 0 and the rest refitted (a
non-negative least squares by active set, enough for five unknowns).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from gpuscale.serving._engine import StepCost

__all__ = ["TERMS", "CalibrationFit", "Observation", "SweepPoint", "fit_step_cost", "plan_sweep"]

TERMS = ("base", "prefill_token", "decode_seq", "context_token")
_UNKNOWNS = (*TERMS, "overhead")


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """One measurement to make: ``concurrency`` identical requests sent at once."""

    kind: Literal["ttft", "itl"]
    concurrency: int
    prompt_tokens: int
    output_tokens: int

    @property
    def requests(self) -> int:
        return self.concurrency


@dataclass(frozen=True, slots=True)
class Observation:
    """One measured value and the work behind it."""

    kind: Literal["ttft", "itl"]
    seconds: float
    """TTFT of one request, or the mean inter-token interval of a batch's window."""
    concurrency: int
    prompt_tokens: int
    context_tokens: float = 0.0
    """For ``itl``: the batch's summed context per step, averaged over the window."""


@dataclass(frozen=True)
class CalibrationFit:
    """The fitted terms and how well they explain the measurements."""

    cost: StepCost
    overhead: float
    """Seconds a request spends outside the engine before its first token (not modelled)."""
    residuals: dict[str, float]
    """Relative RMS error per kind: ``sqrt(mean(((fit - measured) / measured)²))``."""
    ranges: dict[str, tuple[float, float]]
    """Lowest and highest prompt length, concurrency and context measured."""
    observations: int
    dropped: tuple[str, ...] = field(default=())
    """Terms the data could not determine (fitted as 0)."""


def plan_sweep(
    *,
    max_prompt_tokens: int = 2048,
    concurrencies: Sequence[int] = (1, 8, 32),
    output_tokens: int = 64,
    ttft_repeats: int = 3,
) -> list[SweepPoint]:
    """TTFT at concurrency 1 over prompt lengths, then ITL over concurrency × two contexts.

    Prompt lengths stop at ``max_prompt_tokens`` (keep it within the server's
    ``max_num_batched_tokens``: a longer prompt is prefilled over several steps and the
    one-step reading above no longer holds)."""
    if max_prompt_tokens < 16:
        raise ValueError("max_prompt_tokens must be >= 16")
    if output_tokens < 8:
        raise ValueError("output_tokens must be >= 8 (the ITL window needs tokens)")
    if not concurrencies or min(concurrencies) < 1:
        raise ValueError("concurrencies must be whole numbers >= 1")
    prompts = sorted({16, *(p for p in (256, 512, 1024, 2048) if p <= max_prompt_tokens)})
    prompts = sorted({*prompts, max_prompt_tokens})
    points = [SweepPoint("ttft", 1, prompt, 2) for prompt in prompts for _ in range(ttft_repeats)]
    long_context = min(1024, max_prompt_tokens)
    for concurrency in sorted(set(concurrencies)):
        for prompt in sorted({16, long_context}):
            points.append(SweepPoint("itl", concurrency, prompt, output_tokens))
    return points


def _row(obs: Observation) -> list[float]:
    if obs.kind == "ttft":
        return [1.0, float(obs.prompt_tokens), 0.0, float(obs.prompt_tokens), 1.0]
    return [1.0, 0.0, float(obs.concurrency), float(obs.context_tokens), 0.0]


def fit_step_cost(observations: Iterable[Observation]) -> CalibrationFit:
    """Least-squares :class:`StepCost` (and the TTFT overhead) from ``observations``.

    ``ValueError`` when they cannot determine the terms: fewer than five, no TTFT or no
    ITL row, or all at one prompt length / one concurrency."""
    rows = [o for o in observations if o.seconds > 0]
    ttft = [o for o in rows if o.kind == "ttft"]
    itl = [o for o in rows if o.kind == "itl"]
    if len(rows) < len(_UNKNOWNS) or not ttft or not itl:
        raise ValueError(
            f"{len(ttft)} TTFT and {len(itl)} ITL measurements cannot determine 5 unknowns: "
            "the sweep needs both, at several prompt lengths and concurrencies"
        )
    if len({o.prompt_tokens for o in ttft}) < 2:
        raise ValueError("TTFT was measured at one prompt length only")
    if len({o.concurrency for o in itl}) < 2 or len({o.context_tokens for o in itl}) < 2:
        raise ValueError("ITL was measured at one concurrency or one context only")
    design = np.array([_row(o) for o in rows], dtype=float)
    target = np.array([o.seconds for o in rows], dtype=float)
    weights = 1.0 / target
    active = list(range(len(_UNKNOWNS)))
    solution = np.zeros(len(_UNKNOWNS))
    while active:
        a = design[:, active] * weights[:, None]
        coef, *_ = np.linalg.lstsq(a, target * weights, rcond=None)
        if (coef >= 0).all():
            solution[:] = 0.0
            solution[active] = coef
            break
        active.pop(int(np.argmin(coef)))
    predicted = design @ solution
    relative = (predicted - target) / target
    kinds = np.array([o.kind for o in rows])
    residuals = {
        kind: float(np.sqrt(np.mean(relative[kinds == kind] ** 2))) for kind in ("ttft", "itl")
    }
    terms = dict(zip(_UNKNOWNS, (float(v) for v in solution), strict=True))
    if terms["base"] <= 0 and terms["prefill_token"] <= 0 and terms["decode_seq"] <= 0:
        raise ValueError("the fit found no time per step: the measurements are inconsistent")
    dropped = tuple(name for name in TERMS if terms[name] == 0.0)
    ranges = {
        "prompt_tokens": (
            float(min(o.prompt_tokens for o in rows)),
            float(max(o.prompt_tokens for o in rows)),
        ),
        "concurrency": (
            float(min(o.concurrency for o in rows)),
            float(max(o.concurrency for o in rows)),
        ),
        "context_tokens": (
            float(min(o.context_tokens for o in itl)),
            float(max(o.context_tokens for o in itl)),
        ),
    }
    return CalibrationFit(
        cost=StepCost(**{name: terms[name] for name in TERMS}),
        overhead=terms["overhead"],
        residuals=residuals,
        ranges=ranges,
        observations=len(rows),
        dropped=dropped,
    )
