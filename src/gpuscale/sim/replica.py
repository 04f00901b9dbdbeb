"""One replica of the request-level workload model (``gpuscale.sim.requests``): its FIFO
queue in front of ``concurrency`` slots, held as columns, and what its ``/metrics``
reports. The :class:`~gpuscale.sim.requests.Router` fills it; scrapes read it."""

from __future__ import annotations

import math
from collections import deque

import numpy as np
import numpy.typing as npt

__all__ = ["ReplicaServer"]


class ReplicaServer:
    """One replica's queue and slots, and what its ``/metrics`` reports.

    The requests it serves are held as columns, not one object each: the arrival and
    start times of those not started at the last :meth:`snapshot` (both in arrival order,
    and both non-decreasing: FIFO slots start requests in arrival order), and the end,
    log index and latency of those not answered then, ordered by end. A snapshot at
    ``t`` is then three binary searches: started by ``t`` are a prefix of the starts,
    arrived a prefix of the arrivals, answered a prefix of the ends (a request ends at or
    after it starts, and starts at or after it arrives)."""

    stopped_at = math.inf
    """Never set: the queue model's replica drains after SIGTERM (the gpuscale app does)."""

    __slots__ = (
        "accepting",
        "arrivals",
        "busy",
        "completed",
        "ends",
        "free",
        "gone_at",
        "histogram",
        "ids",
        "latency_sum",
        "name",
        "runs",
        "started",
        "starts",
    )

    def __init__(self, name: str, concurrency: int, buckets: int, start: float) -> None:
        self.name = name
        self.free = [start] * concurrency
        self.arrivals: npt.NDArray[np.float64] = np.zeros(0)
        """Arrival of each answered request not started at the last snapshot."""
        self.starts: npt.NDArray[np.float64] = np.zeros(0)
        """Its start (the same order)."""
        self.started = 0
        """Answered requests started by the last snapshot."""
        self.ends: npt.NDArray[np.float64] = np.zeros(0)
        """End of each request not yet counted as answered, in order."""
        self.ids: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        """Its log index (the same order)."""
        self.runs: npt.NDArray[np.float64] = np.zeros(0)
        """Its latency (the same order)."""
        self.busy: deque[tuple[float, float, float, int]] = deque()
        """(end, start, arrival, log index) of recent requests (aborted ones end at their
        deadline, index -1), kept for :meth:`utilisation`."""
        self.completed = 0
        self.latency_sum = 0.0
        self.histogram = [0] * (buckets + 1)
        self.accepting = True
        self.gone_at = math.inf

    def add(
        self,
        arrivals: npt.NDArray[np.float64],
        starts: npt.NDArray[np.float64],
        ends: npt.NDArray[np.float64],
        ids: npt.NDArray[np.int64],
        runs: npt.NDArray[np.float64],
    ) -> None:
        """Requests it will answer, arriving after those it holds: their arrivals and
        starts in arrival order, their ends, log indices and latencies in order of end."""
        self.arrivals = np.concatenate((self.arrivals, arrivals))
        self.starts = np.concatenate((self.starts, starts))
        ends = np.concatenate((self.ends, ends))
        order = np.argsort(ends, kind="stable")  # two sorted runs: merged in linear time
        self.ends = ends[order]
        self.ids = np.concatenate((self.ids, ids))[order]
        self.runs = np.concatenate((self.runs, runs))[order]

    def snapshot(self, t: float, bounds: list[float], *, latencies: bool = True) -> tuple[int, int]:
        """Count requests answered by ``t``; return (in flight, queued) at ``t``. Call it
        after the router has advanced to ``t``, with ``t`` never decreasing.

        ``latencies=False`` skips the latency histogram and sum (when nothing reads them);
        the answered count is kept either way."""
        began = int(self.starts.searchsorted(t, side="right"))
        arrived = int(self.arrivals.searchsorted(t, side="right"))
        if began:
            self.starts, self.arrivals = self.starts[began:], self.arrivals[began:]
            self.started += began
        done = int(self.ends.searchsorted(t, side="right"))
        if done:
            if latencies:
                runs = self.runs[:done]
                # summed in arrival order, one answer after another, as they are logged
                order = np.argsort(self.ids[:done], kind="stable")
                self.latency_sum += float(np.cumsum(runs[order])[-1])
                counts = np.bincount(
                    np.searchsorted(bounds, runs, side="left"), minlength=len(self.histogram)
                )
                self.histogram = [
                    a + b for a, b in zip(self.histogram, counts.tolist(), strict=True)
                ]
            self.completed += done
            self.ends, self.ids, self.runs = self.ends[done:], self.ids[done:], self.runs[done:]
        return self.started - self.completed, arrived - began

    def unanswered(self, t: float) -> list[int]:
        """Forget what it holds; return the log indices of the requests not answered by
        ``t``."""
        late: list[int] = self.ids[int(self.ends.searchsorted(t, side="right")) :].tolist()
        self.arrivals, self.starts = self.arrivals[:0], self.starts[:0]
        self.ends, self.ids, self.runs = self.ends[:0], self.ids[:0], self.runs[:0]
        return late

    def take_back(self, now: float, first: int) -> None:
        """Forget the requests arriving after ``now`` (log index ``first`` on)."""
        cut = int(self.arrivals.searchsorted(now, side="right"))
        self.arrivals, self.starts = self.arrivals[:cut], self.starts[:cut]
        keep = self.ids < first
        self.ends, self.ids, self.runs = self.ends[keep], self.ids[keep], self.runs[keep]
        busy = self.busy
        while busy and busy[-1][2] > now:
            busy.pop()

    def utilisation(self, t: float, window: float) -> float:
        """Fraction of ``[t - window, t]`` with at least one request running."""
        low = t - window
        busy = self.busy
        while busy and busy[0][0] <= low:
            busy.popleft()
        covered = 0.0
        run_start = run_end = -math.inf
        for entry in busy:
            start = entry[1]
            if start >= t:
                break
            s = start if start > low else low
            e = entry[0] if entry[0] < t else t
            if e <= s:
                continue
            if s > run_end:
                if run_end > run_start:
                    covered += run_end - run_start
                run_start, run_end = s, e
            elif e > run_end:
                run_end = e
        if run_end > run_start:
            covered += run_end - run_start
        return covered / window
