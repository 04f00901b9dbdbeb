"""HTTP stacks tried for ``gpuscale app`` (see ``../README.md``); benchmark fixtures only.

Each serves the two benchmarked endpoints the way ``gpuscale app`` does (``/metrics``
from a prometheus_client registry holding one gauge, ``/?value=`` sets it) with as
little code as the stack allows, so the numbers compare stacks, not features.
"""
