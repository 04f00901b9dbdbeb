#!/usr/bin/env bash
# Run the shared conformance vectors against gpuscale.controllers (shared/conformance/).
# Usage: scripts/conformance.sh PYTHON
# The runner lives beside the project (../shared/conformance/run.py from the project root);
# GPUSCALE_CONFORMANCE overrides the path. When no runner exists on this machine the step
# says so loudly and is skipped: the same upstream cases are also ported into tests/unit.
set -euo pipefail
PY="${1:-python3}"
candidates=("${GPUSCALE_CONFORMANCE:-}" ../shared/conformance/run.py /work/shared/conformance/run.py)
for runner in "${candidates[@]}"; do
  if [ -n "$runner" ] && [ -f "$runner" ]; then
    echo "conformance: $runner" >&2
    exec "$PY" "$runner"
  fi
done
echo "conformance: SKIPPED — no shared/conformance/run.py on this machine (set GPUSCALE_CONFORMANCE)" >&2
