"""Start-up without the cyclic garbage collector, for commands whose start-up is most of
what a user waits for.

Importing a command's modules and reading its inputs creates tens of thousands of
long-lived objects (classes, functions, dataclass methods, schemas, models) and next to no
garbage; each time allocations pass the collector's threshold, it walks them. :func:`paused`
turns the collector off for such a stretch; :func:`resume`, where the long work starts,
moves what start-up built out of the collector's sight (``gc.freeze``: else its first
collection would walk every object allocated while it was off) and turns it back on, so a
simulation runs with the collector on, as before. At the end of the block the frozen
objects go back to the collector (``gc.unfreeze``), so that a process running many
commands (the tests) frees their garbage. For ``gpuscale simulate`` on the tutorial this
saves about a tenth of the command's CPU time (docs/benchmarks/sim_startup.md).

Two limits, both about memory, never results. The freeze takes whatever the collector
tracks at that moment, so cyclic garbage made before the run (by start-up, or by earlier
work in the same process) is kept until the block ends — in the command line, until the
process exits. And freezing cannot be undone for some objects only: when something had
frozen objects before the block (a host process, a caller), :func:`resume` freezes nothing
and the block unfreezes nothing, so what the caller froze stays frozen.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["paused", "resume"]


class _State:
    paused = False
    """Whether :func:`paused` turned the collector off and nothing has turned it on."""
    frozen = False
    """Whether :func:`resume` froze what start-up built."""


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """The collector off inside the block (unless it was off already) until
    :func:`resume`; on, with nothing frozen, after the block."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    _State.paused = True
    try:
        yield
    finally:
        if _State.paused:
            _State.paused = False
            gc.enable()
        if _State.frozen:
            _State.frozen = False
            gc.unfreeze()


def resume() -> None:
    """Freeze what start-up built (unless something is frozen already: see the module's
    docstring) and turn the collector back on, if :func:`paused` turned it off."""
    if _State.paused:
        _State.paused = False
        if gc.get_freeze_count() == 0:
            gc.freeze()
            _State.frozen = True
        gc.enable()
