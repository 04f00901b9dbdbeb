"""Private implementation of ``gpuscale.controllers.keda``; import from there."""
