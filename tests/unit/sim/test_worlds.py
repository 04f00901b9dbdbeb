"""The shared worlds (:mod:`tests.unit.sim.worlds`) are what they say: the tutorial's query is
the one in examples/tutorial/, and the LLM world has one server per workload asked for."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.sim.worlds import TUTORIAL_QUERY, llm_inputs, tutorial_spec

EXAMPLES = Path(__file__).parents[3] / "examples"


def test_the_tutorial_query_is_the_examples() -> None:
    assert f"query: {TUTORIAL_QUERY}" in (EXAMPLES / "tutorial" / "resources.yaml").read_text()


def test_the_tutorial_spec_runs_on_a_gpu_pool_and_a_cpu_pool() -> None:
    spec = tutorial_spec(provisioning_s=300.0)
    [workload] = spec.workloads
    assert workload.requests == {"amd.com/gpu": 1}
    assert [p.provisioning_s for p in spec.pools if p.gpus_per_node] == [300.0]


@pytest.mark.parametrize("count", [1, 3])
def test_llm_inputs_has_one_server_per_workload(count: int) -> None:
    inputs = llm_inputs(count)
    assert sorted(w.name for w in inputs.spec.workloads) == [f"llm-{i}" for i in range(count)]
    assert len(inputs.scaled_objects) == count
