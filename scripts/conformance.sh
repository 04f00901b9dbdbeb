#!/usr/bin/env bash
# Run the shared conformance vectors against gpuscale.controllers (shared/conformance/).
# Usage: scripts/conformance.sh PYTHON
# The runner lives beside the project (../shared/conformance/run.py from the project root);
# GPUSCALE_CONFORMANCE overrides the path. When no runner exists on this machine the step
# fails; GPUSCALE_SKIP_CONFORMANCE=1 skips it on purpose (upstream's cases are also ported
# into tests/unit, which always run).
set -euo pipefail
PY="${1:-python3}"
candidates=("${GPUSCALE_CONFORMANCE:-}" ../shared/conformance/run.py /work/shared/conformance/run.py)
for runner in "${candidates[@]}"; do
  if [ -n "$runner" ] && [ -f "$runner" ]; then
    echo "conformance: $runner" >&2
    exec "$PY" "$runner"
  fi
done
if [ "${GPUSCALE_SKIP_CONFORMANCE:-0}" = 1 ]; then
  echo "conformance: SKIPPED on request (GPUSCALE_SKIP_CONFORMANCE=1)" >&2
  exit 0
fi
echo "conformance: no shared/conformance/run.py found (looked at: ${candidates[*]:1});" \
  "set GPUSCALE_CONFORMANCE to its path, or GPUSCALE_SKIP_CONFORMANCE=1" >&2
exit 1
