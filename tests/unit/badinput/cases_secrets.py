"""Bad input to ``gpuscale app``'s flags and to the live commands' secret-bearing inputs.

The kubeconfig (with its credentials), ``--token-file`` and ``--setter-token``: each
mistake is one line naming the flag or file and the fix, and the secret in the input
never appears in it (``test_secret_cases.py`` checks that for every case here that
carries :data:`SECRET`).
"""

from __future__ import annotations

from tests.unit.badinput._harness import Bad

SECRET = "badinput-secret-token-4f1e2d3c4b5a69788796a5b4"

PROFILE = """\
cluster: {provider: doks, name: demo, region: atl1, version: latest}
node_pools:
  - {name: general, size: s-4vcpu-8gb, count: 1}
"""


def _kubeconfig(
    *,
    server: str = "https://127.0.0.1:9",
    user: str = f"{{token: {SECRET}}}",
    current: str = "c",
    context: str = "{cluster: k, user: u}",
) -> str:
    return (
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: k, cluster: {{server: '{server}'}}}}]\n"
        f"users: [{{name: u, user: {user}}}]\n"
        f"contexts: [{{name: c, context: {context}}}]\n"
        f"current-context: {current}\n"
    )


def _app(case: str, *argv: str, names: tuple[str, ...]) -> Bad:
    return Bad(id=f"secrets-app-{case}", argv=("app", *argv), names=names)


CASES = [
    # ---- gpuscale app: every flag's domain ----------------------------------------
    _app("port-word", "--port", "http", names=("--port", "'http'")),
    _app("port-too-big", "--port", "70000", names=("--port", "70000")),
    _app("port-fraction", "--port", "80.5", names=("--port",)),
    _app("host-space", "--host", "a b", names=("--host",)),
    _app("metric-name-digit", "--metric-name", "1gauge", names=("--metric-name",)),
    _app("metric-name-reserved", "--metric-name", "__gauge", names=("--metric-name",)),
    _app("log-level-unknown", "--log-level", "loud", names=("--log-level", "loud")),
    _app("grace-period-word", "--grace-period", "soon", names=("--grace-period",)),
    _app("shutdown-delay-word", "--shutdown-delay", "1x", names=("--shutdown-delay",)),
    _app(
        "shutdown-delay-over-grace",
        "--shutdown-delay",
        "20s",
        names=("--shutdown-delay", "20s"),
    ),
    _app("header-timeout-zero", "--header-timeout", "0s", names=("--header-timeout",)),
    _app("header-timeout-word", "--header-timeout", "later", names=("--header-timeout",)),
    _app("header-timeout-too-long", "--header-timeout", "3d", names=("--header-timeout",)),
    _app("idle-timeout-zero", "--idle-timeout", "0ms", names=("--idle-timeout",)),
    _app("idle-timeout-too-long", "--idle-timeout", "2d", names=("--idle-timeout",)),
    _app("idle-timeout-unit", "--idle-timeout", "10 parsecs", names=("--idle-timeout",)),
    _app("max-header-bytes-small", "--max-header-bytes", "12", names=("--max-header-bytes",)),
    _app("max-header-bytes-huge", "--max-header-bytes", "999999999", names=("--max-header-bytes",)),
    _app("max-header-bytes-float", "--max-header-bytes", "1e6", names=("--max-header-bytes",)),
    _app(
        "max-header-bytes-digits",
        "--max-header-bytes",
        "9" * 5000,
        names=("--max-header-bytes",),
    ),
    _app("setter-token-empty", "--setter-token=", names=("--setter-token", "empty")),
    _app(
        "setter-token-space",
        "--setter-token",
        f"{SECRET} extra",
        names=("--setter-token",),
    ),
    _app("setter-token-quote", "--setter-token", f'{SECRET}"', names=("--setter-token",)),
    _app("setter-token-newline", "--setter-token", f"{SECRET}\nX: y", names=("--setter-token",)),
    # ---- load: the setter token it sends is checked by the same rule ------------------
    Bad(
        id="secrets-load-setter-token-space",
        argv=("load", "--value", "1", "--setter-token", f"{SECRET} x"),
        names=("--setter-token",),
    ),
    Bad(
        id="secrets-load-setter-token-empty",
        argv=("load", "--value", "1", "--setter-token="),
        names=("--setter-token", "empty"),
    ),
    # ---- kubeconfig files (they hold the credentials) ---------------------------------
    Bad(
        id="secrets-kubeconfig-missing",
        argv=("load", "--value", "1", "--kubeconfig", "{d}/nope.yaml"),
        names=("--kubeconfig", "nope.yaml"),
    ),
    Bad(
        id="secrets-kubeconfig-not-yaml",
        argv=("watch", "--once", "--kubeconfig", "kc.yaml"),
        files={"kc.yaml": f"users: [{{name: u, user: {{token: {SECRET}}}}}\n"},
        names=("kc.yaml:",),
    ),
    Bad(
        id="secrets-kubeconfig-a-list",
        argv=("load", "--value", "1", "--kubeconfig", "kc.yaml"),
        files={"kc.yaml": f"- {SECRET}\n"},
        names=("kc.yaml", "list"),
    ),
    Bad(
        id="secrets-kubeconfig-not-utf8",
        argv=("watch", "--once", "--kubeconfig", "kc.yaml"),
        files={"kc.yaml": f"users: [{{user: {{token: {SECRET}}}}}]\n".encode() + b"\xff\xfe"},
        names=("kc.yaml", "UTF-8"),
    ),
    Bad(
        id="secrets-kubeconfig-other-yaml",
        argv=("load", "--value", "1", "--kubeconfig", "kc.yaml"),
        files={"kc.yaml": f"token: {SECRET}\nname: x\n"},
        names=("kc.yaml", "not a kubeconfig"),
    ),
    Bad(
        id="secrets-kubeconfig-no-contexts",
        argv=("load", "--value", "1", "--kubeconfig", "kc.yaml"),
        files={
            "kc.yaml": (
                "apiVersion: v1\nkind: Config\n"
                f"users: [{{name: u, user: {{token: {SECRET}}}}}]\ncontexts: []\n"
            )
        },
        names=("kc.yaml", "no contexts"),
    ),
    Bad(
        id="secrets-kubeconfig-unknown-context",
        argv=("watch", "--once", "--kubeconfig", "kc.yaml", "--context", "prod"),
        files={"kc.yaml": _kubeconfig()},
        names=("kc.yaml", "'prod'", "--context"),
    ),
    Bad(
        id="secrets-kubeconfig-current-context-missing",
        argv=("load", "--value", "1", "--kubeconfig", "kc.yaml"),
        files={"kc.yaml": _kubeconfig(current="gone")},
        names=("kc.yaml", "'gone'"),
    ),
    Bad(
        id="secrets-kubeconfig-no-server",
        argv=("load", "--value", "1", "--kubeconfig", "kc.yaml"),
        files={"kc.yaml": _kubeconfig(server="ftp://x")},
        names=("kc.yaml", "https://"),
    ),
    Bad(
        id="secrets-kubeconfig-missing-cluster",
        argv=("watch", "--once", "--kubeconfig", "kc.yaml"),
        files={"kc.yaml": _kubeconfig(context="{cluster: elsewhere, user: u}")},
        names=("kc.yaml", "'elsewhere'"),
    ),
    Bad(
        id="secrets-kubeconfig-exec-plugin-missing",
        argv=("load", "--value", "1", "--kubeconfig", "kc.yaml"),
        files={
            "kc.yaml": _kubeconfig(
                user=(
                    "{exec: {apiVersion: client.authentication.k8s.io/v1beta1, "
                    "command: gpuscale-no-such-plugin, "
                    f"env: [{{name: TOKEN, value: {SECRET}}}]}}}}"
                )
            )
        },
        names=("kc.yaml", "gpuscale-no-such-plugin", "PATH"),
    ),
    # ---- the DigitalOcean token file --------------------------------------------------
    Bad(
        id="secrets-token-file-missing",
        argv=("cluster", "status", "--profile", "gpuscale.yaml", "--token-file", "nope"),
        files={"gpuscale.yaml": PROFILE},
        names=("nope",),
    ),
    Bad(
        id="secrets-token-file-empty",
        argv=("cluster", "status", "--profile", "gpuscale.yaml", "--token-file", "token"),
        files={"gpuscale.yaml": PROFILE, "token": "\n\n"},
        names=("token", "empty"),
    ),
    Bad(
        id="secrets-token-file-a-directory",
        argv=("cluster", "delete", "--yes", "--profile", "gpuscale.yaml", "--token-file", "sub"),
        files={"gpuscale.yaml": PROFILE, "sub/x": "x"},
        names=("sub",),
    ),
    # ---- gpuscale calibrate: the API key and a URL with credentials -------------
    Bad(
        id="secrets-calibrate-api-key-over-budget",
        argv=(
            "calibrate",
            "http://127.0.0.1:9",
            "--api-key",
            SECRET,
            "--profile",
            "{d}/p.yaml",
            "--max-requests",
            "5",
        ),
        files={"p.yaml": "workloads:\n  c:\n    serving: {kind: vllm, preset: l40s/qwen2.5-7b}\n"},
        names=("--max-requests",),
    ),
    Bad(
        id="secrets-calibrate-api-key-no-server",
        argv=("calibrate", "http://127.0.0.1:9", "--api-key", SECRET, "--profile", "{d}/p.yaml"),
        files={"p.yaml": "workloads:\n  c:\n    serving: {kind: vllm, preset: l40s/qwen2.5-7b}\n"},
        names=("cannot reach",),
        exit=1,
    ),
    Bad(
        id="secrets-calibrate-credentials-in-url",
        argv=("calibrate", f"http://me:{SECRET}@127.0.0.1:9"),
        names=("URL", "credentials"),
    ),
]
