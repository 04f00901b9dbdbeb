"""The one place that knows gpuscale's secrets and masks them in text from outside.

gpuscale holds secrets it must never print, log or write: the kubeconfig's credentials
(bearer tokens, passwords, client keys and certificates, auth-provider tokens, and the
token an exec plugin such as ``doctl`` hands back), ``DIGITALOCEAN_ACCESS_TOKEN`` and
``GPUSCALE_SETTER_TOKEN``. Servers and proxies are not so careful: an API server, a
DigitalOcean edge or Prometheus behind a proxy may echo the ``Authorization`` header
into an error body, and that body becomes part of a message gpuscale prints.

So every secret is :func:`register`-ed where gpuscale reads it (the kubeconfig loader,
the Kubernetes client's headers, the DigitalOcean token reader, the setter-token
option), and every text that came from outside passes :func:`redact` before it is
printed, logged or written: :meth:`gpuscale.errors.GpuscaleError.one_line` (so every
error line), :func:`gpuscale._http_errors.answer_message` (before it shortens a body,
so a cut cannot leave half a token), ``verify``'s checks and the live timeline writer.

What is masked:

- every registered value, whole, and any run of 8 or more token characters that is a
  piece of a registered secret of 16 or more characters (a token cut short, or folded
  across lines by a table);
- what looks like a credential whether registered or not: the value after ``Bearer``
  or ``Basic``, DigitalOcean tokens (``dop_v1_``, ``doo_v1_``, ``dor_v1_``), PEM private
  keys, and values of query parameters or JSON/YAML fields named like secrets
  (``token=``, ``"password": "..."``, ``access_token``...).

:func:`child_environment` is the other half: the environment every subprocess gpuscale
starts gets, without gpuscale's own secrets.

A leaf: standard library only, so the lean ``gpuscale app`` process can use it too.
"""

from __future__ import annotations

import base64
import binascii
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "MASK",
    "SECRET_ENV",
    "child_environment",
    "forget_all",
    "known",
    "redact",
    "redact_json",
    "register",
    "register_kubeconfig",
    "register_kubeconfig_user",
]

MASK = "<redacted>"

SECRET_ENV = ("DIGITALOCEAN_ACCESS_TOKEN", "GPUSCALE_SETTER_TOKEN")
"""The environment variables holding gpuscale's secrets; subprocesses do not inherit them."""

_SHORTEST = 8
"""Shorter values are not registered: masking them would blank ordinary words."""
_PIECE = 8
"""The shortest piece of a secret that is masked on its own."""
_PIECES_OF = 16
"""Secrets at least this long also have their pieces masked."""


class _Registry:
    """The secrets seen so far, and the pattern that finds them (rebuilt on change)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.secrets: frozenset[str] = frozenset()
        self.whole: re.Pattern[str] | None = None
        self.long: tuple[str, ...] = ()

    def clear(self) -> None:
        with self.lock:
            self.secrets, self.whole, self.long = frozenset(), None, ()

    def add(self, new: set[str]) -> None:
        with self.lock:
            secrets = self.secrets | new
            ordered = sorted(secrets, key=len, reverse=True)
            self.whole = re.compile("|".join(re.escape(s) for s in ordered))
            self.long = tuple(s for s in ordered if len(s) >= _PIECES_OF)
            self.secrets = secrets


_registry = _Registry()

_SECRET_NAME = r"[\w.-]*(?:token|secret|passw(?:or)?d|api[_-]?key|credential|signature)[\w.-]*"
_GENERIC = (
    # Authorization values: "Bearer abc...", "Basic dXNlcjpw..." (not our own "<redacted>").
    # A value with a digit in it or of 20 characters and more: "bearer authentication"
    # in a lint message stays readable.
    (
        re.compile(
            r"(?i)\b(bearer|basic)(\s+)(?:(?=[A-Za-z._~+/=-]*\d)[A-Za-z0-9._~+/=-]{6,}"
            r"|[A-Za-z0-9._~+/=-]{20,})"
        ),
        rf"\1\2{MASK}",
    ),
    # DigitalOcean personal, OAuth and refresh tokens.
    (re.compile(r"\bdo[opr]_v1_[A-Za-z0-9]{8,}"), MASK),
    # PEM private keys (a client key echoed or pasted into an error).
    (
        re.compile(
            r"-----BEGIN ([A-Z ]*)PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
            re.DOTALL,
        ),
        rf"-----BEGIN \1PRIVATE KEY-----{MASK}-----END \1PRIVATE KEY-----",
    ),
    # Query parameters and form fields named like secrets: ?token=..., &access_token=...
    (
        re.compile(rf"(?i)(^|[?&;\s])({_SECRET_NAME}|authorization)=([^&\s#\"'<]+)"),
        rf"\1\2={MASK}",
    ),
    # JSON / YAML / header fields named like secrets: "token": "...", 'password': '...'
    (
        re.compile(
            rf"(?i)([\"']?)(\b{_SECRET_NAME}|\bauthorization)\1(\s*:\s*)([\"'])(?!{MASK})"
            r"(?:(?!\4).)+\4"
        ),
        rf"\1\2\1\3\4{MASK}\4",
    ),
    # "Authorization: <raw token>" without a scheme word.
    (
        re.compile(r"(?i)\b(authorization\s*[:=]\s*)(?!bearer\b|basic\b|<)[A-Za-z0-9._~+/=-]{8,}"),
        rf"\1{MASK}",
    ),
)
_RUN = re.compile(rf"[A-Za-z0-9._~+/=-]{{{_PIECE},}}")


def register(value: str | bytes | None) -> None:
    """Remember ``value`` as a secret (and, for ``Bearer X``/``Basic X``, also ``X``).

    Values shorter than eight characters are ignored; registering twice is harmless."""
    if value is None:
        return
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    text = value.strip()
    found = {text}
    scheme, _, rest = text.partition(" ")
    if scheme.lower() in ("bearer", "basic") and rest.strip():
        found.add(rest.strip())
    new = {s for s in found if len(s) >= _SHORTEST and s not in _registry.secrets}
    if new:
        _registry.add(new)


def known() -> frozenset[str]:
    """The registered secrets (for tests)."""
    return _registry.secrets


def forget_all() -> None:
    """Forget every registered secret: for tests, which run many commands in one process
    (one test's token must not mask another test's words)."""
    _registry.clear()


_USER_SECRETS = ("token", "password", "client-key-data", "client-certificate-data")
_PROVIDER_SECRETS = ("id-token", "refresh-token", "access-token", "client-secret")


def register_kubeconfig_user(user: Any) -> None:
    """Register the credentials of one kubeconfig ``users[].user`` entry.

    ``token`` and ``password``; ``client-key-data`` and ``client-certificate-data``
    both as written (base64) and decoded, with the base64 lines of the PEM inside
    (what a server could echo back); the auth-provider's tokens and client secret; the
    values of the exec plugin's ``env``. The file a ``tokenFile`` names is read by the
    Kubernetes client, whose headers register the token when it is used."""
    if not isinstance(user, Mapping):
        return
    for key in _USER_SECRETS:
        value = user.get(key)
        if isinstance(value, str):
            register(value)
            if key.endswith("-data"):
                _register_pem(value)
    provider = user.get("auth-provider")
    config = provider.get("config") if isinstance(provider, Mapping) else None
    if isinstance(config, Mapping):
        for key in _PROVIDER_SECRETS:
            value = config.get(key)
            if isinstance(value, str):
                register(value)
    exec_ = user.get("exec")
    env = exec_.get("env") if isinstance(exec_, Mapping) else None
    if isinstance(env, list):
        for entry in env:
            if isinstance(entry, Mapping) and isinstance(entry.get("value"), str):
                register(entry["value"])


def register_kubeconfig(doc: Any) -> None:
    """Register every user's credentials in a kubeconfig document (a dict)."""
    users = doc.get("users") if isinstance(doc, Mapping) else None
    for entry in users if isinstance(users, list) else ():
        if isinstance(entry, Mapping):
            register_kubeconfig_user(entry.get("user"))


def _register_pem(data: str) -> None:
    try:
        decoded = base64.b64decode(data, validate=False).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return
    register(decoded)
    for line in decoded.splitlines():
        if not line.startswith("-----"):
            register(line)


def redact(text: str) -> str:
    """``text`` with every secret masked (see the module docstring)."""
    if not text:
        return text
    whole = _registry.whole
    if whole is not None:
        text = whole.sub(MASK, text)
        pieces = _registry.long
        if pieces:
            text = _RUN.sub(lambda m: _mask_piece(m.group(0), pieces), text)
    for pattern, replacement in _GENERIC:
        text = pattern.sub(replacement, text)
    return text


def _mask_piece(run: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if run in secret:
            return MASK
    return run


def redact_json(value: Any) -> Any:
    """A JSON-like value with every string in it (keys too) passed through :func:`redact`."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {redact(str(k)): redact_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_json(v) for v in value]
    return value


def child_environment(environ: Mapping[str, str], *, keep: Iterable[str] = ()) -> dict[str, str]:
    """The environment for a subprocess: ``environ`` (the caller's ``os.environ``) without
    gpuscale's secrets (:data:`SECRET_ENV`) and without any variable whose value is a
    registered secret, except the names in ``keep`` (the workload server gets its own
    setter token). Every ``subprocess`` and ``exec`` gpuscale starts passes this."""
    kept = set(keep)
    secrets = _registry.secrets
    return {
        name: value
        for name, value in environ.items()
        if name in kept or (name not in SECRET_ENV and value.strip() not in secrets)
    }
