"""``gpuscale demo``: the tutorial and its fix, simulated side by side, in a few seconds.

This module holds only the command's options, so that ``gpuscale --help`` and
``gpuscale demo --help`` import nothing heavy; the work is in
:mod:`gpuscale.cli._demo`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gpuscale.cli.main import app

__all__ = ["demo_command"]


@app.command("demo")
def demo_command(
    *,
    out: Annotated[
        Path,
        typer.Option(
            "--out", metavar="DIR", help="Directory for the timelines and the HTML report."
        ),
    ] = Path("gpuscale-demo"),
    seed: Annotated[
        int, typer.Option("--seed", metavar="N", help="Random seed (same seed, same run).")
    ] = 0,
    output: Annotated[
        str, typer.Option("--output", "-o", metavar="text|json", help="text or json.")
    ] = "text",
) -> None:
    """Simulate the tutorial and its fix side by side (no cluster, no cloud account).

    Writes both timelines and an HTML report into --out. Documentation:
    docs/commands/demo.md.

    [bold]Examples[/bold]

      gpuscale demo
      gpuscale demo --out /tmp/demo --seed 7 -o json
    """
    from gpuscale.cli import _demo  # noqa: PLC0415 - heavy; see module doc

    _demo.execute(out=out, seed=seed, output=output)
