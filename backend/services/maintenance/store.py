"""Where a namespace's maintenance policy is kept, and saving it (an admin's write, audited).

One record per namespace (``ns:`` + the namespace's catalog object id; the root namespace is
``ns:``), read back by any process that opens the same namespace:

* local and object-store roots: beside the console's other records, under
  ``<root>/_console/maintenance_policies/`` (``backend.local.txn_store``: an atomic file
  replace under a lock on a folder, one object PUT on ``s3://``, ``gs://``, ``az://``);
* REST: the spec has no place for a client's records (no operation writes a namespace's
  properties after it is created), so policies live on the console's host, in
  ``$LANCE_CONSOLE_POLICY_DIR`` (default ``~/.config/lance-console/maintenance_policies``),
  one folder per server (its URL without credentials or query): every console process and
  ``lance-console maintain`` run on that host (or sharing that folder, e.g. a volume mounted
  into a CronJob) reads the same policies.

A record holds the policy's stored form (``policy.Policy.to_dict``), the namespace id, who
saved it and when (the store adds ``updated_at``). Saving and deleting are the operations
:data:`SAVE` and :data:`DELETE` (admins only, ``backend.access.POLICY_OPS``), checked and
recorded by the gate (refused on read-only launches). A policy with problems, a namespace
that does not exist or an override naming a table the namespace does not have is refused
before anything is written, recorded as a refusal.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from lance_namespace import LanceNamespace
from lance_namespace.errors import ErrorCode, LanceNamespaceError

from backend import gate
from backend.errors import make
from backend.local import txn_store
from backend.rules import ids
from backend.spec.fields import epoch_time

from .. import namespaces as nsv
from .policy import DEFAULT_POLICY, Policy, policy_from_dict

POLICY_DIR = "_console/maintenance_policies"
POLICY_DIR_ENV = "LANCE_CONSOLE_POLICY_DIR"
DEFAULT_HOME = Path("~/.config/lance-console/maintenance_policies")
SAVE, DELETE = "save_maintenance_policy", "delete_maintenance_policy"
SAVED, DEFAULT = "saved", "default"


def record_id(namespace_id: Sequence[str]) -> str:
    """The record's id of a namespace's policy."""
    return "ns:" + ids.object_id(list(namespace_id))


def policy_home() -> Path:
    """Where policies of REST namespaces are kept on this host."""
    raw = os.environ.get(POLICY_DIR_ENV)
    return Path(raw).expanduser() if raw else DEFAULT_HOME.expanduser()


def server_folder(uri: str) -> str:
    """The folder of a REST server's policies: its URL without user, password, query or
    fragment, readable and made unique by a digest."""
    from urllib.parse import urlsplit

    parts = urlsplit(uri.strip())
    host = (parts.hostname or "").lower()
    port = f":{parts.port}" if parts.port else ""
    plain = f"{parts.scheme.lower()}://{host}{port}{parts.path.rstrip('/')}"
    readable = re.sub(r"[^A-Za-z0-9.-]+", "_", plain.split("://", 1)[-1]).strip("_")[:80]
    return f"{readable}-{hashlib.sha256(plain.encode()).hexdigest()[:12]}"


def policy_store(ns: LanceNamespace) -> txn_store.TxnStore:
    """The store of ``ns``'s policies (see the module docstring)."""
    root = getattr(ns, "root", None)
    if isinstance(getattr(ns, "txn_store", None), txn_store.TxnStore) and isinstance(root, str):
        options = dict(getattr(ns, "storage_options", None) or {})
        return txn_store.open_store(root, options, directory=POLICY_DIR)
    uri = getattr(ns, "uri", None)
    if not isinstance(uri, str) or not uri:
        raise make(
            ErrorCode.UNSUPPORTED,
            "this namespace has no place for a maintenance policy (neither a root of the "
            "console's nor a REST server URL)",
        )
    return txn_store.FileTxnStore(policy_home() / server_folder(uri))


@dataclass(frozen=True)
class SavedPolicy:
    """A namespace's policy and where it comes from: ``source`` :data:`SAVED` (with who saved
    it and when) or :data:`DEFAULT` (none saved: :data:`policy.DEFAULT_POLICY`)."""

    namespace_id: tuple[str, ...]
    policy: Policy
    source: str
    saved_by: str | None = None
    saved_at: datetime | None = None
    location: str | None = None  # where the record is kept

    def describe(self) -> str:
        where = ids.display_id(self.namespace_id)
        if self.source == DEFAULT:
            return f"namespace {where}: no saved policy, the default applies"
        when = f" on {self.saved_at:%Y-%m-%d %H:%M} UTC" if self.saved_at else ""
        who = f" by {self.saved_by}" if self.saved_by else ""
        return f"namespace {where}: the policy saved{who}{when}"


def _actor(ns: Any) -> str:
    actor = getattr(ns, "actor", None)
    if isinstance(actor, gate.Actor):
        return actor.user
    return gate.Actor.os_user().user


def load_policy(ns: LanceNamespace, namespace_id: Sequence[str]) -> SavedPolicy:
    """The policy saved for ``namespace_id``, else the default. A saved record that is no
    longer valid (edited by hand) is an ``InvalidInputError`` naming its problems."""
    nsid = ids.check_id(namespace_id, what="namespace", allow_root=True)
    store = policy_store(ns)
    try:
        record = store.get(record_id(nsid))
        if record is None:
            return SavedPolicy(tuple(nsid), DEFAULT_POLICY, DEFAULT, location=store.location)
        policy = policy_from_dict(record.get("policy"))
    except LanceNamespaceError as err:
        raise make(
            ErrorCode.INVALID_INPUT,
            f"the maintenance policy saved for namespace {ids.display_id(nsid)} "
            f"({store.location}) cannot be read: {err} Save it again on the Maintenance page.",
        ) from None
    at = epoch_time(record.get("updated_at"))
    saved_by = record.get("saved_by")
    return SavedPolicy(
        tuple(nsid),
        policy,
        SAVED,
        saved_by if isinstance(saved_by, str) else None,
        at,
        location=store.location,
    )


def missing_tables(ns: LanceNamespace, namespace_id: Sequence[str], policy: Policy) -> list[str]:
    """The tables ``policy`` overrides that namespace ``namespace_id`` does not have."""
    if not policy.tables:
        return []
    have = set(nsv.list_table_names(ns, list(namespace_id)))
    return sorted(set(policy.tables) - have)


def check_scope(ns: LanceNamespace, namespace_id: Sequence[str], policy: Policy) -> None:
    """``NamespaceNotFoundError`` when the namespace does not exist, ``TableNotFoundError``
    naming the tables the policy overrides that it does not have (dropped or renamed)."""
    nsid = list(namespace_id)
    if not nsv.namespace_exists(ns, nsid):
        raise make(
            ErrorCode.NAMESPACE_NOT_FOUND, f"namespace {ids.display_id(nsid)} does not exist"
        )
    gone = missing_tables(ns, nsid, policy)
    if gone:
        raise make(
            ErrorCode.TABLE_NOT_FOUND,
            f"the maintenance policy of namespace {ids.display_id(nsid)} names "
            f"{'a table' if len(gone) == 1 else 'tables'} it does not have (dropped or "
            f"renamed?): {', '.join(gone)}. Remove {'its' if len(gone) == 1 else 'their'} "
            "overrides from the policy.",
        )


def save_policy(
    ns: LanceNamespace, namespace_id: Sequence[str], policy: Policy | dict[str, Any]
) -> SavedPolicy:
    """Save ``policy`` (a :class:`Policy` or its stored form) for ``namespace_id``: checked
    first (its values, the namespace, the tables it names), then written (admins only,
    audited). Returns what a later :func:`load_policy` reads."""
    summary: dict[str, Any] = {"id": list(namespace_id or [])}
    with gate.refusals(ns, SAVE, summary, ids=list(namespace_id or [])):
        nsid = ids.check_id(namespace_id, what="namespace", allow_root=True)
        checked = policy_from_dict(policy)
        summary["policy"] = checked.to_dict()
        check_scope(ns, nsid, checked)
    store = policy_store(ns)
    record = {
        "kind": "maintenance_policy",
        "namespace_id": nsid,
        "policy": checked.to_dict(),
        "saved_by": _actor(ns),
    }
    with gate.recorded(ns, SAVE, summary, ids=nsid):
        store.put(record_id(nsid), record)
    return load_policy(ns, nsid)


def delete_policy(ns: LanceNamespace, namespace_id: Sequence[str]) -> bool:
    """Forget ``namespace_id``'s saved policy (the default applies again); ``False`` when
    none was saved. Admins only, audited."""
    nsid = ids.check_id(namespace_id, what="namespace", allow_root=True)
    store = policy_store(ns)
    with gate.recorded(ns, DELETE, {"id": nsid}, ids=nsid):
        return store.delete(record_id(nsid))
