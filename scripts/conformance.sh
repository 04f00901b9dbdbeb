#!/usr/bin/env bash
# Run the shared conformance vectors against gpuscale.controllers (../shared/conformance/).
# Usage: scripts/conformance.sh PYTHON
set -euo pipefail
PY="${1:-python3}"
RUNNER="${GPUSCALE_CONFORMANCE:-../shared/conformance/run.py}"
if [ ! -f "$RUNNER" ]; then
  echo "conformance: $RUNNER not found; set GPUSCALE_CONFORMANCE to the runner's path" >&2
  exit 1
fi
"$PY" "$RUNNER"
