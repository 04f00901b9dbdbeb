"""Write the timeline corpus: tests/data/timeline-corpus/<case>.jsonl.gz, one per case of
tests/unit/sim/corpus.py (see the README there).

Run from the repository root:
  PYTHONPATH=src .venv/bin/python scripts/record_timeline_corpus.py [CASE ...]

Without names every case is written. The gzip header carries no time or name, so the
same timelines write the same bytes.
"""

from __future__ import annotations

import gzip
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.unit.sim.corpus import CASES, lines, path_of


def main(names: list[str]) -> None:
    known = {case.name for case in CASES}
    unknown = sorted(set(names) - known)
    if unknown:
        raise SystemExit(
            f"unknown case(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    for case in CASES:
        if names and case.name not in names:
            continue
        started = time.perf_counter()
        text = "".join(line + "\n" for line in lines(case)).encode("utf-8")
        path = path_of(case)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(gzip.compress(text, compresslevel=9, mtime=0))
        count = text.count(b"\n")
        print(f"{case.name}: {count} lines, {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
