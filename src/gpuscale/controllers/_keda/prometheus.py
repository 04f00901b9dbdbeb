"""KEDA's ``prometheus`` scaler: trigger metadata, the answer of one query, and activity.

Follows ``pkg/scalers/prometheus_scaler.go`` (parsePrometheusMetadata,
checkAuthConfigWithPodIdentity, ExecutePromQuery after the HTTP round trip,
GetMetricsAndActivity, GetMetricSpecForScaling), the typed-config reader it relies on
(``pkg/scalers/scalersconfig/typed_config.go``), the auth block
(``pkg/scalers/authentication/authentication_types.go``) and the metric helpers in
``pkg/scalers/scaler.go`` (GenerateMetricInMili, GetMetricTargetMili,
GetMetricTargetType), at kedacore/keda 8b4f083 (v2.20.1-117, after v2.20.2).

The HTTP request itself (URL building, headers, TLS, timeouts) belongs to the I/O edge;
this module decides only what KEDA makes of the metadata and of the answer.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote

from gpuscale._gomath import GoSyntaxError, parse_go_float
from gpuscale.controllers._keda.errors import (
    PrometheusQueryError,
    PrometheusQueryPanicError,
    TriggerError,
)
from gpuscale.controllers._keda.goparse import (
    go_json_float,
    go_trim_space,
    parse_go_bool,
    parse_go_duration,
    parse_go_int,
)
from gpuscale.errors import KeyPath

__all__ = [
    "AUTH_MODES",
    "PrometheusAuth",
    "PrometheusTrigger",
    "metric_quantity",
    "metric_target_type",
    "metrics_and_activity",
    "parse_prometheus_response",
    "parse_prometheus_trigger",
]

AUTH_MODES = ("apiKey", "basic", "tls", "bearer", "custom", "oauth")
_EXCLUSIVE_MODES = ("bearer", "basic", "oauth")
_TRIGGER = ("triggerMetadata",)
_AUTH = ("authParams",)
_BOTH = ("triggerMetadata", "authParams")


@dataclass(frozen=True)
class PrometheusAuth:
    """The ``authModes`` block of a prometheus trigger (authentication.Config).

    Secrets are kept out of ``repr`` so that logging a trigger never prints them.
    """

    modes: tuple[str, ...] = ()
    """Enabled modes, from ``authModes`` (or ``authMode``) in metadata or auth params."""
    bearer_token: str = field(default="", repr=False)
    """``bearerToken`` (or ``token``) auth parameter, for mode ``bearer``."""
    username: str = ""
    """``username`` auth parameter, for mode ``basic``."""
    password: str = field(default="", repr=False)
    """``password`` auth parameter, for mode ``basic`` (optional)."""
    cert: str = field(default="", repr=False)
    """``cert`` auth parameter (PEM), for mode ``tls``."""
    key: str = field(default="", repr=False)
    """``key`` auth parameter (PEM), for mode ``tls``."""
    ca: str = field(default="", repr=False)
    """``ca`` auth parameter (PEM), optional for mode ``tls``."""
    custom_auth_header: str = ""
    """``customAuthHeader`` auth parameter, for mode ``custom``."""
    custom_auth_value: str = field(default="", repr=False)
    """``customAuthValue`` auth parameter, for mode ``custom``."""
    oauth_token_uri: str = ""
    """``oauthTokenURI`` auth parameter, for mode ``oauth``."""
    client_id: str = ""
    """``clientID`` auth parameter, for mode ``oauth``."""
    client_secret: str = field(default="", repr=False)
    """``clientSecret`` auth parameter, for mode ``oauth``."""
    scopes: tuple[str, ...] = ()
    """``scopes`` (or ``scope``) auth parameter, comma separated, for mode ``oauth``."""
    endpoint_params: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """``endpointParams`` auth parameter (URL query syntax), for mode ``oauth``."""
    api_key: str = field(default="", repr=False)
    """``apiKey`` (metadata or auth params), for mode ``apiKey``."""
    api_key_method: str = "header"
    """``method``: ``header`` (default) or ``query``, for mode ``apiKey``."""
    key_param_name: str = ""
    """``keyParamName``: header or query parameter name, for mode ``apiKey``."""

    @property
    def disabled(self) -> bool:
        """No auth mode is enabled (Config.Disabled)."""
        return not self.modes


@dataclass(frozen=True)
class PrometheusTrigger:
    """A validated ``prometheus`` trigger (prometheusMetadata), defaults filled as KEDA does."""

    server_address: str
    """``serverAddress``: the Prometheus base URL (required, non-blank)."""
    query: str
    """``query``: the PromQL instant query; it must return at most one series."""
    threshold: float
    """``threshold``: the HPA target (AverageValue per replica unless ``metricType: Value``)."""
    activation_threshold: float = 0.0
    """``activationThreshold``: the trigger is active when the value is strictly above it."""
    namespace: str = ""
    """``namespace``: appended as ``&namespace=`` (Thanos querier multi-tenancy)."""
    custom_headers: dict[str, str] = field(default_factory=dict)
    """``customHeaders``: ``k=v,k=v`` headers sent with every query."""
    query_parameters: dict[str, str] = field(default_factory=dict)
    """``queryParameters``: ``k=v,k=v`` extra URL query parameters."""
    ignore_null_values: bool = True
    """``ignoreNullValues``: an empty answer or NaN/±Inf reads as 0 instead of an error."""
    unsafe_ssl: bool = False
    """``unsafeSsl``: skip TLS certificate verification."""
    timeout_ms: float | None = None
    """``timeout``: per-query HTTP timeout in milliseconds (a Go duration or a bare integer
    of milliseconds); None means KEDA's global HTTP timeout. Zero also means the global."""
    aws_region: str = ""
    """``awsRegion`` (metadata or auth params), for Amazon Managed Prometheus (SigV4)."""
    identity_owner: str = ""
    """``identityOwner``: ``operator`` or ``pod`` identity for cloud auth."""
    auth: PrometheusAuth = field(default_factory=PrometheusAuth)
    """The auth block (``authModes`` and its parameters)."""
    trigger_index: int = 0
    """Position of the trigger in ``spec.triggers``; it names the metric ``s<i>-prometheus``."""

    @property
    def auth_modes(self) -> tuple[str, ...]:
        """The enabled auth modes, in the order written."""
        return self.auth.modes

    @property
    def metric_name(self) -> str:
        """The external metric name in the generated HPA (GenerateMetricNameWithIndex)."""
        return f"s{self.trigger_index}-prometheus"


class _Params:
    """configParamValue over the three maps KEDA's typed config reads (no resolvedEnv here)."""

    def __init__(self, metadata: Mapping[str, str], auth_params: Mapping[str, str]) -> None:
        self.maps = {"triggerMetadata": metadata, "authParams": auth_params}

    def lookup(self, names: tuple[str, ...], order: tuple[str, ...]) -> str | None:
        for source in order:
            values = self.maps[source]
            for name in names:
                if name in values:
                    text = go_trim_space(str(values[name]))
                    if text:
                        return text
        return None


def _split_map(text: str) -> dict[str, str]:
    """setConfigValueMap: ``k=v`` items separated by commas, each side trimmed."""
    result: dict[str, str] = {}
    for item in text.split(","):
        parts = go_trim_space(item).split("=")
        if len(parts) != 2:
            raise ValueError(f'expected format key=value, got "{go_trim_space(item)}"')
        result[go_trim_space(parts[0])] = go_trim_space(parts[1])
    return result


def _duration_ms(text: str) -> float:
    """The typed config's time.Duration rule: a Go duration, else an integer of milliseconds;
    negative values are refused."""
    try:
        nanoseconds = parse_go_duration(text)
    except GoSyntaxError:
        try:
            milliseconds = parse_go_int(text)
        except GoSyntaxError:
            raise ValueError(
                f'unable to parse duration value "{text}": must be either a duration string '
                "(e.g. '30s', '5m') or a number of milliseconds"
            ) from None
        if milliseconds < 0:
            raise ValueError(f"duration cannot be negative: {milliseconds} milliseconds") from None
        return float(milliseconds)
    if nanoseconds < 0:
        raise ValueError(f'duration cannot be negative: "{text}"')
    return nanoseconds / 1e6


_QUERY_ESCAPE = re.compile(r"%(?![0-9a-fA-F]{2})")


def _parse_url_query(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """url.ParseQuery: ``&``-separated pairs; a ``;`` or a bad ``%`` escape is an error."""
    values: dict[str, list[str]] = {}
    for part in text.split("&"):
        if not part:
            continue
        if ";" in part:
            raise ValueError("invalid semicolon separator in query")
        key, _, value = part.partition("=")
        for piece in (key, value):
            if _QUERY_ESCAPE.search(piece):
                raise ValueError(f'invalid URL escape in "{piece}"')
        decoded_key = unquote(key.replace("+", " "))
        values.setdefault(decoded_key, []).append(unquote(value.replace("+", " ")))
    return tuple((key, tuple(items)) for key, items in values.items())


@dataclass
class _Reader:
    """Reads typed fields in upstream's declaration order and collects every error, as
    parseTypedConfig does (errors.Join)."""

    params: _Params
    errors: list[tuple[str, str]] = field(default_factory=list)

    def get(
        self,
        names: tuple[str, ...],
        order: tuple[str, ...],
        convert: Callable[[str], object],
        *,
        required: bool = False,
        default: str | None = None,
    ) -> object | None:
        text = self.params.lookup(names, order)
        if text is None and default is not None:
            text = default
        if text is None:
            if required:
                self.errors.append(
                    (
                        names[0],
                        f'missing required parameter "{",".join(names)}" in [{" ".join(order)}]',
                    )
                )
            return None
        try:
            return convert(text)
        except _ParamError as exc:
            self.errors.append((names[0], str(exc).replace("{value}", text)))
            return None
        except ValueError as exc:
            self.errors.append(
                (names[0], f'unable to set param "{",".join(names)}" value "{text}": {exc}')
            )
            return None


class _ParamError(ValueError):
    """A typed-config check whose message KEDA reports as is (enum, exclusiveSet);
    ``{value}`` stands for the raw value."""


def _auth_modes(text: str) -> tuple[str, ...]:
    modes = tuple(go_trim_space(mode) for mode in text.split(","))
    if any(mode not in AUTH_MODES for mode in modes):
        raise _ParamError(
            f'parameter "authModes,authMode" value "{{value}}" must be one of '
            f"[{' '.join(AUTH_MODES)}]"
        )
    if sum(mode in _EXCLUSIVE_MODES for mode in modes) > 1:
        raise _ParamError(
            f'parameter "authModes,authMode" value "{{value}}" must contain only one of '
            f"[{' '.join(_EXCLUSIVE_MODES)}]"
        )
    return modes


def _api_key_method(text: str) -> str:
    if go_trim_space(text) not in ("header", "query"):
        raise _ParamError('parameter "method" value "{value}" must be one of [header query]')
    return text


def _text(value: str) -> str:
    return value


def _read_auth(reader: _Reader) -> PrometheusAuth:
    """authentication.Config through the typed config (every nested field optional), then
    Config.Validate."""
    modes = reader.get(("authModes", "authMode"), _BOTH, _auth_modes)
    fields: dict[str, object | None] = {
        "bearer_token": reader.get(("bearerToken", "token"), _AUTH, _text),
        "username": reader.get(("username",), _AUTH, _text),
        "password": reader.get(("password",), _AUTH, _text),
        "cert": reader.get(("cert",), _AUTH, _text),
        "key": reader.get(("key",), _AUTH, _text),
        "ca": reader.get(("ca",), _AUTH, _text),
        "oauth_token_uri": reader.get(("oauthTokenURI",), _AUTH, _text),
        "scopes": reader.get(
            ("scopes", "scope"), _AUTH, lambda t: tuple(go_trim_space(s) for s in t.split(","))
        ),
        "client_id": reader.get(("clientID",), _AUTH, _text),
        "client_secret": reader.get(("clientSecret",), _AUTH, _text),
        "endpoint_params": reader.get(("endpointParams",), _AUTH, _parse_url_query),
        "custom_auth_header": reader.get(("customAuthHeader",), _AUTH, _text),
        "custom_auth_value": reader.get(("customAuthValue",), _AUTH, _text),
        "api_key": reader.get(("apiKey",), _BOTH, _text),
        "api_key_method": reader.get(("method",), _BOTH, _api_key_method, default="header"),
        "key_param_name": reader.get(("keyParamName",), _BOTH, _text),
    }
    present = {name: value for name, value in fields.items() if value is not None}
    auth = PrometheusAuth(modes=modes if isinstance(modes, tuple) else (), **present)  # type: ignore[arg-type]
    problem = _validate_auth(auth)
    if problem is not None:
        reader.errors.append(("authModes", problem))
    return auth


def _validate_auth(auth: PrometheusAuth) -> str | None:
    """Config.Validate: the parameters each enabled mode needs."""
    if auth.disabled:
        return None
    enabled = set(auth.modes)
    if "bearer" in enabled and not auth.bearer_token:
        return "bearer token=<empty> is required when bearer auth is enabled"
    if "basic" in enabled and not auth.username:
        return "username=<empty> is required when basic auth is enabled"
    if "tls" in enabled and (not auth.cert or not auth.key):
        return (
            f"cert={_presence(auth.cert)} and key={_presence(auth.key)} "
            "are required when tls auth is enabled"
        )
    if "oauth" in enabled and (not auth.oauth_token_uri or not auth.client_id):
        return (
            f"oauthTokenURI={_presence(auth.oauth_token_uri)} and "
            f"clientID={_presence(auth.client_id)} are required when oauth is enabled"
        )
    if "custom" in enabled and (not auth.custom_auth_header or not auth.custom_auth_value):
        return (
            f"customAuthHeader={_presence(auth.custom_auth_header)} and "
            f"customAuthValue={_presence(auth.custom_auth_value)} "
            "are required when custom auth is enabled"
        )
    if "apiKey" in enabled and not auth.api_key:
        return "apiKey is required when apiKey auth is enabled"
    return None


def _presence(value: str) -> str:
    return "<present>" if value else "<empty>"


def parse_prometheus_trigger(
    metadata: Mapping[str, str],
    auth_params: Mapping[str, str] | None = None,
    *,
    pod_identity_provider: str = "",
    trigger_index: int = 0,
    key_path: KeyPath = ("metadata",),
) -> PrometheusTrigger:
    """The trigger KEDA builds from ``metadata`` and resolved ``auth_params``
    (parsePrometheusMetadata, then checkAuthConfigWithPodIdentity).

    Values are trimmed and a blank value counts as absent, as in KEDA's typed config;
    floats are JSON numbers, booleans Go booleans, maps ``k=v,k=v``, ``timeout`` a Go
    duration or a bare integer of milliseconds. Unknown keys (``metricName``...) are
    ignored. Raises ``TriggerError`` naming the first bad key (``key_path`` prefixes it)
    and listing every problem, or when a pod identity provider is combined with
    ``authModes``.
    """
    reader = _Reader(_Params(metadata, auth_params or {}))
    auth = _read_auth(reader)
    server_address = reader.get(("serverAddress",), _TRIGGER, _text, required=True)
    query = reader.get(("query",), _TRIGGER, _text, required=True)
    query_parameters = reader.get(("queryParameters",), _TRIGGER, _split_map)
    threshold = reader.get(("threshold",), _TRIGGER, go_json_float, required=True)
    activation = reader.get(("activationThreshold",), _TRIGGER, go_json_float)
    namespace = reader.get(("namespace",), _TRIGGER, _text)
    custom_headers = reader.get(("customHeaders",), _TRIGGER, _split_map)
    ignore_null = reader.get(("ignoreNullValues",), _TRIGGER, parse_go_bool, default="true")
    unsafe_ssl = reader.get(("unsafeSsl",), _TRIGGER, parse_go_bool)
    aws_region = reader.get(("awsRegion",), _BOTH, _text)
    timeout_ms = reader.get(("timeout",), _TRIGGER, _duration_ms)
    identity_owner = reader.get(("identityOwner",), _TRIGGER, _text)
    if reader.errors:
        key, _ = reader.errors[0]
        raise TriggerError(
            "invalid prometheus trigger: " + "; ".join(message for _, message in reader.errors),
            key_path=(*key_path, key),
            fix="see https://keda.sh/docs/latest/scalers/prometheus/ for the accepted values",
            problems=tuple(((*key_path, name), message) for name, message in reader.errors),
        )
    if not auth.disabled and pod_identity_provider not in ("", "none"):
        raise TriggerError(
            "pod identity cannot be enabled with other auth types",
            key_path=(*key_path, "authModes"),
            fix="use either authenticationRef.podIdentity or authModes, not both",
        )
    assert isinstance(server_address, str)
    assert isinstance(query, str)
    assert isinstance(threshold, float)
    return PrometheusTrigger(
        server_address=server_address,
        query=query,
        threshold=threshold,
        activation_threshold=activation if isinstance(activation, float) else 0.0,
        namespace=namespace if isinstance(namespace, str) else "",
        custom_headers=dict(custom_headers) if isinstance(custom_headers, dict) else {},
        query_parameters=dict(query_parameters) if isinstance(query_parameters, dict) else {},
        ignore_null_values=bool(ignore_null),
        unsafe_ssl=bool(unsafe_ssl),
        timeout_ms=timeout_ms if isinstance(timeout_ms, float) else None,
        aws_region=aws_region if isinstance(aws_region, str) else "",
        identity_owner=identity_owner if isinstance(identity_owner, str) else "",
        auth=auth,
        trigger_index=trigger_index,
    )


# --- the answer of one query -------------------------------------------------------------


class _Pairs:
    """A JSON object as its ordered key/value pairs (duplicates kept, as Go reads them)."""

    def __init__(self, pairs: list[tuple[str, object]]) -> None:
        self.pairs = pairs

    def __iter__(self) -> Iterator[tuple[str, object]]:
        return iter(self.pairs)


@dataclass(frozen=True)
class _Number:
    """A JSON number left as text: Go converts it only where it decodes into a value."""

    text: str


class _DecodeError(Exception):
    pass


def _reject_constant(name: str) -> object:
    raise _DecodeError(f"invalid character '{name[0]}' looking for beginning of value")


def _field_matches(key: str, name: str) -> bool:
    """encoding/json field matching: exact, else case-insensitive with Unicode simple folding
    (for ASCII field names only the Kelvin sign and the long s fold onto letters)."""
    if key == name:
        return True
    if len(key) != len(name):
        return False
    for got, want in zip(key, name, strict=True):
        folded = {"\u212a": "k", "\u017f": "s"}.get(got, got)
        if not folded.isascii() or folded.lower() != want.lower():
            return False
    return True


def _field(key: str, names: tuple[str, ...]) -> str | None:
    for name in names:
        if key == name:
            return name
    for name in names:
        if _field_matches(key, name):
            return name
    return None


@dataclass
class _PromAnswer:
    """The decoded promQueryResult, plus whether any field had the wrong JSON type."""

    results: list[list[object] | None] = field(default_factory=list)
    type_error: str | None = None

    def mismatch(self, what: str, value: object) -> None:
        if self.type_error is None:
            kind = {
                _Pairs: "object",
                list: "array",
                str: "string",
                bool: "bool",
                _Number: "number",
            }.get(type(value), type(value).__name__)
            self.type_error = f"json: cannot unmarshal {kind} into Go struct field {what}"


def _convertible(value: object) -> bool:
    """Whether Go can decode ``value`` into ``any`` (every number must fit a float64)."""
    if isinstance(value, _Number):
        try:
            return not math.isinf(float(value.text))
        except ValueError:  # pragma: no cover - the JSON grammar admits only numbers here
            return False
    if isinstance(value, _Pairs):
        return all(_convertible(item) for _, item in value)
    if isinstance(value, list):
        return all(_convertible(item) for item in value)
    return True


def _decode_prom(text: str) -> _PromAnswer:
    """json.Unmarshal into promQueryResult: unknown keys are skipped, null leaves a struct
    alone and empties a slice, a duplicate key decodes again into the same field, and any
    type mismatch fails the whole call (after decoding the rest)."""
    try:
        top = json.loads(
            text,
            object_pairs_hook=_Pairs,
            parse_float=_Number,
            parse_int=_Number,
            parse_constant=_reject_constant,
        )
    except (ValueError, _DecodeError, RecursionError) as exc:
        raise PrometheusQueryError(f"invalid JSON in Prometheus answer: {exc}") from None
    answer = _PromAnswer()
    if top is None:
        return answer
    if not isinstance(top, _Pairs):
        answer.mismatch("promQueryResult", top)
        return answer
    for key, value in top:
        name = _field(key, ("status", "data"))
        if name == "status":
            if value is not None and not isinstance(value, str):
                answer.mismatch("promQueryResult.status", value)
        elif name == "data" and value is not None:
            if isinstance(value, _Pairs):
                _decode_data(value, answer)
            else:
                answer.mismatch("promQueryResult.data", value)
    return answer


def _decode_data(data: _Pairs, answer: _PromAnswer) -> None:
    for key, value in data:
        name = _field(key, ("resultType", "result"))
        if name == "resultType":
            if value is not None and not isinstance(value, str):
                answer.mismatch("promQueryResult.data.resultType", value)
        elif name == "result":
            if value is None:
                answer.results = []
            elif isinstance(value, list):
                answer.results = [_decode_sample(item, answer) for item in value]
            else:
                answer.mismatch("promQueryResult.data.result", value)


def _decode_sample(item: object, answer: _PromAnswer) -> list[object] | None:
    if item is None:
        return None
    if not isinstance(item, _Pairs):
        answer.mismatch("promQueryResult.data.result", item)
        return None
    values: list[object] | None = None
    for key, value in item:
        name = _field(key, ("metric", "value"))
        if name == "metric":
            if value is not None and not isinstance(value, _Pairs):
                answer.mismatch("promQueryResult.data.result.metric", value)
        elif name == "value":
            if value is None:
                values = None
            elif isinstance(value, list):
                if not _convertible(value):
                    answer.mismatch("promQueryResult.data.result.value", _Number("overflow"))
                values = list(value)
            else:
                answer.mismatch("promQueryResult.data.result.value", value)
    return values


def parse_prometheus_response(
    body: str | bytes,
    status_code: int = 200,
    *,
    ignore_null_values: bool = True,
    query: str = "",
) -> float:
    """The value ExecutePromQuery returns for this HTTP answer, or ``PrometheusQueryError``
    where it returns an error.

    In order: a status outside 200..299 fails; the body must decode (as Go decodes it)
    into ``{data: {result: [{metric: {}, value: [...]}]}}``; an empty ``result`` is 0 with
    ``ignore_null_values``, else an error; more than one series fails; an empty ``value``
    is 0 or an error like an empty result, and a one-element ``value`` fails; the sample
    must be a string that ``strconv.ParseFloat`` accepts (a JSON ``null`` sample gives
    -1 without error, any other type panics upstream); NaN and ±Inf read as 0 with
    ``ignore_null_values``, else fail. Negative values are returned as they are (the
    caller's ``metrics_and_activity`` clamps what reaches the HPA).
    """
    if status_code < 200 or status_code > 299:
        raise PrometheusQueryError(f"prometheus query api returned error. status: {status_code}")
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    answer = _decode_prom(text)
    if answer.type_error is not None:
        raise PrometheusQueryError(answer.type_error)
    if not answer.results:
        if ignore_null_values:
            return 0.0
        raise PrometheusQueryError(
            "prometheus metrics 'prometheus' target may be lost, the result is empty"
        )
    if len(answer.results) > 1:
        raise PrometheusQueryError(f"prometheus query {query} returned multiple elements")
    values = answer.results[0] or []
    if not values:
        if ignore_null_values:
            return 0.0
        raise PrometheusQueryError(
            "prometheus metrics 'prometheus' target may be lost, the value list is empty"
        )
    if len(values) < 2:
        raise PrometheusQueryError(f"prometheus query {query} didn't return enough values")
    sample = values[1]
    value = -1.0
    if sample is not None:
        if not isinstance(sample, str):
            raise PrometheusQueryPanicError(
                "the sample value is not a JSON string; KEDA's type assertion panics "
                "(interface conversion) and the operator restarts"
            )
        try:
            value = parse_go_float(sample)
        except GoSyntaxError as exc:
            raise PrometheusQueryError(str(exc)) from None
    if math.isinf(value) or math.isnan(value):
        if ignore_null_values:
            return 0.0
        raise PrometheusQueryError(f"prometheus query returns {_go_percent_f(value)}")
    return value


def _go_percent_f(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    return "+Inf" if value > 0 else "-Inf"


# --- what reaches the HPA ----------------------------------------------------------------


def metric_quantity(value: float) -> float:
    """The quantity KEDA hands on for a metric or target value (quantityFromFloat64):
    rounded to milli-units with ``%.3f``; NaN, ±Inf and negative values become 0."""
    if math.isnan(value) or math.isinf(value) or value < 0:
        return 0.0
    return float(f"{value:.3f}")


def metrics_and_activity(trigger: PrometheusTrigger, value: float) -> tuple[float, bool]:
    """GetMetricsAndActivity for a successful query: the metric value KEDA hands on
    (``metric_quantity``: milli precision, negative as 0) and whether the trigger is
    active (the raw value strictly above ``activationThreshold``)."""
    return metric_quantity(value), value > trigger.activation_threshold


def metric_target_type(metric_type: str | None) -> str:
    """GetMetricTargetType: an unset trigger ``metricType`` means AverageValue; Utilization
    is refused for external metrics; anything else is passed through."""
    if not metric_type:
        return "AverageValue"
    if metric_type == "Utilization":
        raise ValueError(
            "'Utilization' metric type is unsupported for external metrics, "
            "allowed values are 'Value' or 'AverageValue'"
        )
    return metric_type
