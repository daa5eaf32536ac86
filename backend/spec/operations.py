"""The operations of the Lance Namespace spec and the console's own, each read-only or not.

:data:`OPERATIONS` holds one :class:`Operation` per operation of ``lance_namespace`` 0.13 (54
operations): its request and response models and whether it only reads. How each travels
over HTTP is the REST backend's business (``backend.rest.routes``); who may call it is
``backend.access``'s. :data:`CONSOLE_READS` and :data:`CONSOLE_WRITES` name the console
backends' own methods besides the spec's; :data:`READ_OPS` and :data:`WRITE_OPS` are the whole
classification: every other name counts as a write.
"""

from __future__ import annotations

from dataclasses import dataclass

import lance_namespace as ln
from pydantic import BaseModel


@dataclass(frozen=True)
class Operation:
    """One operation of the spec: its models and whether it only reads."""

    name: str
    request: type[BaseModel]
    response: type[BaseModel] | None  # None: plain text (query plans)
    read_only: bool


def _op(
    name: str, request: type[BaseModel], response: type[BaseModel] | None, read_only: bool
) -> Operation:
    return Operation(name, request, response, read_only)


R, W = True, False
# Every operation of lance_namespace 0.13 (54 operations).
OPERATIONS: dict[str, Operation] = {
    o.name: o
    for o in (
        # Namespaces
        _op("list_namespaces", ln.ListNamespacesRequest, ln.ListNamespacesResponse, R),
        _op("create_namespace", ln.CreateNamespaceRequest, ln.CreateNamespaceResponse, W),
        _op("describe_namespace", ln.DescribeNamespaceRequest, ln.DescribeNamespaceResponse, R),
        _op("drop_namespace", ln.DropNamespaceRequest, ln.DropNamespaceResponse, W),
        _op("namespace_exists", ln.NamespaceExistsRequest, ln.NamespaceExistsResponse, R),
        _op("list_tables", ln.ListTablesRequest, ln.ListTablesResponse, R),
        _op("list_all_tables", ln.ListTablesRequest, ln.ListTablesResponse, R),
        # Table metadata
        _op("register_table", ln.RegisterTableRequest, ln.RegisterTableResponse, W),
        _op("describe_table", ln.DescribeTableRequest, ln.DescribeTableResponse, R),
        _op("table_exists", ln.TableExistsRequest, ln.TableExistsResponse, R),
        _op("drop_table", ln.DropTableRequest, ln.DropTableResponse, W),
        _op("deregister_table", ln.DeregisterTableRequest, ln.DeregisterTableResponse, W),
        _op("rename_table", ln.RenameTableRequest, ln.RenameTableResponse, W),
        _op("restore_table", ln.RestoreTableRequest, ln.RestoreTableResponse, W),
        _op("list_table_versions", ln.ListTableVersionsRequest, ln.ListTableVersionsResponse, R),
        _op("create_table_version", ln.CreateTableVersionRequest, ln.CreateTableVersionResponse, W),
        _op("describe_table_version", ln.DescribeTableVersionRequest, ln.DescribeTableVersionResponse, R),
        _op("batch_delete_table_versions", ln.BatchDeleteTableVersionsRequest, ln.BatchDeleteTableVersionsResponse, W),
        _op("batch_create_table_versions", ln.BatchCreateTableVersionsRequest, ln.BatchCreateTableVersionsResponse, W),
        _op("batch_commit_tables", ln.BatchCommitTablesRequest, ln.BatchCommitTablesResponse, W),
        _op("get_table_stats", ln.GetTableStatsRequest, ln.GetTableStatsResponse, R),
        _op("update_table_schema_metadata", ln.UpdateTableSchemaMetadataRequest, ln.UpdateTableSchemaMetadataResponse, W),
        _op("update_field_metadata", ln.UpdateFieldMetadataRequest, ln.UpdateFieldMetadataResponse, W),
        # Table data
        _op("create_table", ln.CreateTableRequest, ln.CreateTableResponse, W),
        _op("declare_table", ln.DeclareTableRequest, ln.DeclareTableResponse, W),
        _op("insert_into_table", ln.InsertIntoTableRequest, ln.InsertIntoTableResponse, W),
        _op("merge_insert_into_table", ln.MergeInsertIntoTableRequest, ln.MergeInsertIntoTableResponse, W),
        _op("update_table", ln.UpdateTableRequest, ln.UpdateTableResponse, W),
        _op("delete_from_table", ln.DeleteFromTableRequest, ln.DeleteFromTableResponse, W),
        _op("query_table", ln.QueryTableRequest, ln.QueryTableResponse, R),
        _op("count_table_rows", ln.CountTableRowsRequest, ln.CountTableRowsResponse, R),
        _op("explain_table_query_plan", ln.ExplainTableQueryPlanRequest, None, R),
        _op("analyze_table_query_plan", ln.AnalyzeTableQueryPlanRequest, None, R),
        # Schema evolution
        _op("alter_table_add_columns", ln.AlterTableAddColumnsRequest, ln.AlterTableAddColumnsResponse, W),
        _op("alter_table_alter_columns", ln.AlterTableAlterColumnsRequest, ln.AlterTableAlterColumnsResponse, W),
        _op("alter_table_drop_columns", ln.AlterTableDropColumnsRequest, ln.AlterTableDropColumnsResponse, W),
        _op("alter_table_backfill_columns", ln.AlterTableBackfillColumnsRequest, ln.AlterTableBackfillColumnsResponse, W),
        # Materialized views
        _op("create_materialized_view", ln.CreateMaterializedViewRequest, ln.CreateMaterializedViewResponse, W),
        _op("refresh_materialized_view", ln.RefreshMaterializedViewRequest, ln.RefreshMaterializedViewResponse, W),
        # Indexes
        _op("create_table_index", ln.CreateTableIndexRequest, ln.CreateTableIndexResponse, W),
        _op("create_table_scalar_index", ln.CreateTableIndexRequest, ln.CreateTableScalarIndexResponse, W),
        _op("list_table_indices", ln.ListTableIndicesRequest, ln.ListTableIndicesResponse, R),
        _op("describe_table_index_stats", ln.DescribeTableIndexStatsRequest, ln.DescribeTableIndexStatsResponse, R),
        _op("drop_table_index", ln.DropTableIndexRequest, ln.DropTableIndexResponse, W),
        # Tags
        _op("list_table_tags", ln.ListTableTagsRequest, ln.ListTableTagsResponse, R),
        _op("get_table_tag_version", ln.GetTableTagVersionRequest, ln.GetTableTagVersionResponse, R),
        _op("create_table_tag", ln.CreateTableTagRequest, ln.CreateTableTagResponse, W),
        _op("delete_table_tag", ln.DeleteTableTagRequest, ln.DeleteTableTagResponse, W),
        _op("update_table_tag", ln.UpdateTableTagRequest, ln.UpdateTableTagResponse, W),
        # Branches
        _op("create_table_branch", ln.CreateTableBranchRequest, ln.CreateTableBranchResponse, W),
        _op("list_table_branches", ln.ListTableBranchesRequest, ln.ListTableBranchesResponse, R),
        _op("delete_table_branch", ln.DeleteTableBranchRequest, ln.DeleteTableBranchResponse, W),
        # Transactions (id = table id + transaction id)
        _op("describe_transaction", ln.DescribeTransactionRequest, ln.DescribeTransactionResponse, R),
        _op("alter_transaction", ln.AlterTransactionRequest, ln.AlterTransactionResponse, W),
    )
}  # fmt: skip

READ_ONLY_OPS: frozenset[str] = frozenset(op for op, o in OPERATIONS.items() if o.read_only)
# Response models that carry ``context`` (all of them in 0.13; checked, not assumed).
HAS_CONTEXT: frozenset[type] = frozenset(
    o.response for o in OPERATIONS.values() if o.response and "context" in o.response.model_fields
)

# The console backends' own methods besides the spec's operations that change nothing.
CONSOLE_READS: frozenset[str] = frozenset(
    {
        "batch_commit_refusal",  # the REST client: why a server cannot run a batch (no request)
        "capabilities",
        "close",
        "committed_version",  # the local backend's reader isolation: a table's committed version
        "format_id",
        "index_requests",
        "list_jobs",  # the console's job records (``backend.services.jobs``)
        "namespace_id",
        "open_dataset",
        "branch_dataset",  # a branch's dataset (local backend): reads, as open_dataset
        "preflight",  # the REST batch preflight: reads only
        "query_table_arrow",
        "supports_batch_commit",
        "supports_rename",
        "table_location",
        "version_stamp",  # the local backend's change stamp of a table's versions
    }
)
# The console backends' own writes besides the spec's operations.
CONSOLE_WRITES: frozenset[str] = frozenset(
    {
        "cancel_job",  # a cancel request for a job (``backend.services.jobs``)
        "cleanup_old_versions",  # lance's cleanup of old versions' files (maintenance)
        "cleanup_staged",  # staged changes never published (batch_builder.cleanup_staged)
        "compact_files",
        "create_empty_table",  # deprecated spec operation (no REST route)
        "demo_concurrent_writer",  # demo tools: a second process appends to a table
        "demo_fault_commit",  # demo tools: a batch commit with a fault switched on
        "discard_staged",  # the files a staged change wrote (batch_builder.discard_staged)
        "optimize_indexes",
        "remove_table_schema_metadata_keys",  # the local backend's key removal
        "run_maintenance_plan",  # a namespace's maintenance plan run as one job (each of its
        # steps is checked on its own: a cleanup stays an admin's)
        "stage_change",  # a table's next version written uncommitted (batch_builder.stage_change)
        "write_guard",  # the guard writers outside the backend take (imports)
    }
)
# Operations that only read: the spec's read-only operations (:data:`OPERATIONS` says which)
# and the console's own reads. Every other name counts as a write, so that a method added later
# is refused until it is classified.
READ_OPS: frozenset[str] = READ_ONLY_OPS | CONSOLE_READS
WRITE_OPS: frozenset[str] = (frozenset(OPERATIONS) - READ_ONLY_OPS) | CONSOLE_WRITES
