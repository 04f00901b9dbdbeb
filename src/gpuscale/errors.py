"""The errors gpuscale raises, grouped by what the caller should do about them.

```
GpuscaleError                 anything gpuscale raises on purpose
├── InputError                fix the input: a file, a key, a flag, a value
│   ├── ManifestError         a Kubernetes/KEDA manifest is malformed or invalid
│   └── ProfileError          gpuscale.yaml is malformed or invalid
├── RetryableError            try again later: rate limits, timeouts, 5xx answers
└── UnavailableError          give up here: a tool, a service or a permission is missing
```

Every error's line has gpuscale's secrets masked, whatever text a server put in it.

Every error a user can meet carries, in one line, where the problem is (``file:line``
or a key path), what was expected, and the fix. The CLI prints ``str(error)`` and exits
non-zero; it never shows a traceback for these. Anything else escaping is a bug.
"""

from __future__ import annotations

__all__ = [
    "GpuscaleError",
    "InputError",
    "KeyPath",
    "ManifestError",
    "ProfileError",
    "RetryableError",
    "UnavailableError",
    "format_key_path",
]

KeyPath = tuple[str | int, ...]
"""A path to a key inside a document: ``("spec", "triggers", 0, "metadata")``."""


def format_key_path(path: KeyPath) -> str:
    """``("spec", "triggers", 0, "query")`` as ``spec.triggers[0].query``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif text:
            text += f".{part}"
        else:
            text = str(part)
    return text


class GpuscaleError(Exception):
    """Base of every error gpuscale raises on purpose.

    ``where`` is a location such as ``deploy.yaml:12`` or ``spec.triggers[0].metadata``;
    ``fix`` says what to change. Both are optional but user-facing errors set them.
    ``key_path`` is the key the problem is about, as a path into the document the raiser
    read (a ScaledObject, the profile), so a caller can point at its ``file:line`` without
    parsing ``where`` back; without a ``where``, ``where`` is the path written out.
    """

    exit_code: int = 1

    def __init__(
        self,
        message: str,
        *,
        where: str | None = None,
        fix: str | None = None,
        key_path: KeyPath = (),
    ) -> None:
        self.message = message
        self.key_path = key_path
        self.where = format_key_path(key_path) if where is None and key_path else where
        self.fix = fix
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """The message as the CLI prints it: ``where: message; fix: ...`` on one line,
        every secret masked (:func:`gpuscale._redact.redact`): messages carry servers'
        words, and a server may echo a credential."""
        # Imported here: its patterns take a few milliseconds to compile, which every
        # command would pay at start-up (this module is imported by all of gpuscale).
        from gpuscale._redact import redact  # noqa: PLC0415

        text = f"{self.where}: {self.message}" if self.where else self.message
        if self.fix:
            text = f"{text} (fix: {self.fix})"
        return redact(" ".join(text.split()))


class InputError(GpuscaleError):
    """The input is wrong; the user must change a file, a key, a flag or a value."""

    exit_code = 2


class ManifestError(InputError):
    """A manifest cannot be read or does not validate against its schema."""


class ProfileError(InputError):
    """The profile (gpuscale.yaml) cannot be read or does not validate.

    Its ``key_path`` is a path into the profile (``("node_pools", 0, "max_nodes")``; empty
    for the file as a whole).
    """


class RetryableError(GpuscaleError):
    """A transient failure (rate limit, timeout, server error); the same call may succeed later.

    ``retry_after`` is the number of seconds the server asked us to wait, when it said.
    """

    def __init__(
        self,
        message: str,
        *,
        where: str | None = None,
        fix: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.retry_after = retry_after
        super().__init__(message, where=where, fix=fix)


class UnavailableError(GpuscaleError):
    """Something outside gpuscale is missing or refuses: a binary, a service, a permission."""
