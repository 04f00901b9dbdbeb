"""Connection deadlines for both servers of ``gpuscale app``: one timer, no syscall per request.

The gauge server (:mod:`._server`) and the LLM emulator (:mod:`._llm_server`) hold their
connections to the same limits (``--header-timeout``, ``--idle-timeout``,
``--max-header-bytes``; checked in :mod:`._config`). Each connection keeps a
``deadline`` on the loop's clock and moves it as its state changes; a :class:`Sweeper`
wakes every fraction of the shortest timeout, reads the clock once (:attr:`Sweeper.now`,
the clock the connections set their deadlines against) and calls :func:`expire` on every
connection past its deadline:

- a request still arriving (line, headers or body) gets ``408 Request Timeout`` and the
  connection closes (slow-header clients are cut);
- a connection whose replies sit unread in its write buffer is aborted (``close`` would
  wait for a client that does not read);
- an idle kept-alive connection is closed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from typing import Protocol

__all__ = ["TIMEOUT_RESPONSE", "Expiring", "Sweeper", "expire"]

TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Connection: close\r\n\r\n408 Request Timeout"
)


class Expiring(Protocol):
    """What the sweeper needs of a connection."""

    deadline: float

    def expire(self) -> None: ...


def expire(transport: asyncio.Transport | None, *, reading: bool) -> None:
    """End a connection whose deadline has passed (see the module docstring)."""
    if transport is None or transport.is_closing():
        return
    if reading:
        transport.write(TIMEOUT_RESPONSE)
        transport.close()
    elif transport.get_write_buffer_size() > 0:
        transport.abort()
    else:
        transport.close()


class Sweeper:
    """Closes every connection of ``connections`` past its deadline, then comes back."""

    def __init__(
        self, connections: Collection[Expiring], *, header_timeout: float, idle_timeout: float
    ) -> None:
        self.now = 0.0
        """The loop's clock at the last sweep (deadlines are set against it)."""
        self._connections = connections
        self._every = min(1.0, max(0.02, min(header_timeout, idle_timeout) / 4))
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.now = loop.time()
        self._handle = loop.call_later(self._every, self._sweep)

    def _sweep(self) -> None:
        loop = asyncio.get_running_loop()
        now = self.now = loop.time()
        for connection in [c for c in self._connections if c.deadline <= now]:
            connection.expire()
        self._handle = loop.call_later(self._every, self._sweep)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
