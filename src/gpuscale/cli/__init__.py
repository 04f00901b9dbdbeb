"""The ``gpuscale`` command. Nothing imports this package; it imports everything else.

One module per command or command group registers itself on :data:`gpuscale.cli.main.app`.
Heavy imports happen inside command functions so that ``gpuscale --help`` stays fast.
"""

__all__: list[str] = []
