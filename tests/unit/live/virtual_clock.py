"""A virtual clock for asyncio code: time moves only when every task is waiting on it.

:meth:`VirtualClock.drive` runs a coroutine; whenever nothing else can run, it jumps
to the earliest pending :meth:`sleep` and wakes it. Tests of the load sender therefore
run minutes of schedule in milliseconds, and the times they see are exact.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class VirtualClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.t = start
        self._heap: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._heap, (self.t + max(0.0, seconds), next(self._seq), future))
        await future

    async def _drive(self, coro: Coroutine[Any, Any, T]) -> T:
        task = asyncio.ensure_future(coro)
        while not task.done():
            for _ in range(20):
                await asyncio.sleep(0)
                if task.done():
                    break
            if task.done():
                break
            if not self._heap:
                raise RuntimeError(
                    "deadlock: the coroutine waits on something other than the clock"
                )
            wake, _, future = heapq.heappop(self._heap)
            self.t = max(self.t, wake)
            future.set_result(None)
        return task.result()

    def drive(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run(self._drive(coro))
