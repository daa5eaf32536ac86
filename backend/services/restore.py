"""Restore a version of a table (on main or a branch), as functions a notebook can call, and
the indexes a restore leaves behind: the offer to rebuild them and the answers kept per table
(local and object-store roots alike).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lance_namespace import (
    CreateTableIndexRequest,
    DescribeTransactionRequest,
    LanceNamespace,
    ListTableIndicesRequest,
    RestoreTableRequest,
    RestoreTableResponse,
)
from lance_namespace.errors import (
    ErrorCode,
    LanceNamespaceError,
)

from backend.rules import ids, index_rules, version_ranges
from backend.spec import catalog_views

from ..capabilities import opens_datasets
from ..errors import invalid, make
from ..spec.paging import list_all
from ..text import plural


def restore_version(
    ns: LanceNamespace, table_id: Sequence[str], version: int, branch: str | None = None
) -> RestoreTableResponse:
    """Make a new latest version whose content is ``version``'s (RestoreTable), on ``branch``
    (``None``/"main": main; the version is one of the branch's). Refused for the latest
    version itself (nothing to restore) and for versions that do not exist."""
    tid = ids.check_id(table_id)
    branch = known_branch(ns, tid, branch)
    where = ids.format_id(tid) + (f" (branch {branch})" if branch else "")
    latest = catalog_views.latest_version(ns, tid, branch)
    if latest is None:
        raise invalid(f"{where} has no versions to restore")
    problem = version_ranges.version_problem(version, "the version to restore")
    if problem:
        raise invalid(problem)
    if version == latest:
        raise invalid(f"v{version} is already the latest version: nothing to restore")
    if not catalog_views.version_exists(ns, tid, version, branch):
        raise make(
            ErrorCode.TABLE_VERSION_NOT_FOUND,
            f"version {version} of {where} does not exist (deleted or never written"
            + (", or not one of the branch's" if branch else "")
            + ")",
        )
    return ns.restore_table(RestoreTableRequest(id=tid, version=version, branch=branch))


def request_branch(branch: str | None) -> str | None:
    """A branch as requests carry it: ``None`` for main."""
    return None if not branch or branch == "main" else str(branch)


def known_branch(ns: LanceNamespace, tid: list[str], branch: str | None) -> str | None:
    """``branch`` as requests carry it (``None``: main), checked to be one of the table's
    (``TableBranchNotFoundError`` naming the ones it has)."""
    from .branches import branch_info

    branch = request_branch(branch)
    if branch is not None:
        branch_info(ns, tid, branch)
    return branch


@dataclass(frozen=True)
class LostIndex:
    """An index of the latest version that an older version does not have: restoring that
    version makes a latest version without it. ``params``: the build parameters recorded for
    it (the local backend keeps the console's vector builds; empty otherwise)."""

    name: str
    index_type: str
    column: str
    params: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in sorted(self.params.items()))
        return f"{self.name} ({self.index_type} on {self.column}{'; ' + shown if shown else ''})"


def _indexes_missing(
    ns: LanceNamespace, tid: list[str], have_at: int | None, lack_at: int | None
) -> list[LostIndex]:
    """The indexes of version ``have_at`` (``None``: the latest) that ``lack_at`` does not
    have (ListTableIndices at both versions), with their recorded build parameters where the
    backend keeps them."""

    def listed(at: int | None) -> dict[str, Any]:
        request = ListTableIndicesRequest(id=tid, version=at)
        return {ix.index_name: ix for ix in list_all(ns.list_table_indices, request, "indexes")}

    have, lack = listed(have_at), listed(lack_at)
    recorded_of = getattr(ns, "index_requests", None)
    recorded = recorded_of(tid) if callable(recorded_of) else {}
    lost = []
    for name, ix in sorted(have.items()):
        if name in lack or not ix.columns:
            continue
        kind = index_rules.normalize_index_type(ix.index_type) or str(ix.index_type)
        lost.append(LostIndex(name, kind, ix.columns[0], dict(recorded.get(name) or {})))
    return lost


def indexes_lost_by_restore(
    ns: LanceNamespace, table_id: Sequence[str], version: int
) -> list[LostIndex]:
    """The indexes a restore of ``version`` leaves behind: those of the latest version that
    ``version`` does not have (ListTableIndices at both versions), with their recorded build
    parameters where the backend keeps them."""
    return _indexes_missing(ns, ids.check_id(table_id), None, int(version))


# Where the console keeps the answers to rebuild offers, one record per table, beside its
# transaction records (``backend.local.txn_store``: local and object-store roots alike).
REBUILD_ANSWERS_DIR = "_console/rebuild_answers"


REBUILT, DECLINED = "rebuilt", "declined"


@dataclass(frozen=True)
class RebuildOffer:
    """The latest version of a table is a restore that left indexes behind: ``version`` (the
    restore's own version) lacks ``lost``, which ``previous`` (the version before it) had.
    ``restored``: the version whose content was restored, where lance's transaction can be
    read (local backend; ``None`` otherwise). ``restore_uuid``: lance's transaction uuid of
    the restore, which an answer names."""

    table_id: list[str]
    version: int
    previous: int
    restored: int | None
    restore_uuid: str
    lost: list[LostIndex]

    def describe(self) -> str:
        which = f"of v{self.restored}" if self.restored else f"that made v{self.version}"
        return (
            f"The restore {which} left {plural(len(self.lost), 'index', 'indexes')} behind: "
            + ", ".join(ix.describe() for ix in self.lost)
            + "."
        )


def _restored_version(ns: LanceNamespace, tid: list[str], version: int) -> int | None:
    """The version a restore committed as ``version`` brought back, from lance's own
    transaction (``None`` where the dataset cannot be opened, e.g. over REST)."""
    if not opens_datasets(ns):
        return None
    try:
        txn = ns.open_dataset(tid, version).read_transaction(version)  # type: ignore[attr-defined]
        restored = getattr(getattr(txn, "operation", None), "version", None)
    except Exception:  # noqa: BLE001 - the number is a nicety: the offer stands without it
        return None
    return int(restored) if isinstance(restored, int) else None


def _answers(ns: LanceNamespace) -> Any:
    """The console's store of rebuild answers of the namespace (``None``: a backend without
    a root of the console's, i.e. REST)."""
    from ..local import txn_store

    root = getattr(ns, "root", None)
    if not isinstance(getattr(ns, "txn_store", None), txn_store.TxnStore) or not isinstance(
        root, str
    ):
        return None
    options = dict(getattr(ns, "storage_options", None) or {})
    return txn_store.open_store(root, options, directory=REBUILD_ANSWERS_DIR)


def rebuild_answer(ns: LanceNamespace, table_id: Sequence[str]) -> dict[str, Any] | None:
    """The answer recorded for ``table_id``'s last rebuild offer (``restore_uuid``,
    ``answer``), if the namespace keeps one."""
    store = _answers(ns)
    return None if store is None else store.get(ids.object_id(ids.check_id(table_id)))


def rebuild_offer(
    ns: LanceNamespace, table_id: Sequence[str], latest: int | None = None
) -> RebuildOffer | None:
    """The indexes to offer to build again, derived from the table's own history: when its
    latest version is a restore (lance's transaction of that version, DescribeTransaction
    with id = table id + version) and lacks indexes the version before it had. ``None``
    when there is nothing to offer or the offer was answered (:func:`answer_rebuild_offer`);
    a version written after the restore ends the offer too. ``latest``: the table's latest
    version as the caller just read it (default: read here, one DescribeTable)."""
    tid = ids.check_id(table_id)
    if latest is None:
        latest = catalog_views.latest_version(ns, tid)
    if not latest or latest < 2:
        return None
    try:
        txn = ns.describe_transaction(DescribeTransactionRequest(id=[*tid, str(latest)]))
    except LanceNamespaceError:
        return None  # no transaction to read (deleted, or a backend without them)
    props = txn.properties or {}
    if props.get("operation") != "Restore":
        return None
    try:
        previous = int(props.get("read_version") or latest - 1)
    except ValueError:
        previous = latest - 1
    uuid = str(props.get("uuid") or latest)
    answered = rebuild_answer(ns, tid)
    if answered and answered.get("restore_uuid") == uuid:
        return None
    lost = _indexes_missing(ns, tid, previous, latest)
    if not lost:
        return None
    restored = _restored_version(ns, tid, latest)
    return RebuildOffer(tid, int(latest), previous, restored, uuid, lost)


def answer_rebuild_offer(ns: LanceNamespace, offer: RebuildOffer, answer: str) -> bool:
    """Record the user's answer (:data:`REBUILT` or :data:`DECLINED`) to ``offer``, so that
    no later session offers it again: one small record per table under the root's
    ``_console/rebuild_answers/``. ``False`` when the namespace has no such place (REST):
    the caller keeps the answer for its session."""
    if answer not in (REBUILT, DECLINED):
        raise invalid(f"an answer to a rebuild offer is {REBUILT} or {DECLINED}, not {answer!r}")
    store = _answers(ns)
    if store is None:
        return False
    store.put(
        ids.object_id(offer.table_id),
        {
            "kind": "rebuild_answer",
            "table_id": list(offer.table_id),
            "version": offer.version,
            "restore_uuid": offer.restore_uuid,
            "answer": answer,
        },
    )
    return True


def rebuild_requests(table_id: Sequence[str], lost: Sequence[LostIndex]) -> list[Any]:
    """The CreateTableIndex requests that build ``lost`` again on the restored version: the
    same name, type and column, with the recorded parameters (the backend chooses the rest, as
    it did for the first build)."""
    fields = set(CreateTableIndexRequest.model_fields)
    return [
        CreateTableIndexRequest(
            id=list(table_id),
            column=ix.column,
            index_type=ix.index_type,
            name=ix.name,
            **{k: v for k, v in ix.params.items() if k in fields},
        )  # fmt: skip
        for ix in lost
    ]
