"""A PromQL engine that answers as Prometheus does: an in-memory series store and an
evaluator on ``promql-parser``'s syntax tree. Pure: no clock, no I/O.

```python
store = SeriesStore()
ref = store.series_ref({"__name__": "my_custom_gauge", "pod": "a"})
store.append_ref(ref, 15_000, 160.0)
engine = Engine(store)                      # Prometheus 3.x semantics; version="2" for 2.x
engine.instant("sum(my_custom_gauge{})", 30_000).to_api_json()
```

The supported subset and every known difference from Prometheus are listed in
docs/promql.md; anything outside the subset raises ``PromQLError`` naming the construct.
Query text goes to the parser only through :func:`parse_query`, which refuses text longer
than :data:`MAX_QUERY_CHARS` or nested deeper than :data:`MAX_QUERY_DEPTH` first;
:func:`walk` and :func:`fold` are the one (iterative) way to read the syntax tree.
"""

from gpuscale.promql._errors import PromQLError
from gpuscale.promql.engine import SUPPORTED_AGGREGATIONS, SUPPORTED_FUNCTIONS, Engine
from gpuscale.promql.labels import Labels, labels_from_mapping
from gpuscale.promql.result import (
    MatrixResult,
    Result,
    Sample,
    ScalarResult,
    Series,
    StringResult,
    VectorResult,
    result_from_api_json,
)
from gpuscale.promql.store import Matcher, OutOfOrderSampleError, SeriesStore
from gpuscale.promql.syntax import (
    MAX_QUERY_CHARS,
    MAX_QUERY_DEPTH,
    check_query_text,
    fold,
    parse_query,
    walk,
)

__all__ = [
    "MAX_QUERY_CHARS",
    "MAX_QUERY_DEPTH",
    "SUPPORTED_AGGREGATIONS",
    "SUPPORTED_FUNCTIONS",
    "Engine",
    "Labels",
    "Matcher",
    "MatrixResult",
    "OutOfOrderSampleError",
    "PromQLError",
    "Result",
    "Sample",
    "ScalarResult",
    "Series",
    "SeriesStore",
    "StringResult",
    "VectorResult",
    "check_query_text",
    "fold",
    "labels_from_mapping",
    "parse_query",
    "result_from_api_json",
    "walk",
]
