"""``python -m gpuscale.app``: the lean server process ``gpuscale app`` turns into.

Started by :func:`gpuscale.app._launch.exec_server` with the checked settings in the
environment; it imports the server and nothing of the CLI. Errors print as the CLI
prints them (one line, exit 2 for input, 1 for a busy port).
"""

from __future__ import annotations

import os
import sys

from gpuscale.app._launch import config_from_env
from gpuscale.app._main import run
from gpuscale.errors import GpuscaleError


def _main() -> int:
    try:
        return run(config_from_env(os.environ))
    except GpuscaleError as error:
        sys.stderr.write(f"gpuscale: error: {error.one_line()}\n")
        return error.exit_code


sys.exit(_main())
