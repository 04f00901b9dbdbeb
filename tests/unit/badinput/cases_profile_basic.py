"""Bad profiles met by ``profile check``: syntax errors (seed cases of the suite)."""

from __future__ import annotations

from tests.unit.badinput._harness import Bad

CASES = [
    Bad(
        id="profile-yaml-syntax",
        argv=("profile", "check", "gpuscale.yaml"),
        files={"gpuscale.yaml": "foo: [\n"},
        names=("gpuscale.yaml:2",),
    ),
    Bad(
        id="profile-missing-file",
        argv=("profile", "check", "nope.yaml"),
        names=("nope.yaml",),
    ),
]
