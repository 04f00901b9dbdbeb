"""Every corpus case re-run gives its recorded timeline, record for record.

The corpus (``tests/data/timeline-corpus/``, README there) was recorded before the
simulator was split by concern (issue 12); a difference here is a change of behaviour.
When one is intended, regenerate the case with ``scripts/record_timeline_corpus.py NAME``
in the same commit and say in the message what changed and why.
"""

from __future__ import annotations

import gzip
import json

import pytest

from tests.unit.sim.corpus import CASES, CORPUS, Case, lines, path_of


def test_every_recorded_file_is_a_case() -> None:
    recorded = {p.name.removesuffix(".jsonl.gz") for p in CORPUS.glob("*.jsonl.gz")}
    assert recorded == {case.name for case in CASES}


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_the_timeline_is_the_recorded_one(case: Case) -> None:
    recorded = gzip.decompress(path_of(case).read_bytes()).decode("utf-8").splitlines()
    now = lines(case)
    first = json.loads(now[0])
    assert first == json.loads(recorded[0]), "the run's totals or its series differ"
    assert len(now) == len(recorded)
    for number, (was, is_) in enumerate(zip(recorded, now, strict=True), start=1):
        assert is_ == was, f"{case.name} line {number} differs"
