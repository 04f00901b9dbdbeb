"""The twin (``gpuscale up`` and ``demo``'s live part): the simulator's models on the wall
clock against real workload processes and a real Prometheus.
"""

__all__: list[str] = []
