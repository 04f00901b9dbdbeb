"""Cases transcribed from Prometheus' own PromQL tests, for each version the engine follows.

Sources: promql/testdata/*.test at v2.42.0 (version "2") and
promql/promqltest/testdata/*.test at v3.5.0 (version "3"). Each case keeps the upstream
file's name and the subject of the block; loads and expected values are upstream's, in the
notation ``promqltest.py`` runs (a few metric names are shortened to fit our line length).
Where the two releases expect different answers for the same data and query, the case says
so: these are Prometheus 3's documented changes (left-open range selectors and lookback,
rate's zero-point clamp), checked from upstream's own expectations rather than from our
reading of them.

These complement the differential suite: they cover staleness markers (which backfilled
OpenMetrics cannot carry) and the 3.x behaviour (which no server here runs).
"""

from __future__ import annotations

import pytest

from tests.unit.promql.promqltest import run_script

BOTH = ("2", "3")

CASES: list[tuple[str, tuple[str, ...], str]] = [
    (
        "staleness.test: instant vectors skip staleness markers (2.42: lookback closed)",
        ("2",),
        """
load 10s
  metric 0 1 stale 2
eval instant at 10s metric
  {__name__="metric"} 1
eval instant at 20s metric
eval instant at 30s metric
  {__name__="metric"} 2
eval instant at 330s metric
  {__name__="metric"} 2
eval instant at 331s metric
eval instant at 30s count_over_time(metric[1m])
  {} 3
eval instant at 10s count_over_time(metric[1s])
  {} 1
eval instant at 20s count_over_time(metric[1s])
eval instant at 20s count_over_time(metric[10s])
  {} 1
""",
    ),
    (
        "staleness.test: instant vectors skip staleness markers (3.x: lookback left-open)",
        ("3",),
        """
load 10s
  metric 0 1 stale 2
eval instant at 10s metric
  {__name__="metric"} 1
eval instant at 20s metric
eval instant at 30s metric
  {__name__="metric"} 2
eval instant at 329s metric
  {__name__="metric"} 2
eval instant at 330s metric
eval instant at 30s count_over_time(metric[1m])
  {} 3
eval instant at 10s count_over_time(metric[1s])
  {} 1
eval instant at 20s count_over_time(metric[1s])
eval instant at 20s count_over_time(metric[10s])
eval instant at 20s count_over_time(metric[20s])
  {} 1
""",
    ),
    (
        "staleness.test: a single sample goes stale after the lookback (2.42)",
        ("2",),
        """
load 10s
  metric 0
eval instant at 0s metric
  {__name__="metric"} 0
eval instant at 300s metric
  {__name__="metric"} 0
eval instant at 301s metric
""",
    ),
    (
        "staleness.test: a single sample goes stale after the lookback (3.x)",
        ("3",),
        """
load 10s
  metric 0
eval instant at 0s metric
  {__name__="metric"} 0
eval instant at 299s metric
  {__name__="metric"} 0
eval instant at 300s metric
""",
    ),
    (
        "subquery.test: evaluation before 0s and after staleness (2.42)",
        ("2",),
        """
load 10s
  metric 1 2
eval instant at 10s sum_over_time(metric[50s:10s])
  {} 3
eval instant at 10s sum_over_time(metric[50s:5s])
  {} 4
eval instant at 5m sum_over_time(metric[50s:10s])
  {} 12
eval instant at 6m sum_over_time(metric[50s:10s])
  {} 2
eval instant at 10s rate(metric[20s:10s])
  {} 0.1
eval instant at 20s rate(metric[20s:5s])
  {} 0.05
""",
    ),
    (
        "subquery.test: evaluation before 0s and after staleness (3.x: left-open windows)",
        ("3",),
        """
load 10s
  metric_total 1 2
eval instant at 10s sum_over_time(metric_total[50s:10s])
  {} 3
eval instant at 10s sum_over_time(metric_total[50s:5s])
  {} 4
eval instant at 5m sum_over_time(metric_total[50s:10s])
  {} 10
eval instant at 5m59s sum_over_time(metric_total[60s:10s])
  {} 2
eval instant at 10s rate(metric_total[20s:10s])
  {} 0.1
eval instant at 20s rate(metric_total[20s:5s])
  {} 0.06666666666666667
""",
    ),
    (
        "subquery.test: step alignment of subqueries (2.42)",
        ("2",),
        """
load 10s
  metric1 0+1x1000
eval instant at 1000s sum_over_time(metric1[30s:10s])
  {} 394
eval instant at 1000s sum_over_time(metric1[30s:5s])
  {} 688
eval instant at 1010s sum_over_time(metric1[30s:10s] offset 10s)
  {} 394
eval instant at 1010s sum_over_time(metric1[30s:10s] offset 3s)
  {} 297
""",
    ),
    (
        "subquery.test: step alignment of subqueries (3.x: the step at the window start is out)",
        ("3",),
        """
load 10s
  metric1_total 0+1x1000
eval instant at 1000s sum_over_time(metric1_total[30s:10s])
  {} 297
eval instant at 1000s sum_over_time(metric1_total[30s:5s])
  {} 591
eval instant at 1010s sum_over_time(metric1_total[30s:10s] offset 10s)
  {} 297
eval instant at 1010s sum_over_time(metric1_total[30s:10s] offset 3s)
  {} 297
""",
    ),
    (
        "functions.test: rate's zero cutoff for left-side extrapolation (2.42)",
        ("2",),
        """
load 4m
  z{start="0m"} 0+240x10
  z{start="1m"} 60+240x10
  z{start="2m"} 120+240x10
  z{start="3m"} 180+240x10
  z{start="4m"} 240+240x10
  z{start="5m"} 300+240x10
eval instant at 10m rate(z[20m])
  {start="0m"} 0.5
  {start="1m"} 0.55
  {start="2m"} 0.6
  {start="3m"} 0.65
  {start="4m"} 0.7
  {start="5m"} 0.6
eval instant at 50m rate(z[20m])
  {start="0m"} 0.6
  {start="1m"} 0.6
  {start="2m"} 0.6
  {start="3m"} 0.6
  {start="4m"} 0.6
  {start="5m"} 0.6
""",
    ),
    (
        "functions.test: rate's zero cutoff only up to half an interval (3.x)",
        ("3",),
        """
load 4m
  z{start="0m"} 0+240x10
  z{start="1m"} 60+240x10
  z{start="2m"} 120+240x10
  z{start="3m"} 180+240x10
  z{start="4m"} 240+240x10
  z{start="5m"} 300+240x10
eval instant at 10m rate(z[20m])
  {start="0m"} 0.5
  {start="1m"} 0.55
  {start="2m"} 0.6
  {start="3m"} 0.6
  {start="4m"} 0.6
  {start="5m"} 0.6
""",
    ),
    (
        "functions.test: resets() and changes() (2.42: the sample at the window start counts)",
        ("2",),
        """
load 5m
  http_requests{path="/foo"} 1 2 3 0 1 0 0 1 2 0
  http_requests{path="/bar"} 1 2 3 4 5 1 2 3 4 5
  http_requests{path="/biz"} 0 0 0 0 0 1 1 1 1 1
eval instant at 50m resets(http_requests[20m])
  {path="/foo"} 1
  {path="/bar"} 0
  {path="/biz"} 0
eval instant at 50m resets(http_requests[30m])
  {path="/foo"} 2
  {path="/bar"} 1
  {path="/biz"} 0
eval instant at 50m changes(http_requests[50m])
  {path="/foo"} 8
  {path="/bar"} 9
  {path="/biz"} 1
eval instant at 50m changes(nonexistent_metric[50m])
""",
    ),
    (
        "functions.test: resets() and changes() (3.x: it does not)",
        ("3",),
        """
load 5m
  http_requests{path="/foo"} 1 2 3 0 1 0 0 1 2 0
  http_requests{path="/bar"} 1 2 3 4 5 1 2 3 4 5
  http_requests{path="/biz"} 0 0 0 0 0 1 1 1 1 1
eval instant at 50m resets(http_requests[20m])
  {path="/foo"} 1
  {path="/bar"} 0
  {path="/biz"} 0
eval instant at 50m resets(http_requests[30m])
  {path="/foo"} 1
  {path="/bar"} 0
  {path="/biz"} 0
eval instant at 50m resets(http_requests[32m])
  {path="/foo"} 2
  {path="/bar"} 1
  {path="/biz"} 0
eval instant at 50m changes(http_requests[50m])
  {path="/foo"} 7
  {path="/bar"} 8
  {path="/biz"} 1
eval instant at 50m changes(nonexistent_metric[50m])
""",
    ),
    (
        "functions.test: changes() counts NaN to NaN as no change (window widened to hold all)",
        BOTH,
        """
load 5m
  x{a="b"} NaN NaN NaN
  x{a="c"} 0 NaN 0
eval instant at 15m changes(x[20m])
  {a="b"} 0
  {a="c"} 2
""",
    ),
    (
        "functions.test: increase() and rate() with counter resets (2.42)",
        ("2",),
        """
load 5m
  http_requests{path="/foo"} 0+10x10
  http_requests{path="/bar"} 0+10x5 0+10x5
eval instant at 50m increase(http_requests[50m])
  {path="/foo"} 100
  {path="/bar"} 90
eval instant at 50m increase(http_requests[100m])
  {path="/foo"} 100
  {path="/bar"} 90
clear
load 5m
  testcounter_reset_middle 0+10x4 0+10x5
  testcounter_reset_end 0+10x9 0 10
eval instant at 50m rate(testcounter_reset_middle[50m])
  {} 0.03
eval instant at 50m rate(testcounter_reset_end[5m])
  {} 0
""",
    ),
    (
        "functions.test: rate() with counter resets (3.x)",
        ("3",),
        """
load 5m
  testcounter_reset_middle_total 0+27x4 0+27x5
  testcounter_reset_end_total 0+10x9 0 10
eval instant at 50m rate(testcounter_reset_middle_total[50m])
  {} 0.08
eval instant at 50m rate(testcounter_reset_end_total[5m])
eval instant at 50m rate(testcounter_reset_end_total[6m])
  {} 0
""",
    ),
    (
        "functions.test: increase() with a reset inside the range",
        BOTH,
        """
load 5m
  http_requests{path="/foo"} 0 1 2 3 2 3 4
eval instant at 30m increase(http_requests[30m])
  {path="/foo"} 7
""",
    ),
    (
        "functions.test: irate(), delta() and idelta()",
        BOTH,
        """
load 5m
  http_requests{path="/foo"} 0+10x10
  http_requests{path="/bar"} 0+10x5 0+10x5
eval instant at 50m irate(http_requests[50m])
  {path="/foo"} .03333333333333333333
  {path="/bar"} .03333333333333333333
eval instant at 30m irate(http_requests[50m])
  {path="/foo"} .03333333333333333333
  {path="/bar"} 0
clear
load 5m
  http_requests{path="/foo"} 0 50 100 150
  http_requests{path="/bar"} 0 50 100 50
eval instant at 20m idelta(http_requests[20m])
  {path="/foo"} 50
  {path="/bar"} -50
""",
    ),
    (
        "functions.test: deriv() and predict_linear()",
        BOTH,
        """
load 5m
  testcounter_reset_middle 0+10x4 0+10x5
eval instant at 50m deriv(testcounter_reset_middle[100m])
  {} 0.010606060606060607
eval instant at 50m predict_linear(testcounter_reset_middle[100m], 3600)
  {} 76.81818181818181
eval instant at 50m predict_linear(testcounter_reset_middle[100m] @ 3000, 3600)
  {} 76.81818181818181
eval instant at 10m predict_linear(testcounter_reset_middle[100m] @ 3000, 3600)
  {} 51.36363636363637
""",
    ),
    (
        "functions.test: label_replace()",
        BOTH,
        """
load 5m
  tm{src="source-value-10",dst="original-destination-value"} 0
  tm{src="source-value-20",dst="original-destination-value"} 1
eval instant at 0m label_replace(tm, "dst", "destination-value-$1", "src", "source-value-(.*)")
  tm{src="source-value-10",dst="destination-value-10"} 0
  tm{src="source-value-20",dst="destination-value-20"} 1
eval instant at 0m label_replace(tm, "dst", "destination-value-$1", "src", "value-(.*)")
  tm{src="source-value-10",dst="original-destination-value"} 0
  tm{src="source-value-20",dst="original-destination-value"} 1
eval instant at 0m label_replace(tm, "dst", "", "dst", ".*")
  tm{src="source-value-10"} 0
  tm{src="source-value-20"} 1
eval instant at 0m label_replace(tm, "dst", "value-$2", "src", "(.*)-value-(.*)")
  tm{src="source-value-10",dst="value-10"} 0
  tm{src="source-value-20",dst="value-20"} 1
eval_fail instant at 0m label_replace(tm, "dst", "", "src", "(.*")
eval_fail instant at 0m label_replace(tm, "src", "", "", "")
""",
    ),
    (
        "functions.test: label_join()",
        BOTH,
        """
load 5m
  testmetric{src="a",src1="b",src2="c",dst="original-destination-value"} 0
  testmetric{src="d",src1="e",src2="f",dst="original-destination-value"} 1
eval instant at 0m label_join(testmetric, "dst", "-", "src", "src1", "src2")
  testmetric{src="a",src1="b",src2="c",dst="a-b-c"} 0
  testmetric{src="d",src1="e",src2="f",dst="d-e-f"} 1
eval instant at 0m label_join(testmetric, "dst", "", "emptysrc", "emptysrc1", "emptysrc2")
  testmetric{src="a",src1="b",src2="c"} 0
  testmetric{src="d",src1="e",src2="f"} 1
""",
    ),
    (
        "functions.test: clamp(), clamp_min(), clamp_max()",
        BOTH,
        """
load 5m
  test_clamp{src="clamp-a"} -50
  test_clamp{src="clamp-b"} 0
  test_clamp{src="clamp-c"} 100
eval instant at 0m clamp_max(test_clamp, 75)
  {src="clamp-a"} -50
  {src="clamp-b"} 0
  {src="clamp-c"} 75
eval instant at 0m clamp_min(test_clamp, -25)
  {src="clamp-a"} -25
  {src="clamp-b"} 0
  {src="clamp-c"} 100
eval instant at 0m clamp(test_clamp, -25, 75)
  {src="clamp-a"} -25
  {src="clamp-b"} 0
  {src="clamp-c"} 75
eval instant at 0m clamp(test_clamp, 5, -5)
""",
    ),
    (
        "functions.test: absent() and absent_over_time()",
        BOTH,
        """
load 5m
  http_requests{job="api-server", instance="0", group="production"} 0+10x10
eval instant at 50m absent(nonexistent)
  {} 1
eval instant at 50m absent(nonexistent{job="testjob", instance="testinstance", method=~".x"})
  {instance="testinstance", job="testjob"} 1
eval instant at 50m absent(http_requests)
eval instant at 50m absent(sum(nonexistent{job="testjob", instance="testinstance"}))
  {} 1
eval instant at 50m absent_over_time(http_requests[5m])
eval instant at 50m absent_over_time(nonexistent{job="x"}[5m])
  {job="x"} 1
""",
    ),
    (
        "functions.test: *_over_time() over a small window",
        BOTH,
        """
load 10s
  data{type="numbers"} 2 0 3
  data{type="some_nan"} 2 0 NaN
  data{type="some_nan2"} 2 NaN 1
  data{type="some_nan3"} NaN 0 1
  data{type="only_nan"} NaN NaN NaN
eval instant at 1m min_over_time(data[2m])
  {type="numbers"} 0
  {type="some_nan"} 0
  {type="some_nan2"} 1
  {type="some_nan3"} 0
  {type="only_nan"} NaN
eval instant at 1m max_over_time(data[2m])
  {type="numbers"} 3
  {type="some_nan"} 2
  {type="some_nan2"} 2
  {type="some_nan3"} 1
  {type="only_nan"} NaN
eval instant at 1m last_over_time(data[2m])
  data{type="numbers"} 3
  data{type="some_nan"} NaN
  data{type="some_nan2"} 1
  data{type="some_nan3"} 1
  data{type="only_nan"} NaN
""",
    ),
    (
        "functions.test: quantile_over_time()",
        BOTH,
        """
load 10s
  data{test="two samples"} 0 1
  data{test="three samples"} 0 1 2
  data{test="uneven samples"} 0 1 4
eval instant at 1m quantile_over_time(0.75, data[2m])
  {test="two samples"} 0.75
  {test="three samples"} 1.5
  {test="uneven samples"} 2.5
eval instant at 1m quantile_over_time(-1, data[2m])
  {test="two samples"} -Inf
  {test="three samples"} -Inf
  {test="uneven samples"} -Inf
""",
    ),
    (
        "aggregators.test: sum, avg, count, group and quantile by group",
        BOTH,
        """
load 5m
  http_requests{job="api-server", instance="0", group="production"} 0+10x10
  http_requests{job="api-server", instance="1", group="production"} 0+20x10
  http_requests{job="api-server", instance="0", group="canary"} 0+30x10
  http_requests{job="api-server", instance="1", group="canary"} 0+40x10
  http_requests{job="app-server", instance="0", group="production"} 0+50x10
  http_requests{job="app-server", instance="1", group="production"} 0+60x10
  http_requests{job="app-server", instance="0", group="canary"} 0+70x10
  http_requests{job="app-server", instance="1", group="canary"} 0+80x10
eval instant at 50m sum by (group) (http_requests{job="api-server"})
  {group="canary"} 700
  {group="production"} 300
eval instant at 50m avg by (group) (http_requests{job="api-server"})
  {group="canary"} 350
  {group="production"} 150
eval instant at 50m count by (group) (http_requests{job="api-server"})
  {group="canary"} 2
  {group="production"} 2
eval instant at 50m sum without (instance) (http_requests{job="api-server"})
  {group="canary", job="api-server"} 700
  {group="production", job="api-server"} 300
eval instant at 50m sum by (__name__) (http_requests{job="api-server"})
  {__name__="http_requests"} 1000
eval instant at 50m group by (job) (http_requests)
  {job="api-server"} 1
  {job="app-server"} 1
eval instant at 50m stddev(http_requests)
  {} 229.12878474779200
eval instant at 50m stdvar by (instance) (http_requests)
  {instance="0"} 50000
  {instance="1"} 50000
""",
    ),
    (
        "aggregators.test: topk and bottomk keep labels, in order",
        BOTH,
        """
load 5m
  http_requests{job="api-server", instance="0", group="production"} 0+10x10
  http_requests{job="api-server", instance="1", group="production"} 0+20x10
  http_requests{job="api-server", instance="0", group="canary"} 0+30x10
  http_requests{job="api-server", instance="1", group="canary"} 0+40x10
  http_requests{job="app-server", instance="0", group="production"} 0+50x10
  http_requests{job="app-server", instance="1", group="production"} 0+60x10
  http_requests{job="app-server", instance="0", group="canary"} 0+70x10
  http_requests{job="app-server", instance="1", group="canary"} 0+80x10
eval_ordered instant at 50m topk(3, http_requests)
  http_requests{group="canary", instance="1", job="app-server"} 800
  http_requests{group="canary", instance="0", job="app-server"} 700
  http_requests{group="production", instance="1", job="app-server"} 600
eval_ordered instant at 50m bottomk(3, http_requests)
  http_requests{group="production", instance="0", job="api-server"} 100
  http_requests{group="production", instance="1", job="api-server"} 200
  http_requests{group="canary", instance="0", job="api-server"} 300
eval instant at 50m topk by (group) (1, http_requests)
  http_requests{group="production", instance="1", job="app-server"} 600
  http_requests{group="canary", instance="1", job="app-server"} 800
eval_fail instant at 50m topk(NaN, http_requests)
""",
    ),
    (
        "aggregators.test: count_values()",
        BOTH,
        """
load 5m
  version{job="api-server", instance="0", group="production"} 6
  version{job="api-server", instance="1", group="production"} 6
  version{job="api-server", instance="2", group="production"} 6
  version{job="api-server", instance="0", group="canary"} 8
  version{job="api-server", instance="1", group="canary"} 7
eval instant at 1m count_values("version", version)
  {version="6"} 3
  {version="7"} 1
  {version="8"} 1
eval instant at 1m count_values without (instance)("version", version)
  {job="api-server", group="production", version="6"} 3
  {job="api-server", group="canary", version="8"} 1
  {job="api-server", group="canary", version="7"} 1
eval instant at 1m count_values by (job, group)("job", version)
  {job="6", group="production"} 3
  {job="8", group="canary"} 1
  {job="7", group="canary"} 1
""",
    ),
    (
        "aggregators.test: quantile()",
        BOTH,
        """
load 10s
  data{test="two samples",point="a"} 0
  data{test="two samples",point="b"} 1
  data{test="three samples",point="a"} 0
  data{test="three samples",point="b"} 1
  data{test="three samples",point="c"} 2
eval instant at 1m quantile without(point)(0.8, data)
  {test="two samples"} 0.8
  {test="three samples"} 1.6
eval instant at 1m quantile without(point)(2, data)
  {test="two samples"} +Inf
  {test="three samples"} +Inf
""",
    ),
    (
        "operators.test: arithmetic, comparisons, bool and set operators",
        BOTH,
        """
load 5m
  http_requests{job="api-server", instance="0", group="production"} 0+10x10
  http_requests{job="api-server", instance="1", group="production"} 0+20x10
  http_requests{job="api-server", instance="0", group="canary"} 0+30x10
  http_requests{job="api-server", instance="1", group="canary"} 0+40x10
  vm_a{l="x"} 0+1x100
  vm_a{l="y"} 0+2x50
eval instant at 50m SUM(http_requests) BY (job) - COUNT(http_requests) BY (job)
  {job="api-server"} 996
eval instant at 50m 2 - SUM(http_requests) BY (job)
  {job="api-server"} -998
eval instant at 50m -http_requests{job="api-server",instance="0",group="production"}
  {job="api-server",instance="0",group="production"} -100
eval instant at 50m http_requests{group="canary"} > bool 300
  {job="api-server",instance="0",group="canary"} 0
  {job="api-server",instance="1",group="canary"} 1
eval instant at 50m http_requests{group="canary"} > 300
  http_requests{job="api-server",instance="1",group="canary"} 400
eval instant at 50m (http_requests{group="canary"} + 1) or on(instance) (http_requests or vm_a)
  {group="canary", instance="0", job="api-server"} 301
  {group="canary", instance="1", job="api-server"} 401
  vm_a{l="x"} 10
  vm_a{l="y"} 20
eval instant at 50m http_requests{group="canary"} unless http_requests{instance="0"}
  http_requests{group="canary", instance="1", job="api-server"} 400
eval instant at 50m 2 ^ 3 ^ 2
  512
eval instant at 50m -2 ^ 2
  -4
""",
    ),
    (
        "histograms.test: histogram_quantile() over classic buckets",
        BOTH,
        """
load 5m
  testhistogram_bucket{le="0.1", start="positive"} 0+5x10
  testhistogram_bucket{le=".2", start="positive"} 0+7x10
  testhistogram_bucket{le="1e0", start="positive"} 0+11x10
  testhistogram_bucket{le="+Inf", start="positive"} 0+12x10
  testhistogram_bucket{le="-.2", start="negative"} 0+1x10
  testhistogram_bucket{le="-0.1", start="negative"} 0+2x10
  testhistogram_bucket{le="0.3", start="negative"} 0+2x10
  testhistogram_bucket{le="+Inf", start="negative"} 0+3x10
eval instant at 50m histogram_quantile(-0.1, testhistogram_bucket)
  {start="positive"} -Inf
  {start="negative"} -Inf
eval instant at 50m histogram_quantile(NaN, testhistogram_bucket)
  {start="positive"} NaN
  {start="negative"} NaN
eval instant at 50m histogram_quantile(0, testhistogram_bucket{start="negative"})
  {start="negative"} -0.2
eval instant at 50m histogram_quantile(0.2, testhistogram_bucket)
  {start="positive"} 0.048
  {start="negative"} -0.2
eval instant at 50m histogram_quantile(0.5, testhistogram_bucket)
  {start="positive"} 0.15
  {start="negative"} -0.15
eval instant at 50m histogram_quantile(0.8, testhistogram_bucket)
  {start="positive"} 0.72
  {start="negative"} 0.3
eval instant at 50m histogram_quantile(1, testhistogram_bucket)
  {start="positive"} 1
  {start="negative"} 0.3
eval instant at 50m histogram_quantile(1.01, testhistogram_bucket)
  {start="positive"} +Inf
  {start="negative"} +Inf
""",
    ),
    (
        "selectors.test: offsets and negative offsets",
        BOTH,
        """
load 10s
  http_requests{job="api-server", instance="0", group="production"} 0+10x1000 100+30x1000
  http_requests{job="api-server", instance="1", group="production"} 0+20x1000 200+30x1000
eval instant at 18000s rate(http_requests{instance!="3"}[1m] offset 10000s)
  {job="api-server", instance="0", group="production"} 1
  {job="api-server", instance="1", group="production"} 2
eval instant at 4000s rate(http_requests{instance!="3"}[1m] offset -4000s)
  {job="api-server", instance="0", group="production"} 1
  {job="api-server", instance="1", group="production"} 2
eval instant at 8000s rate(http_requests{group=~"(?i:PRO).*"}[1m])
  {job="api-server", instance="0", group="production"} 1
  {job="api-server", instance="1", group="production"} 2
eval instant at 8000s rate(http_requests{group=~"((?i)PRO).*"}[1m])
  {job="api-server", instance="0", group="production"} 1
  {job="api-server", instance="1", group="production"} 2
""",
    ),
    (
        "at_modifier.test: @ pins selectors, start() and end()",
        BOTH,
        """
load 10s
  metric{job="1"} 0+1x1000
  metric{job="2"} 0+2x1000
eval instant at 10s metric @ 100
  metric{job="1"} 10
  metric{job="2"} 20
eval instant at 10s metric @ 100 offset 50s
  metric{job="1"} 5
  metric{job="2"} 10
eval instant at 1000s sum(rate(metric[100s] @ 100))
  {} 0.3
eval instant at 25s timestamp(metric @ 100)
  {job="1"} 100
  {job="2"} 100
""",
    ),
    (
        "trig_functions.test and functions.test: deg(), rad(), sgn(), exp() specials",
        BOTH,
        """
load 5m
  trig{l="x"} 10
  trig{l="y"} 20
  trig{l="NaN"} NaN
  exp_root_log{l="x"} 10
  exp_root_log{l="y"} 20
eval instant at 1m rad(trig)
  {l="x"} 0.17453292519943295
  {l="y"} 0.3490658503988659
  {l="NaN"} NaN
eval instant at 1m deg(trig)
  {l="x"} 572.9577951308232
  {l="y"} 1145.9155902616465
  {l="NaN"} NaN
eval instant at 1m exp(exp_root_log)
  {l="x"} 22026.465794806718
  {l="y"} 485165195.4097903
eval instant at 1m log2(exp_root_log)
  {l="x"} 3.3219280948873626
  {l="y"} 4.321928094887363
eval instant at 1m log10(exp_root_log)
  {l="x"} 1
  {l="y"} 1.301029995663981
""",
    ),
]


@pytest.mark.parametrize(
    ("version", "script"),
    [
        pytest.param(v, script, id=f"v{v}-{name}")
        for name, versions, script in CASES
        for v in versions
    ],
)
def test_upstream_case(version: str, script: str) -> None:
    outcome = run_script(script, version=version)
    assert outcome.evals > 0
    assert not outcome.failures, "\n".join(outcome.failures)


def test_version_differences_are_real() -> None:
    """The version-specific cases fail under the other version: the switch changes answers."""
    for name, versions, script in CASES:
        if versions == BOTH:
            continue
        other = "3" if versions == ("2",) else "2"
        outcome = run_script(script, version=other)
        assert outcome.failures, f"{name} passes under version {other} too"
