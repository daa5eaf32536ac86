"""Query plans (ExplainTableQueryPlan / AnalyzeTableQueryPlan): the plan text as nodes with
their metrics, what matters in it (index used, rows and bytes read, time), and as rows."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from lance_namespace import (
    AnalyzeTableQueryPlanRequest,
    ExplainTableQueryPlanRequest,
    LanceNamespace,
    QueryTableRequest,
)


@dataclass
class PlanNode:
    depth: int
    name: str
    detail: str
    metrics: dict[str, str] = field(default_factory=dict)

    @property
    def elapsed(self) -> str | None:
        return self.metrics.get("elapsed") or self.metrics.get("elapsed_compute")

    @property
    def elapsed_ms(self) -> float | None:
        """The node's time (inclusive of its children) in milliseconds."""
        return duration_ms(self.elapsed)


_DURATION_UNITS = (("ns", 1e-6), ("µs", 1e-3), ("us", 1e-3), ("ms", 1.0), ("s", 1000.0))


def duration_ms(text: str | None) -> float | None:
    """A DataFusion duration (``4.68ms``, ``862.7µs``, ``1.2s``) in milliseconds."""
    for unit, factor in _DURATION_UNITS:
        if text and text.endswith(unit):
            try:
                return float(text[: -len(unit)]) * factor
            except ValueError:
                return None
    return None


# Plan nodes that show a vector index (IVF partitions, HNSW, PQ) or a full-text index at work.
_INDEX_NODES = (
    "ANNSubIndex",
    "ANNIvfPartition",
    "ANNIvf",
    "MatchQuery",
    "PhraseQuery",
    "FlatMatch",
    "ScalarIndex",
    "MaterializeIndex",
    "BooleanQuery",
)
_BRUTE_FORCE = ("KNNVectorDistance",)


def explain(ns: LanceNamespace, request: QueryTableRequest, *, verbose: bool = False) -> str:
    return ns.explain_table_query_plan(
        ExplainTableQueryPlanRequest(id=request.id, query=request, verbose=verbose)
    )


def analyze(ns: LanceNamespace, request: QueryTableRequest) -> str:
    body = request.model_dump(exclude_none=True, exclude={"identity", "context"})
    return ns.analyze_table_query_plan(AnalyzeTableQueryPlanRequest.model_validate(body))


_METRICS = re.compile(r"metrics=\[(.*?)\]")


def parse_plan(text: str) -> list[PlanNode]:
    """A DataFusion/Lance plan (explain or analyze) as nodes with their depth, name, the rest
    of their line, and their metrics (``elapsed``, ``output_rows``, ``bytes_read``...)."""
    nodes = []
    for line in (text or "").splitlines():
        if not line.strip():
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        body = line.strip()
        name, _, rest = body.partition(":")
        name = name.split(",")[0].split(" ")[0]
        metrics: dict[str, str] = {}
        m = _METRICS.search(rest)
        if m:
            for item in m.group(1).split(", "):
                key, _, value = item.partition("=")
                if key and value:
                    metrics[key.strip()] = value.strip()
            rest = _METRICS.sub("", rest)
        head_elapsed = re.search(r"elapsed=([\d.]+\w+)", body.split("metrics=")[0])
        if head_elapsed and "elapsed" not in metrics:
            metrics["elapsed"] = head_elapsed.group(1)
        nodes.append(PlanNode(depth, name, rest.strip().strip(","), metrics))
    return nodes


def plan_summary(nodes: Sequence[PlanNode]) -> dict[str, Any]:
    """What matters in a plan: whether an index is used (and which nodes say so), rows and
    bytes read, the total time."""
    names = [n.name for n in nodes]
    used = [n for n in names if n.startswith(_INDEX_NODES)]
    brute = [n for n in names if n.startswith(_BRUTE_FORCE)]
    scans = [n for n in nodes if n.name.startswith(("LanceRead", "LanceScan"))]
    rows = sum(_number(n.metrics.get("rows_scanned", n.metrics.get("output_rows"))) for n in scans)
    bytes_read = sum(_size(n.metrics.get("bytes_read")) for n in nodes)
    return {
        "index_used": bool(used),
        "index_nodes": sorted(set(used)),
        "brute_force": bool(brute) and not used,
        "rows_scanned": rows if scans else None,
        "bytes_read": bytes_read if scans else None,
        "elapsed": nodes[0].elapsed if nodes else None,
        "elapsed_ms": nodes[0].elapsed_ms if nodes else None,
    }


def _number(value: str | None) -> int:
    try:
        return int(float(str(value).replace(",", "")))
    except (TypeError, ValueError):
        return 0


_UNITS = {
    "B": 1, "K": 1e3, "KB": 1e3, "M": 1e6, "MB": 1e6, "G": 1e9, "GB": 1e9,
    "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3,
}  # fmt: skip


def _size(value: str | None) -> int:
    if not value:
        return 0
    m = re.fullmatch(r"([\d.]+)\s*([KMG]i?B|[KMG]|B)?", value.strip())
    if not m:
        return _number(value)
    return int(float(m.group(1)) * _UNITS.get(m.group(2) or "B", 1))


def plan_frame(nodes: Sequence[PlanNode]) -> pd.DataFrame:
    """The plan as rows: an indented step, its time (ms), rows out, bytes read, the rest of
    its line (timings left out)."""
    return pd.DataFrame(
        [
            {
                "step": "\u2003" * n.depth + n.name,
                "ms": n.elapsed_ms,
                "rows": _number(n.metrics["output_rows"]) if "output_rows" in n.metrics else None,
                "bytes_read": _size(n.metrics["bytes_read"]) if "bytes_read" in n.metrics else None,
                "detail": re.sub(r"^elapsed=[^,]*,?\s*", "", n.detail)[:300],
            }
            for n in nodes
        ],
        columns=["step", "ms", "rows", "bytes_read", "detail"],
    )
