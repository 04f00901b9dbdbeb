"""The event engine: a heap of timed actions, processes that wait on time or events, and
an explicit "advance to time t" step, in the shape of SimPy (``src/simpy/core.py``,
``events.py``).

Everything in the simulator happens inside an action the engine calls at a time. The
engine never reads a clock: ``now`` is whatever time it has advanced to. That keeps the
two questions apart:

- *when* — :meth:`EventLoop.advance_to` runs every action due up to ``t`` and stops there.
  ``gpuscale simulate`` calls it with ever larger virtual times as fast as it can;
  tests call it tick by tick.
- *what* — the actions themselves (a scrape, an HPA sync, a pod becoming Ready), which
  only see ``engine.now``.

Actions due at the same instant run in ``(priority, sequence)`` order: a lower priority
number first, then the order they were scheduled in. The priorities the simulator uses
are the :class:`Priority` constants, so that, for example, a pod that becomes Ready at
``t`` is Ready for a scrape at ``t``. Bad input fails when it is given: a negative delay,
a time in the past or a non-finite time raises :class:`ValueError` instead of being
clamped.
"""

from __future__ import annotations

import functools
import heapq
import math
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

__all__ = ["Event", "EventLoop", "Handle", "Priority", "Process", "ProcessGenerator"]


@dataclass(frozen=True, slots=True)
class Priority:
    """Order of actions due at the same instant (lower runs first).

    Load changes happen before the world reacts to them; Kubernetes bookkeeping (pods,
    nodes, endpoints) settles before anything observes it; Prometheus scrapes before the
    scalers query it; the cluster autoscaler looks last; the timeline is written after
    everything at that instant has happened.
    """

    LOAD = 0
    KUBELET = 10
    REPLICASET = 20
    SCHEDULER = 30
    ENDPOINTS = 40
    SCRAPE = 50
    SCALER = 60
    AUTOSCALER = 70
    TIMELINE = 90


class Handle:
    """A scheduled action; :meth:`EventLoop.cancel` marks it so the engine skips it."""

    __slots__ = ("action", "cancelled", "time")

    def __init__(self, time: float, action: Callable[[], object]) -> None:
        self.time = time
        self.action = action
        self.cancelled = False


class Event:
    """Something processes can wait for; :meth:`succeed` wakes them, with a value."""

    __slots__ = ("_callbacks", "_engine", "triggered", "value")

    def __init__(self, engine: EventLoop) -> None:
        self._engine = engine
        self._callbacks: list[Callable[[Any], None]] = []
        self.triggered = False
        self.value: Any = None

    def succeed(self, value: Any = None, *, priority: int = 0) -> None:
        """Trigger the event now; its waiters resume at ``engine.now`` in ``priority``."""
        if self.triggered:
            raise RuntimeError("event already triggered")
        self.triggered = True
        self.value = value
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            self._engine.after(0.0, functools.partial(callback, value), priority=priority)

    def add_callback(self, callback: Callable[[Any], None]) -> None:
        """Call ``callback(value)`` when the event triggers (at once if it has)."""
        if self.triggered:
            callback(self.value)
        else:
            self._callbacks.append(callback)


ProcessGenerator = Generator[float | Event, Any, None]


class Process:
    """A generator driven by the engine: it yields a delay in seconds to sleep, or an
    :class:`Event` to wait for (and receives the event's value)."""

    __slots__ = ("_engine", "_generator", "_priority", "finished")

    def __init__(self, engine: EventLoop, generator: ProcessGenerator, priority: int) -> None:
        self._engine = engine
        self._generator = generator
        self._priority = priority
        self.finished = False

    def _resume(self, value: Any = None) -> None:
        try:
            waited = self._generator.send(value)
        except StopIteration:
            self.finished = True
            return
        if isinstance(waited, Event):
            waited.add_callback(self._resume)
        else:
            self._engine.after(float(waited), self._resume, priority=self._priority)


class EventLoop:
    """A discrete-event engine in virtual seconds, starting at ``start`` (named apart from
    ``gpuscale.promql``'s query ``Engine``)."""

    __slots__ = ("_heap", "_seq", "now")

    def __init__(self, start: float = 0.0) -> None:
        if not math.isfinite(start):
            raise ValueError(f"start time must be finite, got {start!r}")
        self.now = float(start)
        self._heap: list[tuple[float, int, int, Handle]] = []
        self._seq = 0

    def at(self, time: float, action: Callable[[], object], *, priority: int = 0) -> Handle:
        """Run ``action`` at absolute ``time`` (not earlier than ``now``)."""
        if not time >= self.now:  # also rejects NaN
            raise ValueError(f"cannot schedule at {time!r}: it is before now ({self.now!r})")
        if time == math.inf:
            raise ValueError("cannot schedule at infinity")
        handle = Handle(time, action)
        self._seq += 1
        heapq.heappush(self._heap, (time, priority, self._seq, handle))
        return handle

    def after(self, delay: float, action: Callable[[], object], *, priority: int = 0) -> Handle:
        """Run ``action`` ``delay`` seconds from now; a negative delay is an error."""
        if not delay >= 0.0:
            raise ValueError(f"delay must be a non-negative number of seconds, got {delay!r}")
        return self.at(self.now + delay, action, priority=priority)

    @staticmethod
    def cancel(handle: Handle) -> None:
        """Skip a scheduled action (a no-op when it already ran)."""
        handle.cancelled = True

    def event(self) -> Event:
        """A new untriggered :class:`Event`."""
        return Event(self)

    def process(self, generator: ProcessGenerator, *, priority: int = 0) -> Process:
        """Start ``generator`` as a process now (its first step runs at ``now``)."""
        process = Process(self, generator, priority)
        self.after(0.0, process._resume, priority=priority)
        return process

    def peek(self) -> float:
        """Time of the next pending action, or infinity when none is left."""
        heap = self._heap
        while heap and heap[0][3].cancelled:
            heapq.heappop(heap)
        return heap[0][0] if heap else math.inf

    def step(self) -> bool:
        """Run the next pending action; False when there is none."""
        heap = self._heap
        while heap:
            time, _, _, handle = heapq.heappop(heap)
            if handle.cancelled:
                continue
            self.now = time
            handle.action()
            return True
        return False

    def advance_to(self, time: float) -> int:
        """Run every action due at or before ``time``, then set ``now`` to ``time``.

        Returns the number of actions run. Moving backwards is an error.
        """
        if not time >= self.now:
            raise ValueError(f"cannot advance to {time!r}: it is before now ({self.now!r})")
        heap = self._heap
        pop = heapq.heappop
        ran = 0
        while heap and heap[0][0] <= time:
            when, _, _, handle = pop(heap)
            if handle.cancelled:
                continue
            self.now = when
            handle.action()
            ran += 1
        self.now = time
        return ran
