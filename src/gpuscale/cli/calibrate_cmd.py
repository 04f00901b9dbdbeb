"""``gpuscale calibrate URL``: measure an OpenAI-compatible server, write its step cost.

The sweep and the fit are explained in ``gpuscale.serving.calibration`` and
``gpuscale.live.calibrate``; this module checks the options, runs them, prints the fit
and writes the profile (all or nothing: the new text is validated as a profile first).
httpx, numpy and ruamel.yaml are imported when the command runs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpuscale.cli.main import app
from gpuscale.errors import InputError, UnavailableError
from gpuscale.kube import format_duration, parse_duration

if TYPE_CHECKING:
    from gpuscale.live.calibrate import Measured
    from gpuscale.serving.calibration import CalibrationFit, SweepPoint

__all__ = ["API_KEY_ENV", "calibrate"]

API_KEY_ENV = "GPUSCALE_LLM_API_KEY"

_HELP = (
    "Measure an OpenAI-compatible LLM server and write the serving model's step cost into "
    "the profile."
    "\n\n"
    "Sends a planned sweep to URL's /v1/completions (streaming, token-id prompts of exact "
    "lengths, exact output lengths): time to first token at concurrency 1 over prompt "
    "lengths, and inter-token latency with 1..N requests decoding together. Fits base, "
    "prefill_token, decode_seq and context_token by least squares and writes them, with "
    "the fit's residuals, the range measured and the date, into "
    "workloads.<name>.serving of the profile (comments and order kept). Refuses a target "
    "that is not loopback unless --allow-remote. The API key (--api-key or "
    f"{API_KEY_ENV}) is never printed. Documentation: docs/commands/calibrate.md."
    "\n\n"
    "[bold]Examples[/bold]"
    "\n\n"
    "  gpuscale app --serve llm --port 8000 &\n"
    "  gpuscale calibrate http://127.0.0.1:8000 --profile gpuscale.yaml --workload chat\n"
    "  gpuscale calibrate https://llm.example.com --allow-remote --max-requests 200 "
    "--profile app/gpuscale.yaml --workload chat"
    "\n\n"
    "Exit codes: 0 measured and written, 1 the server failed or the measurements could "
    "not be fitted, 2 a bad option or profile."
)


@app.command("calibrate", help=_HELP)
def calibrate(  # noqa: PLR0917 - one parameter per command-line option
    url: Annotated[
        str, typer.Argument(metavar="URL", help="The server, e.g. http://127.0.0.1:8000.")
    ],
    profile: Annotated[
        Path,
        typer.Option("--profile", metavar="FILE", help="Profile to write (created if missing)."),
    ] = Path("gpuscale.yaml"),
    workload: Annotated[
        str | None,
        typer.Option(
            "--workload",
            metavar="NAME",
            help="Workload entry to write; default the profile's only kind: vllm workload.",
            show_default=False,
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model", metavar="NAME", help="Model to request; default the first of /v1/models."
        ),
    ] = None,
    preset: Annotated[
        str | None,
        typer.Option(
            "--preset",
            metavar="GPU/MODEL",
            help="Serving preset to write beside the measured terms (the KV cache and engine "
            "settings), when the workload has none.",
            show_default=False,
        ),
    ] = None,
    concurrency: Annotated[
        str,
        typer.Option(
            "--concurrency", metavar="N,N,...", help="Batch sizes of the ITL measurements."
        ),
    ] = "1,8,32",
    max_prompt_tokens: Annotated[
        int,
        typer.Option(
            "--max-prompt-tokens",
            metavar="TOKENS",
            help="Longest prompt measured; keep it within the server's --max-num-batched-tokens.",
        ),
    ] = 2048,
    output_tokens: Annotated[
        int,
        typer.Option("--output-tokens", metavar="TOKENS", help="Tokens generated per ITL request."),
    ] = 64,
    max_requests: Annotated[
        int,
        typer.Option("--max-requests", metavar="N", help="Most requests the sweep may send."),
    ] = 400,
    max_time: Annotated[
        str,
        typer.Option(
            "--max-time",
            metavar="DURATION",
            help="Stop measuring after this long (what was measured is fitted).",
        ),
    ] = "10m",
    allow_remote: Annotated[
        bool, typer.Option("--allow-remote", help="Allow a target that is not loopback.")
    ] = False,
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            metavar="KEY",
            envvar=API_KEY_ENV,
            help=f"Bearer token for the server (prefer the {API_KEY_ENV} environment "
            "variable: a flag shows in ps).",
            show_default=False,
            show_envvar=True,
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Measure and print the fit; write nothing.")
    ] = False,
) -> None:
    import asyncio  # noqa: PLC0415 - see module doc

    from gpuscale._redact import register  # noqa: PLC0415
    from gpuscale.live.calibrate import check_target  # noqa: PLC0415 - see module doc
    from gpuscale.serving.calibration import plan_sweep  # noqa: PLC0415

    if api_key is not None:
        register(api_key)
    base = check_target(url, allow_remote=allow_remote)
    levels = _levels(concurrency)
    try:
        plan = plan_sweep(
            max_prompt_tokens=max_prompt_tokens,
            concurrencies=levels,
            output_tokens=output_tokens,
        )
    except ValueError as error:
        raise InputError(
            str(error), where="--max-prompt-tokens/--output-tokens", fix="see --help"
        ) from None
    needed = sum(point.requests for point in plan)
    if needed > max_requests:
        raise InputError(
            f"the sweep needs {needed} requests, more than --max-requests {max_requests}",
            where="--max-requests",
            fix=f"raise it to {needed}, or lower --concurrency",
        )
    seconds = _duration(max_time)
    text = profile.read_text(encoding="utf-8") if profile.exists() else None
    name = _workload(text, profile, workload)
    asyncio.run(
        _run(
            base=base,
            model=model,
            api_key=api_key,
            plan=plan,
            seconds=seconds,
            profile=profile,
            text=text,
            workload=name,
            preset=preset,
            dry_run=dry_run,
        )
    )


async def _run(
    *,
    base: str,
    model: str | None,
    api_key: str | None,
    plan: list[SweepPoint],
    seconds: float,
    profile: Path,
    text: str | None,
    workload: str,
    preset: str | None,
    dry_run: bool,
) -> None:
    from gpuscale.live.calibrate import cache_config, measure, served_model  # noqa: PLC0415
    from gpuscale.serving.calibration import fit_step_cost  # noqa: PLC0415

    chosen = model or await served_model(base, api_key)
    sys.stderr.write(
        f"calibrate: {base} model {chosen}: {sum(p.requests for p in plan)} requests in "
        f"{len(plan)} points, at most {format_duration(seconds)}\n"
    )
    measured = await measure(
        base,
        chosen,
        plan,
        api_key=api_key,
        max_time=seconds,
        progress=_progress,
    )
    if not measured.complete:
        sys.stderr.write(
            f"gpuscale: warning: --max-time {format_duration(seconds)} stopped the sweep after "
            f"{measured.requests} requests; fitting what was measured\n"
        )
    try:
        fit = fit_step_cost(measured.observations)
    except ValueError as error:
        raise UnavailableError(
            f"cannot fit the measurements: {error}",
            fix="raise --max-time, or check the server's answers",
        ) from None
    _print_fit(fit, measured)
    if dry_run:
        return
    cache = await cache_config(base, api_key)
    new = _new_text(
        text,
        profile,
        workload=workload,
        fit=fit,
        base=base,
        model=chosen,
        preset=preset,
        cache=cache,
    )
    _write(profile, new)
    sys.stderr.write(f"wrote {profile} (workloads.{workload}.serving)\n")


def _progress(line: str) -> None:
    sys.stderr.write(line + "\n")


def _print_fit(fit: CalibrationFit, measured: Measured) -> None:
    out = sys.stdout
    out.write("term            fitted\n")
    for name, unit, scale in (
        ("base", "ms", 1e3),
        ("prefill_token", "µs", 1e6),
        ("decode_seq", "µs", 1e6),
        ("context_token", "ns", 1e9),
    ):
        out.write(f"{name:<15} {getattr(fit.cost, name) * scale:.4g} {unit}\n")
    out.write(f"(ttft overhead  {fit.overhead * 1e3:.3g} ms, not written)\n")
    out.write(
        "residuals       "
        + ", ".join(f"{kind} {value:.2%}" for kind, value in fit.residuals.items())
        + "\n"
    )
    for concurrency, prompt, rate in measured.throughput:
        out.write(
            f"throughput      concurrency {concurrency}, prompt {prompt}: {rate:.0f} tokens/s\n"
        )
    if fit.dropped:
        out.write(f"not determined  {', '.join(fit.dropped)} (fitted as 0)\n")


def _new_text(
    text: str | None,
    profile: Path,
    *,
    workload: str,
    fit: CalibrationFit,
    base: str,
    model: str,
    preset: str | None,
    cache: dict[str, int],
) -> str:
    import datetime  # noqa: PLC0415 - see module doc

    from gpuscale._redact import redact  # noqa: PLC0415
    from gpuscale.live.calibrate import write_calibration  # noqa: PLC0415
    from gpuscale.profile import load_profile_text  # noqa: PLC0415

    new = write_calibration(
        text,
        workload,
        fit,
        source=redact(f"{base} ({model}), gpuscale calibrate"),
        date=datetime.date.today().isoformat(),
        preset=preset,
        cache=cache,
    )
    load_profile_text(new, str(profile))  # the ProfileError names the key; nothing written
    return new


def _write(profile: Path, text: str) -> None:
    import os  # noqa: PLC0415 - see module doc

    from gpuscale._files import stage  # noqa: PLC0415

    try:
        temp = stage(profile, text.encode("utf-8"))
        os.replace(temp, profile)
    except OSError as error:
        raise InputError(
            f"cannot write: {error.strerror or error}",
            where=str(profile),
            fix="check the path and its permissions",
        ) from None


def _workload(text: str | None, profile: Path, chosen: str | None) -> str:
    if chosen is not None:
        return chosen
    from gpuscale.profile import load_profile_text  # noqa: PLC0415

    loaded = load_profile_text(text or "", str(profile))
    names = [n for n, spec in loaded.workloads.items() if spec.serving.kind == "vllm"]
    if len(names) == 1:
        return names[0]
    raise InputError(
        "no single workload with serving.kind vllm to write"
        + (f" (found {', '.join(names)})" if names else ""),
        where="--workload",
        fix="pass --workload NAME",
    )


def _levels(text: str) -> list[int]:
    try:
        levels = [int(part) for part in text.split(",")]
    except ValueError:
        levels = []
    if not levels or min(levels) < 1 or max(levels) > 1024:
        raise InputError(
            f"{text!r} is not a list of whole numbers from 1 to 1024",
            where="--concurrency",
            fix="e.g. --concurrency 1,8,32",
        )
    return levels


def _duration(text: str) -> float:
    try:
        seconds = parse_duration(text)
    except ValueError as error:
        raise InputError(str(error), where="--max-time", fix="e.g. 10m or 90s") from None
    if seconds <= 0:
        raise InputError(f"{text} is not positive", where="--max-time", fix="e.g. 10m")
    return seconds
