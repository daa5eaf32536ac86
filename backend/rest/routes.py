"""The route table: how each ``LanceNamespace`` operation travels over HTTP.

One :class:`Route` per operation of the spec (``backend.spec.operations.OPERATIONS``, 54 in
``lance_namespace_urllib3_client`` 0.13): method, path template, where the request goes (JSON
body, query string, Arrow IPC body, the metadata map) and how the answer is read. The
operation's models and read-only flag (only read-only operations are retried) come from the
spec table. ``tests/backend/test_rest_wire.py`` checks it against the generated client.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from backend.spec.operations import OPERATIONS, Operation

ARROW_STREAM = "application/vnd.apache.arrow.stream"
ARROW_FILE = "application/vnd.apache.arrow.file"
JSON_TYPE = "application/json"

# Body kinds.
JSON = "json"  # the request model as a JSON object
NONE = "none"  # no body: everything but the id goes to the query string
ARROW = "arrow"  # Arrow IPC stream bytes; request fields go to the query string
METADATA = "metadata"  # the request's ``metadata`` dict is the whole body

# Response kinds besides a model class.
RESP_ARROW = "arrow"  # raw Arrow IPC file bytes -> QueryTableResponse(data=...)
RESP_TEXT = "text"  # a plan as a JSON string or text/plain -> str
RESP_COUNT = "count"  # a bare JSON integer (or {"count": n}) -> CountTableRowsResponse


@dataclass(frozen=True)
class Route:
    """How one operation travels over HTTP."""

    op: str
    method: str
    path: str  # template with {id} and possibly {index_name}
    body: str  # JSON | NONE | ARROW | METADATA
    query: tuple[str, ...] = ()  # request fields sent as query parameters
    response_kind: str | None = None  # RESP_ARROW | RESP_TEXT | RESP_COUNT
    nested_requests: bool = False  # body embeds request models (strip identity/context there)

    @property
    def operation(self) -> Operation:
        return OPERATIONS[self.op]

    @property
    def request(self) -> type[BaseModel]:
        return self.operation.request

    @property
    def response(self) -> type[BaseModel] | None:  # None: plain text (query plans)
        return self.operation.response

    @property
    def read_only(self) -> bool:
        return self.operation.read_only

    @property
    def has_id(self) -> bool:
        return "{id}" in self.path


_PAGING = ("page_token", "limit")


def _r(op: str, method: str, path: str, body: str, query: tuple[str, ...] = (), **kw: Any) -> Route:
    return Route(op, method, path, body, query, **kw)


# How each operation of the spec travels.
ROUTES: dict[str, Route] = {
    r.op: r
    for r in (
        # Namespaces
        _r("list_namespaces", "GET", "/v1/namespace/{id}/list", NONE, _PAGING),
        _r("create_namespace", "POST", "/v1/namespace/{id}/create", JSON),
        _r("describe_namespace", "POST", "/v1/namespace/{id}/describe", JSON),
        _r("drop_namespace", "POST", "/v1/namespace/{id}/drop", JSON),
        _r("namespace_exists", "POST", "/v1/namespace/{id}/exists", JSON),
        _r("list_tables", "GET", "/v1/namespace/{id}/table/list", NONE,
           (*_PAGING, "include_declared")),
        _r("list_all_tables", "GET", "/v1/table", NONE, (*_PAGING, "include_declared")),
        # Table metadata
        _r("register_table", "POST", "/v1/table/{id}/register", JSON),
        _r("describe_table", "POST", "/v1/table/{id}/describe", JSON,
           ("with_table_uri", "load_detailed_metadata", "check_declared")),
        _r("table_exists", "POST", "/v1/table/{id}/exists", JSON),
        _r("drop_table", "POST", "/v1/table/{id}/drop", NONE),
        _r("deregister_table", "POST", "/v1/table/{id}/deregister", JSON),
        _r("rename_table", "POST", "/v1/table/{id}/rename", JSON),
        _r("restore_table", "POST", "/v1/table/{id}/restore", JSON),
        _r("list_table_versions", "POST", "/v1/table/{id}/version/list", NONE,
           ("branch", *_PAGING, "descending")),
        _r("create_table_version", "POST", "/v1/table/{id}/version/create", JSON),
        _r("describe_table_version", "POST", "/v1/table/{id}/version/describe", JSON),
        _r("batch_delete_table_versions", "POST", "/v1/table/{id}/version/delete", JSON),
        _r("batch_create_table_versions", "POST", "/v1/table/version/batch-create", JSON,
           nested_requests=True),
        _r("batch_commit_tables", "POST", "/v1/table/batch-commit", JSON, nested_requests=True),
        _r("get_table_stats", "POST", "/v1/table/{id}/stats", JSON),
        _r("update_table_schema_metadata", "POST", "/v1/table/{id}/schema_metadata/update",
           METADATA, ("branch",)),
        _r("update_field_metadata", "POST", "/v1/table/{id}/update_field_metadata", JSON),
        # Table data
        _r("create_table", "POST", "/v1/table/{id}/create", ARROW,
           ("mode", "properties", "storage_options")),
        _r("declare_table", "POST", "/v1/table/{id}/declare", JSON),
        _r("insert_into_table", "POST", "/v1/table/{id}/insert", ARROW, ("branch", "mode")),
        _r("merge_insert_into_table", "POST", "/v1/table/{id}/merge_insert", ARROW,
           ("branch", "on", "when_matched_update_all", "when_matched_update_all_filt",
            "when_not_matched_insert_all", "when_not_matched_by_source_delete",
            "when_not_matched_by_source_delete_filt", "timeout", "use_index")),
        _r("update_table", "POST", "/v1/table/{id}/update", JSON),
        _r("delete_from_table", "POST", "/v1/table/{id}/delete", JSON),
        _r("query_table", "POST", "/v1/table/{id}/query", JSON, response_kind=RESP_ARROW),
        _r("count_table_rows", "POST", "/v1/table/{id}/count_rows", JSON,
           response_kind=RESP_COUNT),
        _r("explain_table_query_plan", "POST", "/v1/table/{id}/explain_plan", JSON,
           response_kind=RESP_TEXT),
        _r("analyze_table_query_plan", "POST", "/v1/table/{id}/analyze_plan", JSON,
           response_kind=RESP_TEXT),
        # Schema evolution
        _r("alter_table_add_columns", "POST", "/v1/table/{id}/add_columns", JSON),
        _r("alter_table_alter_columns", "POST", "/v1/table/{id}/alter_columns", JSON),
        _r("alter_table_drop_columns", "POST", "/v1/table/{id}/drop_columns", JSON),
        _r("alter_table_backfill_columns", "POST", "/v1/table/{id}/backfill_column", JSON),
        # Materialized views
        _r("create_materialized_view", "POST", "/v1/materialized_view/{id}/create", JSON),
        _r("refresh_materialized_view", "POST", "/v1/materialized_view/{id}/refresh", JSON),
        # Indexes
        _r("create_table_index", "POST", "/v1/table/{id}/create_index", JSON),
        _r("create_table_scalar_index", "POST", "/v1/table/{id}/create_scalar_index", JSON),
        _r("list_table_indices", "POST", "/v1/table/{id}/index/list", JSON),
        _r("describe_table_index_stats", "POST", "/v1/table/{id}/index/{index_name}/stats", JSON),
        _r("drop_table_index", "POST", "/v1/table/{id}/index/{index_name}/drop", NONE,
           ("branch",)),
        # Tags
        _r("list_table_tags", "POST", "/v1/table/{id}/tags/list", NONE, _PAGING),
        _r("get_table_tag_version", "POST", "/v1/table/{id}/tags/version", JSON),
        _r("create_table_tag", "POST", "/v1/table/{id}/tags/create", JSON),
        _r("delete_table_tag", "POST", "/v1/table/{id}/tags/delete", JSON),
        _r("update_table_tag", "POST", "/v1/table/{id}/tags/update", JSON),
        # Branches
        _r("create_table_branch", "POST", "/v1/table/{id}/branches/create", JSON),
        _r("list_table_branches", "POST", "/v1/table/{id}/branches/list", NONE, _PAGING),
        _r("delete_table_branch", "POST", "/v1/table/{id}/branches/delete", JSON),
        # Transactions (id = table id + transaction id)
        _r("describe_transaction", "POST", "/v1/transaction/{id}/describe", JSON),
        _r("alter_transaction", "POST", "/v1/transaction/{id}/alter", JSON),
    )
}  # fmt: skip
