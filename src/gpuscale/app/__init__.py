"""The workload program, ``gpuscale app``: the tutorial's HTTP contract (``/?value=`` sets
a gauge, ``/metrics`` exports it) made production-ready.
"""
