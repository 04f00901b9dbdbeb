"""``python -m gpuscale`` runs the command line."""

from gpuscale.cli.main import console

console()
