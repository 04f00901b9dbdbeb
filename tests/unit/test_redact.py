"""gpuscale._redact: every secret masked, whole and in pieces; ordinary text left alone."""

from __future__ import annotations

import base64
import json

import pytest

from gpuscale import _redact
from gpuscale._http_errors import answer_message
from gpuscale._redact import (
    MASK,
    child_environment,
    redact,
    redact_json,
    register,
    register_kubeconfig,
)
from gpuscale.errors import InputError

TOKEN = "unit-redact-token-7d41c29e0b5a4f3e9c8d"


@pytest.fixture(autouse=True)
def _registered() -> None:
    register(TOKEN)


def test_a_registered_secret_is_masked_whole_and_in_pieces() -> None:
    assert redact(f"echo: {TOKEN}!") == f"echo: {MASK}!"
    assert TOKEN[:20] not in redact(f"cut short: {TOKEN[:20]}")
    folded = f"│ {TOKEN[:12]} │\n│ {TOKEN[12:26]} │\n│ {TOKEN[26:]} │"
    out = redact(folded)
    for start in range(len(TOKEN) - 8):
        assert TOKEN[start : start + 8] not in out


def test_bearer_values_are_masked_even_unregistered() -> None:
    text = 'the proxy saw "Authorization: Bearer eyJhbGciOi.JIUzI1NiJ9.x5c" and refused'
    assert "eyJhbGciOi" not in redact(text)
    assert "Bearer <redacted>" in redact(text)
    assert redact("Basic dXNlcjpwYXNzd29yZDE=") == f"Basic {MASK}"


def test_prose_about_bearer_tokens_stays_readable() -> None:
    text = "KEDA's bearer authentication mode needs a TriggerAuthentication"
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "gone"),
    [
        ("DigitalOcean said: dop_v1_0123456789abcdef0123456789abcdef", "0123456789abcdef"),
        ("GET /api?token=abcdef123456&page=2", "abcdef123456"),
        ("/?access_token=xyz987654321", "xyz987654321"),
        ('{"client_secret": "s3cr3t-value-42"}', "s3cr3t-value-42"),
        ("password: 'hunter2hunter2'", "hunter2hunter2"),
        ("Authorization: 0123456789abcdefABCDEF", "0123456789abcdefABCDEF"),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
            "MIIEowIBAAKCAQEA",
        ),
    ],
)
def test_credential_shapes_are_masked(text: str, gone: str) -> None:
    assert gone not in redact(text)


def test_kubeconfig_users_are_registered_with_their_pem_lines() -> None:
    pem = (
        "-----BEGIN EC PRIVATE KEY-----\n"
        "MHcCAQEEIUnitTestKeyLine0123456789abcdefXYZ\n"
        "-----END EC PRIVATE KEY-----\n"
    )
    data = base64.b64encode(pem.encode()).decode()
    register_kubeconfig(
        {
            "users": [
                {
                    "name": "a",
                    "user": {"token": "kc-user-token-55aa66bb77cc", "client-key-data": data},
                },
                {
                    "name": "b",
                    "user": {"auth-provider": {"config": {"id-token": "idtok-998877665544"}}},
                },
                {
                    "name": "c",
                    "user": {"exec": {"env": [{"name": "X", "value": "exec-env-secret-1234"}]}},
                },
            ]
        }
    )
    for secret in (
        "kc-user-token-55aa66bb77cc",
        data,
        "idtok-998877665544",
        "exec-env-secret-1234",
    ):
        assert secret not in redact(f"server said {secret}")
    assert "MHcCAQEEIUnitTestKeyLine" not in redact("MHcCAQEEIUnitTestKeyLine0123456789abcdefXYZ")


def test_error_lines_and_answer_messages_are_masked_before_they_are_cut() -> None:
    body = json.dumps({"message": "x" * 190 + f" Bearer {TOKEN}"})
    message = answer_message(body)
    assert TOKEN[:8] not in message
    error = InputError(f"the server said {TOKEN}", where="GET /x", fix=f"not {TOKEN}")
    assert TOKEN not in error.one_line()
    assert TOKEN not in str(error)


def test_redact_json_masks_keys_and_values() -> None:
    doc = redact_json({"evidence": [f"saw {TOKEN}"], TOKEN: 1, "n": 2})
    assert TOKEN not in json.dumps(doc)
    assert doc["n"] == 2


def test_child_environment_drops_gpuscale_secrets() -> None:
    env = {
        "PATH": "/usr/bin",
        "KUBECONFIG": "/k",
        "DIGITALOCEAN_ACCESS_TOKEN": "dop_v1_x",
        "GPUSCALE_SETTER_TOKEN": "abc",
        "SOMETHING": TOKEN,
    }
    assert child_environment(env) == {"PATH": "/usr/bin", "KUBECONFIG": "/k"}
    kept = child_environment(env, keep=["GPUSCALE_SETTER_TOKEN"])
    assert kept["GPUSCALE_SETTER_TOKEN"] == "abc"
    assert "DIGITALOCEAN_ACCESS_TOKEN" not in kept


def test_short_values_are_not_registered() -> None:
    register("expired")
    assert "expired" not in _redact.known()
    assert redact("invalid, expired or revoked") == "invalid, expired or revoked"
