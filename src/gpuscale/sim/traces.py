"""Request traces: the one parser of the project, for the simulator and ``gpuscale load``.

A trace is a list of requests, each an arrival offset in seconds from the first request
and, when the format has them, the prompt and output token counts. Three formats:

- ``azure``: the Azure LLM inference traces (``AzureLLMInferenceTrace_{code,conv}.csv``,
  Patel et al., "Splitwise", ISCA 2024): ``TIMESTAMP,ContextTokens,GeneratedTokens`` with
  timestamps such as ``2023-11-16 18:15:46.6805900``;
- ``mooncake``: Mooncake JSON lines (Qin et al., FAST'25; the format NVIDIA Dynamo's
  planner replays): ``{"timestamp": <ms>, "input_length": n, "output_length": m, ...}``;
- ``csv``: a generic CSV with a header naming a ``timestamp`` column (seconds, or an ISO
  8601 date-time) and optionally ``prompt_tokens``/``input_tokens`` and
  ``output_tokens`` columns.

:meth:`Trace.scaled` replays faster or slower; :meth:`Trace.tiled` repeats the trace
back to back until a duration, one tile every ``period`` (by default the trace's span
plus its mean gap between requests, :attr:`Trace.period`, so the rate stays continuous
across the seam).
Arrays are numpy, so tiling the 19k-request conversation trace to 7 days (3.25M
requests) takes a few tens of milliseconds. Bad input raises :class:`InputError` naming
``file:line``. Pure: :func:`gpuscale.inputs.read_trace` reads the file.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from gpuscale.errors import InputError

__all__ = ["ATTRIBUTIONS", "TiledTrace", "Trace", "TraceFormat", "parse_trace"]

TraceFormat = Literal["auto", "azure", "mooncake", "csv"]

ATTRIBUTIONS = {
    "azure": "Request trace: Azure LLM inference trace 2023 (Azure/AzurePublicDataset, "
    'CC-BY-4.0), from P. Patel et al., "Splitwise: Efficient Generative LLM Inference '
    'Using Phase Splitting", ISCA 2024.',
    "mooncake": "Request trace: Mooncake conversation trace (kvcache-ai/Mooncake, Apache-2.0), "
    'from R. Qin et al., "Mooncake: Trading More Storage for Less Computation — A '
    "KVCache-centric Architecture for Serving LLM Chatbot\", FAST '25.",
}
"""Per trace format, the citation its licence asks for (../shared/traces/README.md)."""

_AZURE_HEADER = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")
_PROMPT_COLUMNS = ("prompt_tokens", "input_tokens", "contexttokens", "input_length")
_OUTPUT_COLUMNS = ("output_tokens", "generated_tokens", "generatedtokens", "output_length")
_FIX_FORMAT = "use the Azure LLM CSV, Mooncake JSONL or a CSV with a timestamp column"
_FORMAT_NAMES = {"azure": "an Azure LLM CSV", "mooncake": "Mooncake JSONL", "csv": "a CSV"}


@dataclass(frozen=True, eq=False)
class Trace:
    """Requests sorted by arrival: offsets in seconds from the first one, and token counts."""

    offsets: npt.NDArray[np.float64]
    """Arrival offsets, non-decreasing, starting at 0."""
    prompt_tokens: npt.NDArray[np.int64]
    """Prompt (context) tokens per request; 0 when the trace has none."""
    output_tokens: npt.NDArray[np.int64]
    """Output (generated) tokens per request; 0 when the trace has none."""
    source: str = "<trace>"
    """Where the trace came from, for messages."""
    has_tokens: bool = True
    """Whether the format carried token counts."""
    format: str = "csv"
    """The format it was read as: ``azure``, ``mooncake`` or ``csv``."""

    @property
    def attribution(self) -> str | None:
        """The citation the trace's licence asks derived reports to carry, if any."""
        return ATTRIBUTIONS.get(self.format)

    def __len__(self) -> int:
        return int(self.offsets.shape[0])

    def __iter__(self) -> Iterator[tuple[float, int, int]]:
        return zip(
            self.offsets.tolist(),
            self.prompt_tokens.tolist(),
            self.output_tokens.tolist(),
            strict=True,
        )

    @property
    def span(self) -> float:
        """Seconds from the first to the last request."""
        return float(self.offsets[-1]) if len(self) else 0.0

    @property
    def mean_gap(self) -> float:
        """Mean seconds between consecutive requests (0 for fewer than two)."""
        return self.span / (len(self) - 1) if len(self) > 1 else 0.0

    @property
    def period(self) -> float:
        """Seconds one pass of the trace takes when replayed back to back: its span plus
        its mean gap (so :meth:`tiled` up to ``n * period`` keeps exactly ``n`` copies, the
        last request of each included)."""
        return self.span + self.mean_gap

    def scaled(self, speedup: float) -> Trace:
        """The same requests replayed ``speedup`` times faster (0.5 is half speed)."""
        if not (math.isfinite(speedup) and speedup > 0):
            raise ValueError(f"speedup must be a positive number, got {speedup!r}")
        return Trace(
            self.offsets / speedup,
            self.prompt_tokens,
            self.output_tokens,
            self.source,
            self.has_tokens,
            self.format,
        )

    def _first(self, count: int) -> Trace:
        return Trace(
            self.offsets[:count],
            self.prompt_tokens[:count],
            self.output_tokens[:count],
            self.source,
            self.has_tokens,
            self.format,
        )

    def tiled(self, until: float, period: float | None = None) -> Trace:
        """The trace repeated every ``period`` seconds, keeping requests before ``until``.

        A trace whose requests all arrive at one instant (one row, or equal timestamps)
        has no period to repeat with: it is one burst at 0, kept as it is. The repeated
        trace is a :class:`TiledTrace`: its arrays are built on first use (a week of the
        conversation trace is 80 MB of them), and the simulator reads it tile by tile."""
        if not (math.isfinite(until) and until >= 0):
            raise ValueError(f"until must be a non-negative number of seconds, got {until!r}")
        if len(self) == 0:
            return self
        if period is None and self.period == 0:
            keep = int(np.searchsorted(self.offsets, until, side="left"))
            return self._first(keep)
        step = self.period if period is None else period
        if not (math.isfinite(step) and step > 0):
            raise ValueError(f"tile period must be a positive number of seconds, got {step!r}")
        return TiledTrace(self, step, max(math.ceil(until / step), 1), until)


class TiledTrace(Trace):
    """``base`` repeated ``tiles`` times, one tile every ``step`` seconds, cut before
    ``until`` (what :meth:`Trace.tiled` returns).

    Request ``r`` of tile ``m`` arrives at ``base.offsets[r] + starts[m]`` with ``starts =
    arange(tiles) * step``, the same float operations as the whole arrays, which
    :attr:`offsets` and the token arrays build on first use. :meth:`tile_offsets` gives one
    tile's arrivals without building the rest. :attr:`ordered` says whether every tile
    ends no later than the next begins (so the tiles in order are the whole sorted
    trace); it always does unless the period is below the rounding of the arrival times.
    """

    def __init__(self, base: Trace, step: float, tiles: int, until: float) -> None:
        # the fields hold nothing of their own: the arrays are properties of this class
        object.__setattr__(self, "source", base.source)
        object.__setattr__(self, "has_tokens", base.has_tokens)
        object.__setattr__(self, "format", base.format)
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "starts", np.arange(tiles, dtype=np.float64) * step)
        object.__setattr__(self, "_whole", None)
        ends = base.offsets[-1] + self.starts
        ordered = bool(np.all(ends[:-1] <= base.offsets[0] + self.starts[1:]))
        object.__setattr__(self, "ordered", ordered)
        if ordered:
            # the tiles wholly before until, then the one it cuts
            full = int(np.searchsorted(ends, until, side="left"))
            partial = 0
            if full < tiles:
                partial = int(np.searchsorted(self.tile_offsets(full), until, side="left"))
            keep = full * len(base) + partial
        else:
            keep = int(np.searchsorted(self._arrays()[0], until, side="left"))
        object.__setattr__(self, "keep", keep)

    base: Trace
    starts: npt.NDArray[np.float64]
    ordered: bool
    keep: int
    _whole: tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], npt.NDArray[np.int64]] | None

    def tile_offsets(self, m: int) -> npt.NDArray[np.float64]:
        """The arrivals of tile ``m`` (before the cut at ``until``)."""
        result: npt.NDArray[np.float64] = self.base.offsets + self.starts[m]
        return result

    def _arrays(
        self,
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        if self._whole is None:
            base, tiles = self.base, len(self.starts)
            offsets = (base.offsets[None, :] + self.starts[:, None]).ravel()
            whole = (
                offsets,
                np.tile(base.prompt_tokens, tiles),
                np.tile(base.output_tokens, tiles),
            )
            object.__setattr__(self, "_whole", whole)
            return whole
        return self._whole

    @property
    def offsets(self) -> npt.NDArray[np.float64]:
        return self._arrays()[0][: self.keep]

    @property
    def prompt_tokens(self) -> npt.NDArray[np.int64]:
        return self._arrays()[1][: self.keep]

    @property
    def output_tokens(self) -> npt.NDArray[np.int64]:
        return self._arrays()[2][: self.keep]

    def __len__(self) -> int:
        return self.keep

    @property
    def span(self) -> float:
        if not self.keep:
            return 0.0
        n = len(self.base)
        last = self.keep - 1
        return float(self.base.offsets[last % n] + self.starts[last // n])


def _error(message: str, where: str, fix: str = _FIX_FORMAT) -> InputError:
    return InputError(message, where=where, fix=fix)


def _azure_seconds(stamp: str, ordinals: dict[str, int]) -> float:
    date, _, clock = stamp.strip().partition(" ")
    day = ordinals.get(date)
    if day is None:
        day = _dt.date.fromisoformat(date).toordinal()
        ordinals[date] = day
    hours, minutes, seconds = clock.split(":")
    if len(hours) > 2 or len(minutes) > 2 or len(seconds) > _MAX_FIELD:
        raise ValueError(stamp)
    value = day * 86400.0 + int(hours) * 3600.0 + int(minutes) * 60.0 + float(seconds)
    if not math.isfinite(value) or float(seconds) < 0:
        raise ValueError(stamp)
    return value


_MAX_TOKENS = 10**9
"""More tokens than any model's context: a count above it is a mistake in the trace."""
_MAX_FIELD = 64
"""Longest numeric field read (a count or a seconds value); longer text is a mistake and
would meet Python's limit on int-from-string conversions."""


def _count(text: str, where: str, column: str) -> int:
    text = text.strip()
    if len(text) > _MAX_FIELD:
        raise _error(
            f"{column} is not a token count: {text[:20]!r}... ({len(text)} characters)", where
        )
    try:
        value = int(text)
    except ValueError:
        try:
            number = float(text)
        except ValueError:
            raise _error(f"{column} is not a number: {text!r}", where) from None
        if not number.is_integer():
            raise _error(f"{column} must be a whole number of tokens: {text!r}", where) from None
        value = int(number)
    if value < 0:
        raise _error(f"{column} must be >= 0, got {value}", where)
    if value > _MAX_TOKENS:
        shown = f"{value:,}" if value < 10**15 else f"{float(value):.3g}"
        raise _error(f"{column} must be at most {_MAX_TOKENS:,} tokens, got {shown}", where)
    return value


def _finish(
    times: list[float], prompt: list[int], output: list[int], source: str, has_tokens: bool
) -> Trace:
    t = np.asarray(times, dtype=np.float64)
    order = np.argsort(t, kind="stable")
    t = t[order]
    if len(t):
        with np.errstate(over="ignore", invalid="ignore"):
            t = t - t[0]
        if not math.isfinite(float(t[-1])):
            raise _error(
                "the trace's first and last requests are too far apart to count in seconds",
                source,
                "check the timestamps (seconds, or milliseconds for Mooncake)",
            )
    return Trace(
        t,
        np.asarray(prompt, dtype=np.int64)[order],
        np.asarray(output, dtype=np.int64)[order],
        source,
        has_tokens,
    )


def _parse_azure(lines: list[str], source: str, first: int) -> Trace:
    times: list[float] = []
    prompt: list[int] = []
    output: list[int] = []
    ordinals: dict[str, int] = {}
    for number, line in enumerate(lines[1:], start=first + 1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        parts = line.split(",")
        if len(parts) != 3:
            raise _error(f"expected 3 columns, got {len(parts)}", where)
        try:
            times.append(_azure_seconds(parts[0], ordinals))
        except ValueError:
            raise _error(
                f"TIMESTAMP is not a date-time like 2023-11-16 18:15:46.68: {_shown(parts[0])}",
                where,
            ) from None
        prompt.append(_count(parts[1], where, "ContextTokens"))
        output.append(_count(parts[2], where, "GeneratedTokens"))
    return _finish(times, prompt, output, source, True)


def _parse_mooncake(lines: list[str], source: str) -> Trace:
    times: list[float] = []
    prompt: list[int] = []
    output: list[int] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        try:
            doc = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _error(f"not a JSON line ({exc.msg})", where) from None
        except RecursionError:
            raise _error("the JSON nests too deep to be a request", where) from None
        except ValueError as exc:  # e.g. an integer over Python's int-string digit limit
            raise _error(f"not a JSON line ({str(exc).split(';')[0]})", where) from None
        if not isinstance(doc, dict) or "timestamp" not in doc:
            raise _error("expected an object with a timestamp (milliseconds)", where)
        stamp = doc["timestamp"]
        if (
            isinstance(stamp, bool)
            or not isinstance(stamp, int | float)
            or not math.isfinite(stamp)
        ):
            raise _error(f"timestamp must be a number of milliseconds, got {stamp!r}", where)
        times.append(float(stamp) / 1000.0)
        prompt.append(_json_count(doc.get("input_length", 0), where, "input_length"))
        output.append(_json_count(doc.get("output_length", 0), where, "output_length"))
    return _finish(times, prompt, output, source, True)


def _json_count(value: object, where: str, column: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise _error(f"{column} must be a number of tokens, got {_shown(value)}", where)
    if isinstance(value, int) and abs(value) > _MAX_TOKENS:
        return _count(str(min(max(value, -1), _MAX_TOKENS + 1)), where, column)
    return _count(str(value), where, column)


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _generic_seconds(text: str) -> float:
    if len(text) > _MAX_FIELD:
        raise ValueError(text[:20])
    try:
        value = float(text)
    except ValueError:
        stamp = _dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=_dt.UTC)
        return stamp.timestamp()
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def _parse_csv(lines: list[str], source: str, first: int) -> Trace:
    header = [h.strip().lower() for h in lines[0].split(",")]
    if "timestamp" not in header:
        raise _error(
            f"no timestamp column in the header ({', '.join(header)})",
            f"{source}:{first}",
            "name the arrival column timestamp (seconds or ISO 8601)",
        )
    t_col = header.index("timestamp")
    p_col = next((header.index(c) for c in _PROMPT_COLUMNS if c in header), None)
    o_col = next((header.index(c) for c in _OUTPUT_COLUMNS if c in header), None)
    times: list[float] = []
    prompt: list[int] = []
    output: list[int] = []
    for number, line in enumerate(lines[1:], start=first + 1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        parts = line.split(",")
        if len(parts) != len(header):
            raise _error(f"expected {len(header)} columns, got {len(parts)}", where)
        try:
            times.append(_generic_seconds(parts[t_col]))
        except ValueError:
            raise _error(
                f"timestamp is neither seconds nor ISO 8601: {_shown(parts[t_col])}", where
            ) from None
        prompt.append(0 if p_col is None else _count(parts[p_col], where, header[p_col]))
        output.append(0 if o_col is None else _count(parts[o_col], where, header[o_col]))
    return _finish(times, prompt, output, source, p_col is not None or o_col is not None)


def parse_trace(text: str, *, source: str = "<trace>", fmt: TraceFormat = "auto") -> Trace:
    """Parse a trace from its text; ``fmt="auto"`` tells the format from its first line.

    A UTF-8 byte-order mark before the first line (Excel writes one on every CSV it
    saves) is dropped, as the manifests' reader drops it."""
    lines = text.removeprefix("\ufeff").splitlines()
    first = next((line for line in lines if line.strip()), None)
    if first is None:
        raise _error("the trace has no requests", source)
    if first.lstrip().startswith("{"):
        looks: TraceFormat = "mooncake"
    elif tuple(h.strip() for h in first.split(",")) == _AZURE_HEADER:
        looks = "azure"
    else:
        looks = "csv"
    if fmt == "auto":
        fmt = looks
    try:
        if fmt == "mooncake":
            trace = _parse_mooncake(lines, source)
        else:
            start = lines.index(first)
            body = lines[start:]
            parse = _parse_azure if fmt == "azure" else _parse_csv
            trace = parse(body, source, start + 1)
    except InputError as exc:
        if looks == fmt:
            raise
        # The format named by hand is not the one the file looks like: say so beside the
        # parser's complaint about a line of the other format, and give the right flag.
        raise _error(
            f"{exc.message}: the file looks like {_FORMAT_NAMES[looks]}, not {_FORMAT_NAMES[fmt]}",
            exc.where or source,
            fix=f"leave --trace-format out (auto), or give --trace-format {looks}",
        ) from exc
    if len(trace) == 0:
        raise _error("the trace has no requests", source)
    return dataclasses.replace(trace, format=fmt)
