"""KEDA's prometheus scaler: metadata, answers, metric values and targets.

Tables ported from kedacore/keda 8b4f083 ``pkg/scalers/prometheus_scaler_test.go``
(testPromMetadata, prometheusMetricIdentifiers, testPrometheusAuthMetadata,
testPromQueryResult, TestPrometheusScalerCustomHeaders,
TestPrometheusScalerExecutePromQueryParameters, the GCP answer of
TestPrometheus_ExecutePromQuery_WithGcpNativeAuthentication),
``pkg/scalers/scaler_test.go`` (TestGetMetricTargetType, TestGetMetricTargetMili,
TestGenerateMetricInMili) and ``pkg/scalers/scalersconfig/typed_config_test.go``
(TestDurationParsing, TestMap, TestEnum, TestExclusive as they apply to this trigger).
Each case keeps upstream's name or its table and index; where upstream asserts only
success or failure, the field values checked come from reading the metadata through
prometheusMetadata's struct tags (noted per case).
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from gpuscale.controllers.keda import (
    PrometheusQueryError,
    PrometheusQueryPanicError,
    TriggerError,
    metric_quantity,
    metric_target_type,
    metrics_and_activity,
    parse_prometheus_response,
    parse_prometheus_trigger,
)
from gpuscale.errors import InputError

from ._upstream import KEDA_PROMETHEUS_TEST, KEDA_SCALER_TEST, KEDA_TYPED_CONFIG_TEST

BASE = {
    "serverAddress": "http://localhost:9090",
    "metricName": "http_requests_total",
    "threshold": "100",
    "query": "up",
}

# prometheus_scaler_test.go testPromMetadata: (index, comment, metadata, isError)
TEST_PROM_METADATA = [
    (0, "empty metadata", {}, True),
    (1, "all properly formed", BASE, False),
    (
        2,
        "all properly formed, with namespace",
        {
            "serverAddress": "http://localhost:9090",
            "threshold": "100",
            "query": "up",
            "namespace": "foo",
        },
        False,
    ),
    (3, "all properly formed, with ignoreNullValues", {**BASE, "ignoreNullValues": "false"}, False),
    (
        4,
        "all properly formed, with activationThreshold",
        {**BASE, "activationThreshold": "50"},
        False,
    ),
    (5, "missing serverAddress", {**BASE, "serverAddress": ""}, True),
    (6, "missing threshold", {k: v for k, v in BASE.items() if k != "threshold"}, True),
    (7, "malformed threshold", {**BASE, "threshold": "one"}, True),
    (8, "malformed threshold (activationThreshold)", {**BASE, "activationThreshold": "one"}, True),
    (9, "missing query", {**BASE, "query": ""}, True),
    (10, "ignoreNullValues with wrong value", {**BASE, "ignoreNullValues": "xxxx"}, True),
    (
        11,
        "unsafeSsl",
        {**BASE, "serverAddress": "https://localhost:9090", "unsafeSsl": "true"},
        False,
    ),
    (12, "customHeaders", {**BASE, "customHeaders": "key1=value1,key2=value2"}, False),
    (13, "customHeaders with wrong format", {**BASE, "customHeaders": "key1=value1,key2"}, True),
    (14, "queryParameters", {**BASE, "queryParameters": "key1=value1,key2=value2"}, False),
    (
        15,
        "queryParameters with wrong format",
        {**BASE, "queryParameters": "key1=value1,key2"},
        True,
    ),
    (16, "valid custom http client timeout", {**BASE, "timeout": "1000"}, False),
    (17, "invalid - negative - custom http client timeout", {**BASE, "timeout": "-1"}, True),
    (
        18,
        "invalid - not a number - custom http client timeout with milliseconds",
        {**BASE, "timeout": "a"},
        True,
    ),
]


@pytest.mark.upstream(KEDA_PROMETHEUS_TEST, test="TestPrometheusParseMetadata")
@pytest.mark.parametrize(
    ("index", "comment", "metadata", "is_error"),
    TEST_PROM_METADATA,
    ids=[f"testPromMetadata[{row[0]}] {row[1]}" for row in TEST_PROM_METADATA],
)
def test_TestPrometheusParseMetadata(
    index: int, comment: str, metadata: dict[str, str], is_error: bool
) -> None:
    if is_error:
        with pytest.raises(TriggerError):
            parse_prometheus_trigger(metadata)
    else:
        trigger = parse_prometheus_trigger(metadata)
        assert trigger.server_address == metadata["serverAddress"]
        assert trigger.query == metadata["query"]


def test_testPromMetadata_fields_read_off_struct_tags() -> None:
    """Values of the successful rows as prometheusMetadata's keda tags define them
    (defaults: activationThreshold 0, ignoreNullValues true, unsafeSsl false)."""
    plain = parse_prometheus_trigger(BASE)
    assert (plain.threshold, plain.activation_threshold) == (100.0, 0.0)
    assert plain.ignore_null_values is True
    assert plain.unsafe_ssl is False
    assert plain.namespace == ""
    assert plain.timeout_ms is None
    assert plain.auth_modes == ()
    assert parse_prometheus_trigger(TEST_PROM_METADATA[2][2]).namespace == "foo"
    assert parse_prometheus_trigger(TEST_PROM_METADATA[3][2]).ignore_null_values is False
    assert parse_prometheus_trigger(TEST_PROM_METADATA[4][2]).activation_threshold == 50.0
    assert parse_prometheus_trigger(TEST_PROM_METADATA[11][2]).unsafe_ssl is True
    assert parse_prometheus_trigger(TEST_PROM_METADATA[12][2]).custom_headers == {
        "key1": "value1",
        "key2": "value2",
    }
    assert parse_prometheus_trigger(TEST_PROM_METADATA[14][2]).query_parameters == {
        "key1": "value1",
        "key2": "value2",
    }
    assert parse_prometheus_trigger(TEST_PROM_METADATA[16][2]).timeout_ms == 1000.0


@pytest.mark.upstream(KEDA_PROMETHEUS_TEST, test="TestPrometheusGetMetricSpecForScaling")
@pytest.mark.parametrize(("trigger_index", "name"), [(0, "s0-prometheus"), (1, "s1-prometheus")])
def test_TestPrometheusGetMetricSpecForScaling(trigger_index: int, name: str) -> None:
    """prometheusMetricIdentifiers: testPromMetadata[1] at trigger index 0 and 1."""
    assert parse_prometheus_trigger(BASE, trigger_index=trigger_index).metric_name == name


AUTH_BASE = {**BASE}
# prometheus_scaler_test.go testPrometheusAuthMetadata:
# (index, comment, authModes, authParams, podIdentityProvider, isError)
TEST_PROMETHEUS_AUTH_METADATA = [
    (0, "success TLS", "tls", {"ca": "caaa", "cert": "ceert", "key": "keey"}, "", False),
    (1, "TLS, ca is optional", "tls", {"cert": "ceert", "key": "keey"}, "", False),
    (2, "fail TLS, key not given", "tls", {"ca": "caaa", "cert": "ceert"}, "", True),
    (3, "fail TLS, cert not given", "tls", {"ca": "caaa", "key": "keey"}, "", True),
    (4, "success bearer default", "bearer", {"bearerToken": "tooooken"}, "", False),
    (5, "fail bearerAuth with no token", "bearer", {}, "", True),
    (6, "success basicAuth", "basic", {"username": "user", "password": "pass"}, "", False),
    (7, "fail basicAuth with no username", "basic", {}, "", True),
    (
        8,
        "(no comment) tls, basic with all params",
        "tls, basic",
        {"ca": "caaa", "cert": "ceert", "key": "keey", "username": "user", "password": "pass"},
        "",
        False,
    ),
    (
        9,
        "(no comment) tls,basic without tls params",
        "tls,basic",
        {"username": "user", "password": "pass"},
        "",
        True,
    ),
    (
        10,
        "success custom auth",
        "custom",
        {"customAuthHeader": "header", "customAuthValue": "value"},
        "",
        False,
    ),
    (11, "fail custom auth with no customAuthHeader", "custom", {"customAuthHeader": ""}, "", True),
    (12, "fail custom auth with no customAuthValue", "custom", {"customAuthValue": ""}, "", True),
    (
        13,
        "success custom auth with newlines in customAuthHeader",
        "custom",
        {"customAuthHeader": "header\n", "customAuthValue": "value\n"},
        "",
        False,
    ),
    (
        14,
        "(no comment) tls,basic without tls params (repeated row)",
        "tls,basic",
        {"username": "user", "password": "pass"},
        "",
        True,
    ),
    (
        15,
        "pod identity and other auth modes enabled together",
        "basic",
        {"username": "user", "password": "pass"},
        "azure-workload",
        True,
    ),
    (16, "azure workload identity", None, None, "azure-workload", False),
    (17, "azure pod identity", None, None, "azure", False),
]


@pytest.mark.upstream(KEDA_PROMETHEUS_TEST, test="TestPrometheusScalerAuthParams")
@pytest.mark.parametrize(
    "row",
    TEST_PROMETHEUS_AUTH_METADATA,
    ids=[f"testPrometheusAuthMetadata[{row[0]}] {row[1]}" for row in TEST_PROMETHEUS_AUTH_METADATA],
)
def test_TestPrometheusScalerAuthParams(row: tuple[Any, ...]) -> None:
    _, _, modes, auth_params, provider, is_error = row
    metadata = dict(AUTH_BASE) if modes is None else {**AUTH_BASE, "authModes": modes}
    if is_error:
        with pytest.raises(TriggerError):
            parse_prometheus_trigger(metadata, auth_params, pod_identity_provider=provider)
        return
    trigger = parse_prometheus_trigger(metadata, auth_params, pod_identity_provider=provider)
    for mode in trigger.auth_modes:
        assert mode in (modes or "")  # upstream: every enabled mode is among those written
    written = tuple(m.strip() for m in modes.split(",")) if modes else ()
    assert trigger.auth_modes == written


def test_auth_newlines_are_trimmed_and_secrets_stay_out_of_repr() -> None:
    trigger = parse_prometheus_trigger(
        {**AUTH_BASE, "authModes": "custom"},
        {"customAuthHeader": "header\n", "customAuthValue": "value\n"},
    )
    assert trigger.auth.custom_auth_header == "header"
    assert trigger.auth.custom_auth_value == "value"
    bearer = parse_prometheus_trigger(
        {**AUTH_BASE, "authModes": "bearer"}, {"bearerToken": "s3cr3t-token"}
    )
    assert bearer.auth.bearer_token == "s3cr3t-token"
    assert "s3cr3t-token" not in repr(bearer)


@pytest.mark.parametrize(
    ("metadata", "auth_params", "problem"),
    [
        ({"authModes": "tls,foo"}, {}, "must be one of [apiKey basic tls bearer custom oauth]"),
        (
            {"authModes": "bearer,basic"},
            {"bearerToken": "t", "username": "u"},
            "must contain only one of [bearer basic oauth]",
        ),
        ({"authModes": "tls,"}, {"cert": "c", "key": "k"}, "must be one of"),
        ({"method": "post"}, {}, 'parameter "method" value "post" must be one of [header query]'),
        ({"authModes": "apiKey"}, {}, "apiKey is required when apiKey auth is enabled"),
        (
            {"authModes": "oauth"},
            {"clientID": "id"},
            "oauthTokenURI=<empty> and clientID=<present>",
        ),
        ({}, {"authModes": "basic"}, "username=<empty> is required when basic auth is enabled"),
        ({"authMode": "bearer"}, {}, "bearer token=<empty> is required"),
        (
            {"authModes": "oauth"},
            {"oauthTokenURI": "http://t", "clientID": "id", "endpointParams": "a=%zz"},
            "invalid URL escape",
        ),
    ],
    ids=[
        "TestEnum-unknown-mode",
        "TestExclusive-bearer-basic",
        "trailing-comma",
        "apikey-method-enum",
        "apikey-missing",
        "oauth-missing-uri",
        "authModes-from-auth-params",
        "authMode-alias",
        "endpointParams-escape",
    ],
)
def test_auth_config_validation(
    metadata: dict[str, str], auth_params: dict[str, str], problem: str
) -> None:
    """authentication.Config through the typed config (TestEnum, TestExclusive,
    TestMultiName, TestURLValues semantics) and Config.Validate."""
    with pytest.raises(TriggerError) as caught:
        parse_prometheus_trigger({**AUTH_BASE, **metadata}, auth_params)
    assert problem in caught.value.message


def test_trigger_error_is_an_input_error_with_where_and_fix() -> None:
    with pytest.raises(TriggerError) as caught:
        parse_prometheus_trigger(
            {**BASE, "threshold": "one"}, key_path=("spec", "triggers", 0, "metadata")
        )
    error = caught.value
    assert isinstance(error, InputError)
    assert isinstance(error, ValueError)
    assert error.key_path == ("spec", "triggers", 0, "metadata", "threshold")
    assert error.where == "spec.triggers[0].metadata.threshold"
    assert error.fix
    assert "\n" not in str(error)


@pytest.mark.parametrize(
    ("timeout", "milliseconds"),
    [
        ("1000", 1000.0),
        ("30s", 30000.0),
        ("0", 0.0),
        ("1.5s", 1500.0),
        ("250ms", 250.0),
        ("+5", 5.0),
        ("2m", 120000.0),
    ],
    ids=[
        "TestDurationParsing-numeric",
        "TestDurationParsing-duration",
        "TestDurationParsing-zero",
        "fractional",
        "ms",
        "signed-int",
        "minutes",
    ],
)
def test_timeout(timeout: str, milliseconds: float) -> None:
    assert parse_prometheus_trigger({**BASE, "timeout": timeout}).timeout_ms == milliseconds


@pytest.mark.parametrize("timeout", ["-1", "-1s", "a", "1.5", "1 s", "1d"])
def test_timeout_rejected(timeout: str) -> None:
    with pytest.raises(TriggerError):
        parse_prometheus_trigger({**BASE, "timeout": timeout})


@pytest.mark.parametrize(
    ("threshold", "value"),
    [("100", 100.0), ("1e2", 100.0), ("-5", -5.0), ("0.5", 0.5), (" 80 ", 80.0), ("1.0e+2", 100.0)],
)
def test_threshold_is_a_json_number(threshold: str, value: float) -> None:
    assert parse_prometheus_trigger({**BASE, "threshold": threshold}).threshold == value


@pytest.mark.parametrize(
    "threshold",
    ["+1", ".5", "1.", "01", "NaN", "Infinity", "null", "1e309", '"5"', "1_0", "0x10", "   "],
)
def test_threshold_rejected(threshold: str) -> None:
    with pytest.raises(TriggerError):
        parse_prometheus_trigger({**BASE, "threshold": threshold})


@pytest.mark.parametrize(
    ("text", "expected"),
    [("true", True), ("1", True), ("T", True), ("False", False), ("0", False), ("f", False)],
)
def test_ignore_null_values_go_booleans(text: str, expected: bool) -> None:
    assert (
        parse_prometheus_trigger({**BASE, "ignoreNullValues": text}).ignore_null_values is expected
    )


@pytest.mark.parametrize("text", ["yes", "tRue", "on", "2"])
def test_ignore_null_values_rejects_non_go_booleans(text: str) -> None:
    with pytest.raises(TriggerError):
        parse_prometheus_trigger({**BASE, "ignoreNullValues": text})


def test_blank_values_count_as_absent() -> None:
    """configParamValue trims and ignores empty values: a blank ignoreNullValues keeps the
    default, a blank query is missing."""
    assert parse_prometheus_trigger({**BASE, "ignoreNullValues": "  "}).ignore_null_values is True
    with pytest.raises(TriggerError):
        parse_prometheus_trigger({**BASE, "query": " \t"})


@pytest.mark.upstream(KEDA_TYPED_CONFIG_TEST, test="TestMap")
def test_TestMap_semantics_for_custom_headers() -> None:
    trigger = parse_prometheus_trigger({**BASE, "customHeaders": " X-A = 1 , X-B=2"})
    assert trigger.custom_headers == {"X-A": "1", "X-B": "2"}
    for bad in ("a=b=c", "a=b,", "=,", "key1=value1,key2"):
        with pytest.raises(TriggerError):
            parse_prometheus_trigger({**BASE, "customHeaders": bad})


def test_all_problems_are_reported_together() -> None:
    """parseTypedConfig joins every field's error (errors.Join)."""
    with pytest.raises(TriggerError) as caught:
        parse_prometheus_trigger({})
    message = caught.value.message
    for key in ("serverAddress", "query", "threshold"):
        assert f'"{key}"' in message


# prometheus_scaler_test.go testPromQueryResult:
# (name, body, status, expected value, isError, ignoreNullValues)
TEST_PROM_QUERY_RESULT = [
    ("no results", "{}", 200, 0.0, False, True),
    ("no values", '{"data":{"result":[]}}', 200, 0.0, False, True),
    ("no values but shouldn't ignore", '{"data":{"result":[]}}', 200, -1.0, True, False),
    ("value is empty list", '{"data":{"result":[{"value": []}]}}', 200, 0.0, False, True),
    (
        "value is empty list but shouldn't ignore",
        '{"data":{"result":[{"value": []}]}}',
        200,
        -1.0,
        True,
        False,
    ),
    ("valid value", '{"data":{"result":[{"value": ["1", "2"]}]}}', 200, 2.0, False, True),
    ("not enough values", '{"data":{"result":[{"value": ["1"]}]}}', 200, -1.0, True, True),
    ("multiple results", '{"data":{"result":[{},{}]}}', 200, -1.0, True, True),
    ("error status response", "{}", 400, -1.0, True, True),
    ("+Inf", '{"data":{"result":[{"value": ["1", "+Inf"]}]}}', 200, 0.0, False, True),
    (
        "+Inf but shouldn't ignore ",
        '{"data":{"result":[{"value": ["1", "+Inf"]}]}}',
        200,
        -1.0,
        True,
        False,
    ),
    ("-Inf", '{"data":{"result":[{"value": ["1", "-Inf"]}]}}', 200, 0.0, False, True),
    (
        "-Inf but shouldn't ignore ",
        '{"data":{"result":[{"value": ["1", "-Inf"]}]}}',
        200,
        -1.0,
        True,
        False,
    ),
    ("NaN", '{"data":{"result":[{"value": ["1", "NaN"]}]}}', 200, 0.0, False, True),
    (
        "NaN but shouldn't ignore ",
        '{"data":{"result":[{"value": ["1", "NaN"]}]}}',
        200,
        -1.0,
        True,
        False,
    ),
]


@pytest.mark.upstream(KEDA_PROMETHEUS_TEST, test="TestPrometheusScalerExecutePromQuery")
@pytest.mark.parametrize(
    "row", TEST_PROM_QUERY_RESULT, ids=[row[0] for row in TEST_PROM_QUERY_RESULT]
)
def test_TestPrometheusScalerExecutePromQuery(row: tuple[Any, ...]) -> None:
    _, body, status, expected, is_error, ignore_null = row
    if is_error:
        with pytest.raises(PrometheusQueryError):
            parse_prometheus_response(body, status, ignore_null_values=ignore_null)
    else:
        assert parse_prometheus_response(body, status, ignore_null_values=ignore_null) == expected


@pytest.mark.upstream(KEDA_PROMETHEUS_TEST, test="TestPrometheusScalerCustomHeaders")
@pytest.mark.upstream(KEDA_PROMETHEUS_TEST, test="TestPrometheusScalerExecutePromQueryParameters")
def test_TestPrometheusScalerCustomHeaders_and_QueryParameters_answer() -> None:
    """Both tests answer ``{"data":{"result":[]}}`` with ignoreNullValues and expect no error."""
    assert parse_prometheus_response('{"data":{"result":[]}}', 200, ignore_null_values=True) == 0.0


@pytest.mark.upstream(
    KEDA_PROMETHEUS_TEST, test="TestPrometheusScaler_ExecutePromQuery_WithGcpNativeAuthentication"
)
def test_TestPrometheusScaler_ExecutePromQuery_WithGcpNativeAuthentication_answer() -> None:
    body = (
        '{"status":"success","data":{"resultType":"vector","result":'
        '[{"metric":{},"value":[1686063687,"777"]}]}}'
    )
    assert parse_prometheus_response(body.encode()) == 777.0


@pytest.mark.parametrize(
    ("body", "ignore_null", "expected"),
    [
        ('{"data":{"result":[{"value":[1,"-1.5"]}]}}', True, -1.5),
        ('{"data":{"result":[{"value":[1,null]}]}}', True, -1.0),
        ('{"data":{"result":[{"value":[1,null]}]}}', False, -1.0),
        ('{"Data":{"Result":[{"VALUE":[1,"7"]}]}}', True, 7.0),
        (
            '{"data":{"result":[{"metric":{"pod":"a"},"value":[1.5,"160"]}]},"status":"success"}',
            True,
            160.0,
        ),
        ('{"data":{"result":[{"value":[1,"2","3"]}]}}', True, 2.0),
        ("null", False, None),
        ('{"data":{"result":[null]}}', True, 0.0),
        ('{"data":{"result":[{"value":[1,"0x1p-2"]}]}}', True, 0.25),
        ('{"other":1e400,"data":{"result":[{"value":[1,"2"]}]}}', True, 2.0),
    ],
    ids=[
        "negative-kept",
        "null-sample-is-minus-one",
        "null-sample-even-strict",
        "case-insensitive-keys",
        "vector-with-labels",
        "extra-values-ignored",
        "null-body-strict-errors",
        "null-series-has-no-values",
        "go-hex-float",
        "unknown-field-not-decoded",
    ],
)
def test_answers_beyond_upstream_tables(
    body: str, ignore_null: bool, expected: float | None
) -> None:
    """Corners of json.Unmarshal into promQueryResult and of ExecutePromQuery's chain,
    pinned by the Go oracle table (see test_keda_goparse)."""
    if expected is None:
        with pytest.raises(PrometheusQueryError):
            parse_prometheus_response(body, ignore_null_values=ignore_null)
    else:
        assert parse_prometheus_response(body, ignore_null_values=ignore_null) == expected


@pytest.mark.parametrize(
    "body",
    [
        '{"status":"success","data":{"resultType":"scalar","result":[1,"5"]}}',
        '{"data":{"result":[{"value":[1,NaN]}]}}',
        '{"data":{"result":[{"value":"12"}]}}',
        '{"data":{"result":[{"value":[1e400,"2"]}]}}',
        '{"data":{"result":[{"value":[1,"1e999"]}]}}',
        '{"data":{"result":[{"value":[1," 2"]}]}}',
        '{"status":5}',
        "",
        "not json",
    ],
    ids=[
        "scalar-result-type",
        "bare-NaN-literal",
        "value-not-array",
        "number-overflow",
        "sample-overflow",
        "sample-with-space",
        "status-not-string",
        "empty-body",
        "not-json",
    ],
)
def test_answers_that_fail(body: str) -> None:
    with pytest.raises(PrometheusQueryError):
        parse_prometheus_response(body)


@pytest.mark.parametrize("status", [199, 300, 404, 500, 503])
def test_non_2xx_status_fails(status: int) -> None:
    with pytest.raises(PrometheusQueryError, match=f"status: {status}"):
        parse_prometheus_response('{"data":{"result":[{"value":[1,"2"]}]}}', status)


def test_2xx_status_passes() -> None:
    assert parse_prometheus_response('{"data":{"result":[{"value":[1,"2"]}]}}', 204) == 2.0


@pytest.mark.parametrize("sample", ["2", "true", "[1]", "{}"])
def test_non_string_sample_panics_upstream(sample: str) -> None:
    with pytest.raises(PrometheusQueryPanicError):
        parse_prometheus_response(f'{{"data":{{"result":[{{"value":[1,{sample}]}}]}}}}')


def test_multiple_elements_message_names_the_query() -> None:
    with pytest.raises(
        PrometheusQueryError, match="prometheus query up returned multiple elements"
    ):
        parse_prometheus_response('{"data":{"result":[{},{}]}}', query="up")


# scaler_test.go TestGetMetricTargetType: (name, metricType, expected, isError)
@pytest.mark.upstream(KEDA_SCALER_TEST, test="TestGetMetricTargetType")
@pytest.mark.parametrize(
    ("name", "metric_type", "expected", "is_error"),
    [
        ("utilization metric type", "Utilization", "", True),
        ("average value metric type", "AverageValue", "AverageValue", False),
        ("value metric type", "Value", "Value", False),
        ("no metric type", "", "AverageValue", False),
    ],
)
def test_TestGetMetricTargetType(
    name: str, metric_type: str, expected: str, is_error: bool
) -> None:
    if is_error:
        with pytest.raises(ValueError, match="'Utilization' metric type is unsupported"):
            metric_target_type(metric_type)
    else:
        assert metric_target_type(metric_type) == expected


# scaler_test.go TestGetMetricTargetMili / TestGenerateMetricInMili share the cases and the
# rule: NaN, Inf and negatives give a zero quantity, the rest a positive one.
MILLI_CASES = [
    ("small value", 42.5),
    ("large value exceeding int64 milli threshold", 1e18),
    ("value just above int64 milli overflow threshold", 9.3e15),
    ("NaN treated as zero", math.nan),
    ("positive Inf treated as zero", math.inf),
    ("negative value treated as zero", -1.0),
    ("large negative value treated as zero", -9.3e15),
]


@pytest.mark.upstream(KEDA_SCALER_TEST, test="TestGetMetricTargetMili")
@pytest.mark.parametrize(("name", "value"), MILLI_CASES, ids=[c[0] for c in MILLI_CASES])
def test_TestGenerateMetricInMili(name: str, value: float) -> None:
    quantity = metric_quantity(value)
    if math.isnan(value) or math.isinf(value) or value < 0:
        assert quantity == 0.0
    else:
        assert quantity > 0
        assert quantity == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize(
    ("value", "quantity"),
    [
        (0.0004, 0.0),
        (0.0005, 0.001),
        (1.2345, 1.234),
        (1.2355, 1.236),
        (80.0, 80.0),
        (2.0 / 3.0, 0.667),
    ],
)
def test_metric_quantity_rounds_like_percent_3f(value: float, quantity: float) -> None:
    """fmt.Sprintf("%.3f") rounds the exact binary value to nearest (1.2345 is below half)."""
    assert metric_quantity(value) == quantity


@pytest.mark.parametrize(
    ("value", "activation", "active"),
    [
        (0.0, 0.0, False),
        (0.001, 0.0, True),
        (50.0, 50.0, False),
        (50.001, 50.0, True),
        (-1.0, -2.0, True),
        (-3.0, -2.0, False),
        (math.nan, 0.0, False),
        (160.0, 0.0, True),
    ],
)
def test_activity_is_strictly_above_activation_threshold(
    value: float, activation: float, active: bool
) -> None:
    trigger = parse_prometheus_trigger({**BASE, "activationThreshold": repr(activation)})
    handed_on, is_active = metrics_and_activity(trigger, value)
    assert is_active is active
    assert handed_on == metric_quantity(value)


def test_negative_value_reaches_the_hpa_as_zero_but_can_be_active() -> None:
    trigger = parse_prometheus_trigger({**BASE, "activationThreshold": "-5"})
    assert metrics_and_activity(trigger, -1.0) == (0.0, True)
