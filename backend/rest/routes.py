"""The route table: how each ``LanceNamespace`` operation travels over HTTP.

One :class:`Route` per operation of ``lance_namespace_urllib3_client`` 0.13 (54 operations):
method, path template, where the request goes (JSON body, query string, Arrow IPC body, the
metadata map), response model, and whether it is read-only (only read-only operations are
retried). ``tests/backend/test_rest_wire.py`` checks it against the generated client.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import lance_namespace as ln
from pydantic import BaseModel

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
    request: type[BaseModel]
    response: type[BaseModel] | None  # None: plain text (query plans)
    read_only: bool
    query: tuple[str, ...] = ()  # request fields sent as query parameters
    response_kind: str | None = None  # RESP_ARROW | RESP_TEXT | RESP_COUNT
    nested_requests: bool = False  # body embeds request models (strip identity/context there)

    @property
    def has_id(self) -> bool:
        return "{id}" in self.path


_PAGING = ("page_token", "limit")


def _r(
    op: str,
    method: str,
    path: str,
    body: str,
    request: type[BaseModel],
    response: type[BaseModel] | None,
    read_only: bool,
    query: tuple[str, ...] = (),
    **kw: Any,
) -> Route:
    return Route(op, method, path, body, request, response, read_only, query, **kw)


R, W = True, False
# The whole route table of lance_namespace_urllib3_client 0.13 (54 operations).
ROUTES: dict[str, Route] = {
    r.op: r
    for r in (
        # Namespaces
        _r("list_namespaces", "GET", "/v1/namespace/{id}/list", NONE,
           ln.ListNamespacesRequest, ln.ListNamespacesResponse, R, _PAGING),
        _r("create_namespace", "POST", "/v1/namespace/{id}/create", JSON,
           ln.CreateNamespaceRequest, ln.CreateNamespaceResponse, W),
        _r("describe_namespace", "POST", "/v1/namespace/{id}/describe", JSON,
           ln.DescribeNamespaceRequest, ln.DescribeNamespaceResponse, R),
        _r("drop_namespace", "POST", "/v1/namespace/{id}/drop", JSON,
           ln.DropNamespaceRequest, ln.DropNamespaceResponse, W),
        _r("namespace_exists", "POST", "/v1/namespace/{id}/exists", JSON,
           ln.NamespaceExistsRequest, ln.NamespaceExistsResponse, R),
        _r("list_tables", "GET", "/v1/namespace/{id}/table/list", NONE,
           ln.ListTablesRequest, ln.ListTablesResponse, R, (*_PAGING, "include_declared")),
        _r("list_all_tables", "GET", "/v1/table", NONE,
           ln.ListTablesRequest, ln.ListTablesResponse, R, (*_PAGING, "include_declared")),
        # Table metadata
        _r("register_table", "POST", "/v1/table/{id}/register", JSON,
           ln.RegisterTableRequest, ln.RegisterTableResponse, W),
        _r("describe_table", "POST", "/v1/table/{id}/describe", JSON,
           ln.DescribeTableRequest, ln.DescribeTableResponse, R,
           ("with_table_uri", "load_detailed_metadata", "check_declared")),
        _r("table_exists", "POST", "/v1/table/{id}/exists", JSON,
           ln.TableExistsRequest, ln.TableExistsResponse, R),
        _r("drop_table", "POST", "/v1/table/{id}/drop", NONE,
           ln.DropTableRequest, ln.DropTableResponse, W),
        _r("deregister_table", "POST", "/v1/table/{id}/deregister", JSON,
           ln.DeregisterTableRequest, ln.DeregisterTableResponse, W),
        _r("rename_table", "POST", "/v1/table/{id}/rename", JSON,
           ln.RenameTableRequest, ln.RenameTableResponse, W),
        _r("restore_table", "POST", "/v1/table/{id}/restore", JSON,
           ln.RestoreTableRequest, ln.RestoreTableResponse, W),
        _r("list_table_versions", "POST", "/v1/table/{id}/version/list", NONE,
           ln.ListTableVersionsRequest, ln.ListTableVersionsResponse, R,
           ("branch", *_PAGING, "descending")),
        _r("create_table_version", "POST", "/v1/table/{id}/version/create", JSON,
           ln.CreateTableVersionRequest, ln.CreateTableVersionResponse, W),
        _r("describe_table_version", "POST", "/v1/table/{id}/version/describe", JSON,
           ln.DescribeTableVersionRequest, ln.DescribeTableVersionResponse, R),
        _r("batch_delete_table_versions", "POST", "/v1/table/{id}/version/delete", JSON,
           ln.BatchDeleteTableVersionsRequest, ln.BatchDeleteTableVersionsResponse, W),
        _r("batch_create_table_versions", "POST", "/v1/table/version/batch-create", JSON,
           ln.BatchCreateTableVersionsRequest, ln.BatchCreateTableVersionsResponse, W,
           nested_requests=True),
        _r("batch_commit_tables", "POST", "/v1/table/batch-commit", JSON,
           ln.BatchCommitTablesRequest, ln.BatchCommitTablesResponse, W,
           nested_requests=True),
        _r("get_table_stats", "POST", "/v1/table/{id}/stats", JSON,
           ln.GetTableStatsRequest, ln.GetTableStatsResponse, R),
        _r("update_table_schema_metadata", "POST", "/v1/table/{id}/schema_metadata/update",
           METADATA, ln.UpdateTableSchemaMetadataRequest, ln.UpdateTableSchemaMetadataResponse,
           W, ("branch",)),
        _r("update_field_metadata", "POST", "/v1/table/{id}/update_field_metadata", JSON,
           ln.UpdateFieldMetadataRequest, ln.UpdateFieldMetadataResponse, W),
        # Table data
        _r("create_table", "POST", "/v1/table/{id}/create", ARROW,
           ln.CreateTableRequest, ln.CreateTableResponse, W,
           ("mode", "properties", "storage_options")),
        _r("declare_table", "POST", "/v1/table/{id}/declare", JSON,
           ln.DeclareTableRequest, ln.DeclareTableResponse, W),
        _r("insert_into_table", "POST", "/v1/table/{id}/insert", ARROW,
           ln.InsertIntoTableRequest, ln.InsertIntoTableResponse, W, ("branch", "mode")),
        _r("merge_insert_into_table", "POST", "/v1/table/{id}/merge_insert", ARROW,
           ln.MergeInsertIntoTableRequest, ln.MergeInsertIntoTableResponse, W,
           ("branch", "on", "when_matched_update_all", "when_matched_update_all_filt",
            "when_not_matched_insert_all", "when_not_matched_by_source_delete",
            "when_not_matched_by_source_delete_filt", "timeout", "use_index")),
        _r("update_table", "POST", "/v1/table/{id}/update", JSON,
           ln.UpdateTableRequest, ln.UpdateTableResponse, W),
        _r("delete_from_table", "POST", "/v1/table/{id}/delete", JSON,
           ln.DeleteFromTableRequest, ln.DeleteFromTableResponse, W),
        _r("query_table", "POST", "/v1/table/{id}/query", JSON,
           ln.QueryTableRequest, ln.QueryTableResponse, R, response_kind=RESP_ARROW),
        _r("count_table_rows", "POST", "/v1/table/{id}/count_rows", JSON,
           ln.CountTableRowsRequest, ln.CountTableRowsResponse, R, response_kind=RESP_COUNT),
        _r("explain_table_query_plan", "POST", "/v1/table/{id}/explain_plan", JSON,
           ln.ExplainTableQueryPlanRequest, None, R,
           response_kind=RESP_TEXT),
        _r("analyze_table_query_plan", "POST", "/v1/table/{id}/analyze_plan", JSON,
           ln.AnalyzeTableQueryPlanRequest, None, R,
           response_kind=RESP_TEXT),
        # Schema evolution
        _r("alter_table_add_columns", "POST", "/v1/table/{id}/add_columns", JSON,
           ln.AlterTableAddColumnsRequest, ln.AlterTableAddColumnsResponse, W),
        _r("alter_table_alter_columns", "POST", "/v1/table/{id}/alter_columns", JSON,
           ln.AlterTableAlterColumnsRequest, ln.AlterTableAlterColumnsResponse, W),
        _r("alter_table_drop_columns", "POST", "/v1/table/{id}/drop_columns", JSON,
           ln.AlterTableDropColumnsRequest, ln.AlterTableDropColumnsResponse, W),
        _r("alter_table_backfill_columns", "POST", "/v1/table/{id}/backfill_column", JSON,
           ln.AlterTableBackfillColumnsRequest, ln.AlterTableBackfillColumnsResponse, W),
        # Materialized views
        _r("create_materialized_view", "POST", "/v1/materialized_view/{id}/create", JSON,
           ln.CreateMaterializedViewRequest, ln.CreateMaterializedViewResponse, W),
        _r("refresh_materialized_view", "POST", "/v1/materialized_view/{id}/refresh", JSON,
           ln.RefreshMaterializedViewRequest, ln.RefreshMaterializedViewResponse, W),
        # Indexes
        _r("create_table_index", "POST", "/v1/table/{id}/create_index", JSON,
           ln.CreateTableIndexRequest, ln.CreateTableIndexResponse, W),
        _r("create_table_scalar_index", "POST", "/v1/table/{id}/create_scalar_index", JSON,
           ln.CreateTableIndexRequest, ln.CreateTableScalarIndexResponse, W),
        _r("list_table_indices", "POST", "/v1/table/{id}/index/list", JSON,
           ln.ListTableIndicesRequest, ln.ListTableIndicesResponse, R),
        _r("describe_table_index_stats", "POST", "/v1/table/{id}/index/{index_name}/stats", JSON,
           ln.DescribeTableIndexStatsRequest, ln.DescribeTableIndexStatsResponse, R),
        _r("drop_table_index", "POST", "/v1/table/{id}/index/{index_name}/drop", NONE,
           ln.DropTableIndexRequest, ln.DropTableIndexResponse, W, ("branch",)),
        # Tags
        _r("list_table_tags", "POST", "/v1/table/{id}/tags/list", NONE,
           ln.ListTableTagsRequest, ln.ListTableTagsResponse, R, _PAGING),
        _r("get_table_tag_version", "POST", "/v1/table/{id}/tags/version", JSON,
           ln.GetTableTagVersionRequest, ln.GetTableTagVersionResponse, R),
        _r("create_table_tag", "POST", "/v1/table/{id}/tags/create", JSON,
           ln.CreateTableTagRequest, ln.CreateTableTagResponse, W),
        _r("delete_table_tag", "POST", "/v1/table/{id}/tags/delete", JSON,
           ln.DeleteTableTagRequest, ln.DeleteTableTagResponse, W),
        _r("update_table_tag", "POST", "/v1/table/{id}/tags/update", JSON,
           ln.UpdateTableTagRequest, ln.UpdateTableTagResponse, W),
        # Branches
        _r("create_table_branch", "POST", "/v1/table/{id}/branches/create", JSON,
           ln.CreateTableBranchRequest, ln.CreateTableBranchResponse, W),
        _r("list_table_branches", "POST", "/v1/table/{id}/branches/list", NONE,
           ln.ListTableBranchesRequest, ln.ListTableBranchesResponse, R, _PAGING),
        _r("delete_table_branch", "POST", "/v1/table/{id}/branches/delete", JSON,
           ln.DeleteTableBranchRequest, ln.DeleteTableBranchResponse, W),
        # Transactions (id = table id + transaction id)
        _r("describe_transaction", "POST", "/v1/transaction/{id}/describe", JSON,
           ln.DescribeTransactionRequest, ln.DescribeTransactionResponse, R),
        _r("alter_transaction", "POST", "/v1/transaction/{id}/alter", JSON,
           ln.AlterTransactionRequest, ln.AlterTransactionResponse, W),
    )
}  # fmt: skip

READ_ONLY_OPS: frozenset[str] = frozenset(op for op, r in ROUTES.items() if r.read_only)
# Response models that carry ``context`` (all of them in 0.13; checked, not assumed).
HAS_CONTEXT: frozenset[type] = frozenset(
    r.response for r in ROUTES.values() if r.response and "context" in r.response.model_fields
)
# Operations whose id ends in a name they create: the last part follows the creation rule.
NEW_NAME_OPS: frozenset[str] = frozenset(
    {"create_namespace", "create_table", "declare_table", "register_table"}
)
# Namespace-id operations (the rest address tables, or transactions for the last two).
NAMESPACE_OPS: frozenset[str] = frozenset(
    {
        "list_namespaces",
        "create_namespace",
        "describe_namespace",
        "drop_namespace",
        "namespace_exists",
        "list_tables",
        "list_all_tables",
    }
)
TRANSACTION_OPS: frozenset[str] = frozenset({"describe_transaction", "alter_transaction"})
