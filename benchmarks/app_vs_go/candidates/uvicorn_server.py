"""Candidate: uvicorn (httptools + uvloop) running the bare ASGI app."""

from __future__ import annotations

import sys

import uvicorn

if __name__ == "__main__":
    uvicorn.run(
        "benchmarks.app_vs_go.candidates.asgi_app:app",
        host="127.0.0.1",
        port=int(sys.argv[1]),
        log_level="warning",
        access_log=False,
        loop="uvloop",
        http="httptools",
    )
