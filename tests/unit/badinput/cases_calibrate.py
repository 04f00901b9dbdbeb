"""Bad inputs of ``gpuscale calibrate`` and of the emulator's ``--step-cost``: every one
fails before a request is sent (nothing listens on the URLs used)."""

from __future__ import annotations

from tests.unit.badinput._harness import Bad

_URL = "http://127.0.0.1:9"
_PROFILE = "workloads:\n  chat:\n    serving:\n      kind: vllm\n      preset: l40s/llama-3.1-8b\n"
_CAL = ("calibrate", _URL, "--profile", "{d}/p.yaml")

CASES = [
    Bad(
        "calibrate-remote-refused",
        ("calibrate", "http://10.0.0.5:8000"),
        names=("URL", "--allow-remote"),
    ),
    Bad(
        "calibrate-named-host-refused",
        ("calibrate", "http://llm.example.com"),
        names=("URL", "llm.example.com"),
    ),
    Bad("calibrate-not-http", ("calibrate", "ftp://127.0.0.1/x"), names=("URL",)),
    Bad(
        "calibrate-credentials-in-url",
        ("calibrate", "http://me:hunter22@127.0.0.1:8000"),
        names=("URL", "credentials"),
    ),
    Bad(
        "calibrate-too-many-requests",
        (*_CAL, "--max-requests", "10"),
        files={"p.yaml": _PROFILE},
        names=("--max-requests", "97"),
    ),
    Bad(
        "calibrate-bad-concurrency",
        (*_CAL, "--concurrency", "1,x"),
        files={"p.yaml": _PROFILE},
        names=("--concurrency",),
    ),
    Bad(
        "calibrate-zero-concurrency",
        (*_CAL, "--concurrency", "0"),
        files={"p.yaml": _PROFILE},
        names=("--concurrency",),
    ),
    Bad(
        "calibrate-bad-max-time",
        (*_CAL, "--max-time", "soon"),
        files={"p.yaml": _PROFILE},
        names=("--max-time",),
    ),
    Bad(
        "calibrate-short-prompt",
        (*_CAL, "--max-prompt-tokens", "4"),
        files={"p.yaml": _PROFILE},
        names=("--max-prompt-tokens",),
    ),
    Bad(
        "calibrate-no-vllm-workload",
        ("calibrate", _URL, "--profile", "{d}/p.yaml"),
        files={"p.yaml": "workloads:\n  web:\n    concurrency: 4\n"},
        names=("--workload",),
    ),
    Bad(
        "calibrate-bad-profile",
        ("calibrate", _URL, "--profile", "{d}/p.yaml"),
        files={"p.yaml": "workloads:\n  chat:\n    servng: {}\n"},
        names=("p.yaml:3",),
    ),
    *(
        Bad(
            f"serving-step-cost-{name}",
            ("app", "--serve", "llm", "--step-cost", value),
            names=("--step-cost",),
        )
        for name, value in (
            ("unknown-term", "speed=1"),
            ("no-equals", "base"),
            ("negative", "base=-1"),
            ("not-a-number", "base=fast"),
            ("infinite", "base=inf"),
            ("twice", "base=1,base=2"),
            ("nan", "decode_seq=nan"),
        )
    ),
    Bad(
        "serving-llm-zero-header-timeout",
        ("app", "--serve", "llm", "--header-timeout", "0s"),
        names=("--header-timeout",),
    ),
    Bad(
        "serving-llm-tiny-max-header-bytes",
        ("app", "--serve", "llm", "--max-header-bytes", "10"),
        names=("--max-header-bytes",),
    ),
    Bad("serving-step-cost-in-gauge", ("app", "--step-cost", "base=1"), names=("--step-cost",)),
]
