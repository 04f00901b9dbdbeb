"""``gpuscale init``: write a corrected manifest set and its profile into a directory.

The set comes from :func:`gpuscale.manifests.scaffold.scaffold`; this module only checks
the target, writes the files (all or none) and reports. ``--stdout`` prints the
manifests as one multi-document stream for ``kubectl apply -f -`` instead. The scaffold
(and with it the manifests package) is imported when the command runs, not for
``--help``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from gpuscale._files import stage
from gpuscale.cli.main import app
from gpuscale.errors import InputError

if TYPE_CHECKING:
    from gpuscale.manifests.scaffold import ScaffoldFile, ScaffoldOptions

__all__ = ["cold_start_warning", "init", "next_steps", "write_files"]


_HELP = (
    "Scaffold a corrected Deployment, Service, ServiceMonitor, ScaledObject and gpuscale.yaml."
    "\n\n"
    "Writes DIR/manifests/{deployment,service,servicemonitor,scaledobject}.yaml and "
    "DIR/gpuscale.yaml, all or nothing; refuses to overwrite without --force. Each manifest "
    "says in comments why it is written that way. Documentation: docs/commands/init.md."
    "\n\n"
    "--preset gauge (the default) is the tutorial's workload, `gpuscale app`, scaled on its "
    "gauge. --preset vllm writes a vLLM server (pinned image, the model's arguments, "
    "/health probes sized for the model load, port 8000) scaled on vllm:num_requests_waiting "
    "+ vllm:num_requests_running per replica, with a target derived from the serving "
    "preset of the GPU and --model, and a profile whose workload has serving.kind vllm."
    "\n\n"
    "[bold]Examples[/bold]"
    "\n\n"
    "  gpuscale init ./llm --gpu nvidia --name llm --namespace ml\n"
    "  gpuscale init ./vllm --preset vllm --gpu nvidia --model qwen2.5-7b --name chat\n"
    "  gpuscale init ./llm --image registry.example.com/me/gpuscale-app:0.1.0 --force\n"
    "  gpuscale init --stdout --provider generic | kubectl apply -f -"
    "\n\n"
    "Then: gpuscale lint DIR/manifests --profile DIR/gpuscale.yaml, and "
    "gpuscale deploy DIR/manifests --profile DIR/gpuscale.yaml."
    "\n\n"
    "Exit codes: 0 written, 2 for a bad flag or value, a file that exists without --force, "
    "or a directory that cannot be written."
)


@app.command("init", help=_HELP)
def init(  # noqa: PLR0917 - one parameter per command-line option
    directory: Annotated[
        Path | None,
        typer.Argument(
            metavar="DIR",
            help="Directory to write into (created if missing); omit it with --stdout.",
            show_default=False,
        ),
    ] = None,
    preset: Annotated[
        str,
        typer.Option(
            "--preset",
            metavar="gauge|vllm",
            help="gauge: the tutorial's gpuscale app and its gauge; vllm: a vLLM server "
            "scaled on its requests.",
            case_sensitive=False,
        ),
    ] = "gauge",
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            metavar="NAME",
            help="With --preset vllm: the open model (llama-3.1-8b, llama-3.1-70b, "
            "qwen2.5-7b); its serving preset on the vendor's GPU sizes the target.",
            show_default=False,
        ),
    ] = None,
    gpu: Annotated[
        str,
        typer.Option(
            "--gpu",
            metavar="amd|nvidia",
            help="GPU vendor: the resource (amd.com/gpu, nvidia.com/gpu), taint and node label.",
            case_sensitive=False,
        ),
    ] = "amd",
    provider: Annotated[
        str,
        typer.Option(
            "--provider",
            metavar="doks|generic",
            help="doks: DOKS' GPU node label and sizes; generic: the GPU request alone.",
            case_sensitive=False,
        ),
    ] = "doks",
    name: Annotated[
        str,
        typer.Option("--name", metavar="NAME", help="Name of the Deployment and its companions."),
    ] = "gpu-app",
    namespace: Annotated[
        str,
        typer.Option("--namespace", "-n", metavar="NS", help="Namespace of every object."),
    ] = "default",
    image: Annotated[
        str | None,
        typer.Option(
            "--image",
            metavar="IMAGE",
            help="Workload image whose entrypoint is `gpuscale app` (build it from the "
            "Dockerfile, see docs/commands/app.md); default "
            "ghcr.io/gpuscale/gpuscale:<version>. With --preset vllm: the vLLM server "
            "image, default vllm/vllm-openai:v0.11.0 (NVIDIA) or AMD's rocm/vllm build of "
            "vLLM 0.11.",
            show_default=False,
        ),
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option(
            "--threshold",
            metavar="NUMBER",
            help="Metric value one replica should carry (KEDA threshold, AverageValue); "
            "default 80, or with --preset vllm the requests one replica of the preset "
            "carries.",
            show_default=False,
        ),
    ] = None,
    min_replicas: Annotated[
        int,
        typer.Option(
            "--min-replicas",
            metavar="N",
            help="Fewest replicas; at least 1 with the gauge (its metric comes from the "
            "pods); 0 allowed with --preset vllm, with a warning about cold starts.",
        ),
    ] = 1,
    max_replicas: Annotated[
        int,
        typer.Option(
            "--max-replicas",
            metavar="N",
            help="Most replicas (one GPU each); also the GPU pool's max nodes.",
        ),
    ] = 8,
    metric: Annotated[
        str | None,
        typer.Option(
            "--metric",
            metavar="NAME",
            help="Gauge the workload exports and KEDA scales on (--preset gauge only); "
            "default my_custom_gauge.",
            show_default=False,
        ),
    ] = None,
    scrape_interval: Annotated[
        str,
        typer.Option(
            "--scrape-interval",
            metavar="DURATION",
            help="How often Prometheus scrapes the workload: the ServiceMonitor's interval "
            "and the profile's prometheus.scrape_interval.",
        ),
    ] = "15s",
    prometheus_release: Annotated[
        str,
        typer.Option(
            "--prometheus-release",
            metavar="NAME",
            help="kube-prometheus-stack's Helm release (the ServiceMonitor's release label).",
        ),
    ] = "prometheus",
    prometheus_namespace: Annotated[
        str,
        typer.Option(
            "--prometheus-namespace",
            metavar="NS",
            help="Namespace of kube-prometheus-stack (KEDA's server address).",
        ),
    ] = "monitoring",
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing files.")] = False,
    stdout: Annotated[
        bool,
        typer.Option(
            "--stdout",
            help="Print the four manifests as one YAML stream instead of writing files.",
        ),
    ] = False,
) -> None:
    from gpuscale.manifests.scaffold import scaffold  # noqa: PLC0415 - see module doc

    options = _options(
        preset=preset,
        model=model,
        gpu=gpu,
        provider=provider,
        name=name,
        namespace=namespace,
        image=image,
        threshold=threshold,
        min_replicas=min_replicas,
        max_replicas=max_replicas,
        metric=metric,
        scrape_interval=scrape_interval,
        prometheus_release=prometheus_release,
        prometheus_namespace=prometheus_namespace,
    )
    files = scaffold(options)
    if options.preset == "vllm" and options.min_replicas == 0:
        sys.stderr.write(cold_start_warning(options))
    if stdout:
        sys.stdout.write("---\n".join(f.text for f in files if f.manifest))
        return
    if directory is None:
        raise InputError(
            "no directory given", where="DIR", fix="gpuscale init DIR ... (or --stdout)"
        )
    written = write_files(directory, files, force=force)
    for path in written:
        sys.stderr.write(f"wrote {path}\n")
    sys.stderr.write(next_steps(directory))


def cold_start_warning(options: ScaffoldOptions) -> str:
    """The one warning ``--preset vllm --min-replicas 0`` prints."""
    from gpuscale.kube import format_duration  # noqa: PLC0415 - see module doc
    from gpuscale.manifests._scaffold_vllm import (  # noqa: PLC0415 - see module doc
        image_pull_seconds,
        startup_seconds,
    )

    cold = format_duration(image_pull_seconds(options) + startup_seconds(options))
    return (
        "gpuscale: warning: --min-replicas 0: the first request after an idle spell waits "
        f"for a cold start (a GPU node, then about {cold} of image pull and model load), and "
        "at zero replicas no pod exports vllm:num_requests_*: add a trigger on a signal from "
        "outside the pods (your gateway's requests, KEDA's HTTP add-on) or keep 1\n"
    )


def next_steps(directory: Path) -> str:
    """What to run after ``init DIR``: lint the set with its profile, then deploy it."""
    manifests = directory / "manifests"
    profile = directory / "gpuscale.yaml"
    return (
        f"next: gpuscale lint {manifests} --profile {profile}\n"
        f"then: gpuscale deploy {manifests} --profile {profile}\n"
    )


def _options(
    *,
    preset: str,
    model: str | None,
    gpu: str,
    provider: str,
    name: str,
    namespace: str,
    image: str | None,
    threshold: float | None,
    min_replicas: int,
    max_replicas: int,
    metric: str | None,
    scrape_interval: str,
    prometheus_release: str,
    prometheus_namespace: str,
) -> ScaffoldOptions:
    from gpuscale.manifests.scaffold import ScaffoldOptions  # noqa: PLC0415 - see module doc

    vendor = gpu.lower()
    if vendor not in ("amd", "nvidia"):
        raise InputError(f"unknown GPU vendor {gpu!r}", where="--gpu", fix="use amd or nvidia")
    kind = provider.lower()
    if kind not in ("doks", "generic"):
        raise InputError(
            f"unknown provider {provider!r}", where="--provider", fix="use doks or generic"
        )
    chosen_preset = preset.lower()
    if chosen_preset not in ("gauge", "vllm"):
        raise InputError(f"unknown preset {preset!r}", where="--preset", fix="use gauge or vllm")
    if chosen_preset == "vllm" and metric is not None:
        raise InputError(
            "--metric is the gauge's; a vLLM server is scaled on vllm:num_requests_waiting "
            "+ vllm:num_requests_running",
            where="--metric",
            fix="drop --metric (or use --preset gauge)",
        )
    if chosen_preset == "gauge" and model is not None:
        raise InputError(
            "--model names the model a vLLM server loads; the gauge app has none",
            where="--model",
            fix="drop --model, or add --preset vllm",
        )
    chosen_gpu: Literal["amd", "nvidia"] = "amd" if vendor == "amd" else "nvidia"
    chosen_provider: Literal["doks", "generic"] = "doks" if kind == "doks" else "generic"
    options = ScaffoldOptions(
        name=name,
        namespace=namespace,
        preset="vllm" if chosen_preset == "vllm" else "gauge",
        model=(model or "llama-3.1-8b").strip().lower(),
        gpu=chosen_gpu,
        provider=chosen_provider,
        image=image,
        threshold=threshold,
        min_replicas=min_replicas,
        max_replicas=max_replicas,
        metric=metric or "my_custom_gauge",
        scrape_interval=scrape_interval,
        prometheus_release=prometheus_release,
        prometheus_namespace=prometheus_namespace,
    )
    options.check()
    return options


def write_files(
    directory: Path, files: tuple[ScaffoldFile, ...], *, force: bool = False
) -> list[Path]:
    """Write ``files`` into ``directory``: all of them or, on any problem, none.

    Raises :class:`InputError` when a file exists and ``force`` is false, or when the
    directory cannot be made or written.
    """
    if directory.exists() and not directory.is_dir():
        raise InputError(
            "exists and is not a directory", where=str(directory), fix="choose another DIR"
        )
    targets = [directory / f.name for f in files]
    existing = [path for path in targets if path.exists()]
    if existing and not force:
        more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
        raise InputError(
            f"already exists{more}; nothing was written",
            where=str(existing[0]),
            fix="pass --force to overwrite, or choose another directory",
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
        staged: list[tuple[Path, Path]] = []
        try:
            for file, target in zip(files, targets, strict=True):
                target.parent.mkdir(parents=True, exist_ok=True)
                staged.append((stage(target, file.text.encode("utf-8")), target))
        except BaseException:
            for temp, _ in staged:
                temp.unlink(missing_ok=True)
            raise
        for temp, target in staged:
            os.replace(temp, target)
    except OSError as exc:
        raise InputError(
            f"cannot write: {exc.strerror or exc}",
            where=str(exc.filename or directory),
            fix="check the path and its permissions",
        ) from None
    return targets
