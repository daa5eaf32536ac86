"""The catalogue of malformed and hostile inputs, on both backends.

Every case runs against a real local directory namespace and against a real
``lance.namespace.RestAdapter`` server over the same kind of directory. Each backend works in a
*sandbox*: a temporary directory holding the namespace root and, next to it, files a hostile
request could aim at (``outside/secret.txt``, a real Lance dataset ``outside/other-table``,
manifests copied out of the root, a symbolic link from the root's ``_staging`` to the outside).
The root holds namespaces ``a`` and ``a$b``, tables ``a$t0`` (3 versions, version 4 staged
under ``<root>/_staging``), ``a$b$u0`` (2 versions), ``r`` (2 versions, at the root) and the
declared-only ``a$d``.

For every case: the sandbox is hashed (paths and contents, the root's parent included), the
request is sent, the expected ``lance_namespace.errors`` class must come back (no raw Python,
pydantic or httpx exception), and the sandbox must hash the same afterwards. The console's own
bookkeeping under ``<root>/_console`` (the namespace lock file, FAILED batch records) is
excluded from the digest: the rules allow a refused batch to leave its record there.

The expected answers come from the rule modules (``backend.rules.ids``, ``request_rules``,
``properties``, ``version_ranges``, ``locations``, ``batch_rules``, ``alter_actions``,
``arrow_ipc``, ``connect_options``), not from what the code happens to do. The sandbox is
built once per backend and module; a case that changes it (a bug) fails and the sandbox is
restored from a pristine copy before the next case.

Batches go through ``backend.commit_batch``, the checked commit users call: on the local
backend the commit itself judges the batch; over REST the client's preflight reads the server's
state first (``RestNamespaceClient.batch_commit_tables`` alone checks only what needs no
server).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import struct
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from lance_namespace import (
    AlterTransactionRequest,
    BatchCommitTablesRequest,
    BatchDeleteTableVersionsRequest,
    CommitTableOperation,
    CountTableRowsRequest,
    CreateNamespaceRequest,
    CreateTableIndexRequest,
    CreateTableRequest,
    CreateTableTagRequest,
    CreateTableVersionRequest,
    DeclareTableRequest,
    DeleteFromTableRequest,
    DeleteTableTagRequest,
    DeregisterTableRequest,
    DescribeNamespaceRequest,
    DescribeTableIndexStatsRequest,
    DescribeTableRequest,
    DropNamespaceRequest,
    DropTableIndexRequest,
    DropTableRequest,
    InsertIntoTableRequest,
    ListNamespacesRequest,
    ListTablesRequest,
    ListTableVersionsRequest,
    MergeInsertIntoTableRequest,
    RegisterTableRequest,
    RenameTableRequest,
    TableExistsRequest,
    UpdateTableTagRequest,
)
from lance_namespace.errors import (
    ConcurrentModificationError,
    InvalidInputError,
    LanceNamespaceError,
    NamespaceNotFoundError,
    TableAlreadyExistsError,
    TableBranchNotFoundError,
    TableNotFoundError,
    TableVersionNotFoundError,
    UnsupportedOperationError,
)
from lance_namespace_urllib3_client.models import (
    AlterTransactionAction,
    AlterTransactionSetProperty,
    AlterTransactionSetStatus,
    AlterTransactionUnsetProperty,
    Identity,
    VersionRange,
)

import backend
from backend.errors import describe_error
from backend.services import change_log, row_changes
from tests.conftest import RestServer
from tests.support import (
    StagedVersion,
    ipc_stream_bytes,
    make_table,
    manifest_file,
    op_declare,
    op_delete,
    op_deregister,
    op_version,
    stage,
    table_location,
    tree_digest,
    with_versions,
)
from tests.support import batch as make_batch

LOCAL, REST = "local", "rest"
BOTH = (LOCAL, REST)
T0 = ["a", "t0"]  # 3 versions; version 4 staged under <root>/_staging
U0 = ["a", "b", "u0"]  # 2 versions
R = ["r"]  # 2 versions, root level
DECLARED = ["a", "d"]
TXN = ["batch-" + "0" * 32]  # a well-formed batch transaction id (no such transaction)
SMALL = make_table(3)
SMALL_IPC = ipc_stream_bytes(SMALL)
# The console's own bookkeeping (lock file, batch records, FAILED records of refused batches)
# may change: the rules allow it. Everything else in the sandbox must stay byte for byte.
DIGEST_EXCLUDE = ("root/_console",)


SECRET = "sk-LIVE-0123456789abcdef"  # never shown by an error text
PASSWORD = "hunter2-very-secret"


# -- the sandbox ----------------------------------------------------------------------------------
@dataclass
class Sandbox:
    path: Path  # the sandbox: root + things outside it
    root: Path
    outside: Path
    t0_dir: Path
    u0_dir: Path
    r_dir: Path
    staged: StagedVersion  # a$t0 version 4, under <root>/_staging
    t0_published: Path  # a$t0's own manifest of version 3 (in its _versions)
    r_published: Path  # r's manifest of version 2
    outside_staged: Path  # a copy of the staged manifest outside the root
    outside_published: Path  # a copy of a published manifest outside the root
    symlink: Path  # <root>/_staging/escape.manifest -> ../../outside/staged-copy.manifest
    not_manifest: Path  # <root>/_staging/notes.txt
    staging_subdir: Path  # <root>/_staging/subdir (a directory)
    wrong_version: Path  # <root>/_staging/old-v2.manifest: a$t0's manifest of version 2
    plain_dir: Path  # <root>/plain-dir: a directory without _versions
    cwd: Path  # working directory for connection cases (relative targets land here)

    def rel(self, path: Path) -> str:
        """``path`` relative to the namespace root (``../outside/...`` for outside)."""
        return os.path.relpath(path, self.root)


def build_sandbox(path: Path) -> Sandbox:
    root = path / "root"
    root.mkdir(parents=True)
    ns = backend.connect(str(root))
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    ns.create_namespace(CreateNamespaceRequest(id=["a", "b"]))
    with_versions(ns, T0, 3)
    with_versions(ns, U0, 2)
    with_versions(ns, R, 2)
    ns.declare_table(DeclareTableRequest(id=DECLARED))
    staged = stage(ns, T0)
    t0_dir, u0_dir, r_dir = (table_location(ns, t) for t in (T0, U0, R))
    outside = path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("do not touch\n")
    shutil.copytree(r_dir, outside / "other-table")
    outside_staged = outside / "staged-copy.manifest"
    shutil.copy2(staged.manifest_path, outside_staged)
    t0_published = manifest_file(t0_dir / "_versions", 3)
    outside_published = outside / "published-copy.manifest"
    shutil.copy2(t0_published, outside_published)
    staging = root / "_staging"
    symlink = staging / "escape.manifest"
    symlink.symlink_to(Path("..") / ".." / "outside" / "staged-copy.manifest")
    not_manifest = staging / "notes.txt"
    not_manifest.write_text("this is not a Lance manifest\n")
    wrong_version = staging / "old-v2.manifest"
    shutil.copy2(manifest_file(t0_dir / "_versions", 2), wrong_version)
    staging_subdir = staging / "subdir"
    staging_subdir.mkdir()
    (staging_subdir / "keep.txt").write_text("keep\n")
    plain_dir = root / "plain-dir"
    plain_dir.mkdir()
    (plain_dir / "readme.txt").write_text("no dataset here\n")
    cwd = path / "cwd"
    cwd.mkdir()
    return Sandbox(
        path=path,
        root=root,
        outside=outside,
        t0_dir=t0_dir,
        u0_dir=u0_dir,
        r_dir=r_dir,
        staged=staged,
        t0_published=t0_published,
        r_published=manifest_file(r_dir / "_versions", 2),
        outside_staged=outside_staged,
        outside_published=outside_published,
        symlink=symlink,
        not_manifest=not_manifest,
        staging_subdir=staging_subdir,
        wrong_version=wrong_version,
        plain_dir=plain_dir,
        cwd=cwd,
    )


def digest(sb: Sandbox) -> dict[str, str]:
    """Every path and file hash of the sandbox (the root's parent), minus ``<root>/_console``.

    ``tree_digest`` reads a symbolic link's target, and fails on a dangling one; the link in
    ``_staging`` is recorded by what it points at instead (its target, outside the root, is
    hashed as a file of its own)."""
    link = os.path.relpath(sb.symlink, sb.path)
    out = tree_digest(sb.path, exclude=(*DIGEST_EXCLUDE, link))
    if sb.symlink.is_symlink():
        out[link] = "symlink -> " + os.readlink(sb.symlink)
    return out


def digest_diff(before: dict[str, str], after: dict[str, str]) -> str:
    gone = sorted(set(before) - set(after))
    new = sorted(set(after) - set(before))
    changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    return f"removed {gone[:8]}, created {new[:8]}, changed {changed[:8]}"


class Env:
    """One backend over one sandbox (built once per module); restored when a case changed it."""

    def __init__(self, kind: str, base: Path):
        self.kind = kind
        self.sb = build_sandbox(base / "sandbox")
        self.pristine = base / "pristine"
        shutil.copytree(self.sb.path, self.pristine, symlinks=True)
        self.pristine_digest = digest(self.sb)
        self.server: RestServer | None = None
        self.ns: Any = None
        self._open()

    def _open(self) -> None:
        if self.kind == REST:
            self.server = RestServer(self.sb.root)
            self.ns = backend.connect(self.server.url)
        else:
            self.ns = backend.connect(str(self.sb.root))

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url

    def close(self) -> None:
        close = getattr(self.ns, "close", None)
        if close:
            close()
        if self.server is not None:
            self.server.stop()
            self.server = None

    def restore_if_changed(self) -> None:
        try:
            if digest(self.sb) == self.pristine_digest:
                return
        except OSError:
            pass  # whatever happened, start again from the pristine copy
        self.close()
        shutil.rmtree(self.sb.path)
        shutil.copytree(self.pristine, self.sb.path, symlinks=True)
        self._open()

    def clear_wire_log(self) -> None:
        if self.kind == REST:
            self.ns.wire_log.clear()

    def sent(self) -> list[str]:
        return [e.op for e in self.ns.wire_log] if self.kind == REST else []


@pytest.fixture(scope="module")
def envs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Env]]:
    made: dict[str, Env] = {}

    class Lazy(dict):
        def __missing__(self, kind: str) -> Env:
            env = self[kind] = made[kind] = Env(kind, tmp_path_factory.mktemp(f"bad-{kind}"))
            return env

    yield Lazy()
    for env in made.values():
        env.close()


@pytest.fixture
def use_env(envs: dict[str, Env]) -> Iterator[Callable[[str], Env]]:
    used: list[Env] = []

    def get(kind: str) -> Env:
        env = envs[kind]
        used.append(env)
        return env

    yield get
    for env in used:
        env.restore_if_changed()


def commit_checked(ns: Any, request: Any) -> Any:
    """A batch as users commit it (``backend.commit_batch``: preflight, then the batch)."""
    return backend.commit_batch(ns, request)


# -- cases -----------------------------------------------------------------------------------------
Expected = type[LanceNamespaceError] | dict[str, type[LanceNamespaceError]]


@dataclass(frozen=True)
class Case:
    group: str
    name: str
    call: Callable[[Env], Any]
    expected: Expected = InvalidInputError
    # regex (case-insensitive) the message must contain; a dict gives it per backend
    match: str | dict[str, str | None] | None = None
    backends: tuple[str, ...] = BOTH
    offline: bool = False  # REST: refused before any request is sent
    after: Callable[[Env], None] | None = None  # extra checks once refused
    secrets: tuple[str, ...] = ()  # values no error text may show
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.group}:{self.name}"

    def expected_for(self, kind: str) -> type[LanceNamespaceError]:
        return self.expected[kind] if isinstance(self.expected, dict) else self.expected

    def match_for(self, kind: str) -> str | None:
        if isinstance(self.match, dict):
            return self.match.get(kind)
        if self.expected_for(kind) is UnsupportedOperationError:
            return None  # the server's own words
        return self.match


CASES: list[Case] = []


def case(group: str, name: str, call: Callable[[Env], Any], **kw: Any) -> None:
    CASES.append(Case(group, name, call, **kw))


def table_still_exists(table_id: list[str]) -> Callable[[Env], None]:
    def check(env: Env) -> None:
        env.ns.table_exists(TableExistsRequest(id=table_id))
        assert env.ns.count_table_rows(CountTableRowsRequest(id=table_id)).count > 0

    return check


def latest_is(table_id: list[str], version: int) -> Callable[[Env], None]:
    def check(env: Env) -> None:
        versions = env.ns.list_table_versions(ListTableVersionsRequest(id=table_id)).versions
        assert max(v.version for v in versions) == version

    return check


# ---- ids and names (backend.rules.ids via backend.rules.request_rules: refused before anything is sent) ----
def _ids() -> None:
    g = "ids"
    ns_create = lambda parts: lambda e: e.ns.create_namespace(CreateNamespaceRequest(id=parts))  # noqa: E731
    describe = lambda parts: lambda e: e.ns.describe_table(DescribeTableRequest(id=parts))  # noqa: E731
    sep = "path separator"
    case(g, "create_namespace-slash", ns_create(["/"]), match=sep, offline=True)
    case(g, "create_namespace-backslash", ns_create(["a\\b"]), match=sep, offline=True)
    case(g, "create_namespace-slash-inside", ns_create(["a", "x/y"]), match=sep, offline=True)
    case(
        g,
        "describe_namespace-dotdot",
        lambda e: e.ns.describe_namespace(DescribeNamespaceRequest(id=[".."])),
        match="not a valid",
        offline=True,
    )
    case(
        g,
        "drop_namespace-dot",
        lambda e: e.ns.drop_namespace(DropNamespaceRequest(id=["a", "."])),
        match="not a valid",
        offline=True,
    )
    case(g, "describe_table-dotdot", describe(["a", ".."]), offline=True)
    case(
        g,
        "drop_table-absolute-path-part",
        lambda e: e.ns.drop_table(DropTableRequest(id=[str(e.sb.outside / "other-table")])),
        match=sep,
        offline=True,
    )
    case(
        g,
        "drop_table-absolute-root-part",
        lambda e: e.ns.drop_table(DropTableRequest(id=["a", str(e.sb.root)])),
        match=sep,
        offline=True,
    )
    case(g, "describe_table-nul", describe(["a", "t0\x00"]), match="control", offline=True)
    case(
        g,
        "create_table-newline",
        lambda e: e.ns.create_table(CreateTableRequest(id=["a", "x\ny"]), SMALL_IPC),
        match="control",
        offline=True,
    )
    case(
        g,
        "declare_table-tab",
        lambda e: e.ns.declare_table(DeclareTableRequest(id=["a", "x\ty"])),
        match="control",
        offline=True,
    )
    case(g, "describe_table-delimiter-in-part", describe(["a$t0"]), match="delimiter", offline=True)
    case(
        g,
        "create_namespace-delimiter-in-part",
        ns_create(["a$evil"]),
        match="delimiter",
        offline=True,
    )
    case(
        g, "describe_table-10000-chars", describe(["a", "x" * 10_000]), match="longer", offline=True
    )
    case(g, "create_namespace-10000-chars", ns_create(["n" * 10_000]), match="longer", offline=True)
    case(
        g,
        "create_table-129-chars",
        lambda e: e.ns.create_table(CreateTableRequest(id=["a", "x" * 129]), SMALL_IPC),
        match="longer",
        offline=True,
    )
    case(g, "describe_table-empty-part", describe(["a", ""]), match="empty", offline=True)
    case(
        g,
        "list_tables-empty-part",
        lambda e: e.ns.list_tables(ListTablesRequest(id=["", "a"])),
        match="empty",
        offline=True,
    )
    case(g, "describe_table-empty-id", describe([]), match="at least one part", offline=True)
    case(
        g,
        "drop_namespace-root",
        lambda e: e.ns.drop_namespace(DropNamespaceRequest(id=[])),
        match="at least one part",
        offline=True,
    )
    case(
        g,
        "drop_table-empty-id",
        lambda e: e.ns.drop_table(DropTableRequest(id=[])),
        match="at least one part",
        offline=True,
    )
    case(g, "describe_table-17-parts", describe(["a"] * 17), match="at most 16", offline=True)
    case(g, "create_namespace-17-parts", ns_create(["n"] * 17), match="at most 16", offline=True)
    case(
        g,
        "describe_table-int-part-dict",
        lambda e: e.ns.describe_table({"id": ["a", 5]}),
        offline=True,
    )
    case(
        g,
        "describe_table-int-part-unvalidated",
        lambda e: e.ns.describe_table(DescribeTableRequest.model_construct(id=["a", 5])),
        match="must be a string",
        offline=True,
    )
    case(
        g,
        "drop_table-none-part-unvalidated",
        lambda e: e.ns.drop_table(DropTableRequest.model_construct(id=["a", None])),
        match="must be a string",
        offline=True,
    )
    case(g, "create_namespace-unicode", ns_create(["é"]), match="ASCII", offline=True)
    case(
        g,
        "create_table-unicode",
        lambda e: e.ns.create_table(CreateTableRequest(id=["a", "tablé"]), SMALL_IPC),
        match="ASCII",
        offline=True,
    )
    case(
        g,
        "declare_table-unicode",
        lambda e: e.ns.declare_table(DeclareTableRequest(id=["a", "日本"])),
        match="ASCII",
        offline=True,
    )
    case(
        g,
        "create_table_index-unicode-name",
        lambda e: e.ns.create_table_index(
            CreateTableIndexRequest(id=T0, column="id", index_type="BTREE", name="índice")
        ),
        match="ASCII",
        offline=True,
    )
    case(
        g,
        "create_table_tag-unicode",
        lambda e: e.ns.create_table_tag(CreateTableTagRequest(id=T0, tag="tág", version=1)),
        match="ASCII",
        offline=True,
    )
    case(g, "create_namespace-space", ns_create(["my ns"]), match="not valid", offline=True)
    case(
        g,
        "create_table-space",
        lambda e: e.ns.create_table(CreateTableRequest(id=["a", "t 1"]), SMALL_IPC),
        match="not valid",
        offline=True,
    )
    case(g, "create_namespace-leading-dash", ns_create(["-x"]), match="not valid", offline=True)
    case(
        g, "describe_table-leading-space", describe(["a", " t0"]), match="white space", offline=True
    )
    case(
        g,
        "drop_table_index-dotdot",
        lambda e: e.ns.drop_table_index(DropTableIndexRequest(id=T0, index_name="..")),
        match="not a valid",
        offline=True,
        after=table_still_exists(T0),
    )
    case(
        g,
        "describe_table_index_stats-dotdot",
        lambda e: e.ns.describe_table_index_stats(
            DescribeTableIndexStatsRequest(id=T0, index_name="..")
        ),
        match="not a valid",
        offline=True,
        after=table_still_exists(T0),
    )
    case(
        g,
        "drop_table_index-slash",
        lambda e: e.ns.drop_table_index(DropTableIndexRequest(id=T0, index_name="../../drop")),
        match=sep,
        offline=True,
        after=table_still_exists(T0),
    )
    case(
        g,
        "create_table_index-dotdot-name",
        lambda e: e.ns.create_table_index(
            CreateTableIndexRequest(id=T0, column="id", index_type="BTREE", name="..")
        ),
        offline=True,
    )
    case(
        g,
        "delete_table_tag-dotdot",
        lambda e: e.ns.delete_table_tag(DeleteTableTagRequest(id=T0, tag="..")),
        offline=True,
    )
    case(
        g,
        "describe_table-tag-slash",
        lambda e: e.ns.describe_table(DescribeTableRequest(id=T0, tag="../v1")),
        match=sep,
        offline=True,
    )
    case(
        g,
        "rename_table-new-name-dotdot-slash",
        lambda e: e.ns.rename_table(RenameTableRequest(id=T0, new_table_name="../evil")),
        match=sep,
        offline=True,
    )
    case(
        g,
        "rename_table-new-namespace-dotdot",
        lambda e: e.ns.rename_table(
            RenameTableRequest(id=T0, new_table_name="t9", new_namespace_id=[".."])
        ),
        match="not a valid",
        offline=True,
    )
    case(
        g,
        "register_table-unicode-name",
        lambda e: e.ns.register_table(
            RegisterTableRequest(id=["a", "régistré"], location=e.sb.rel(e.sb.t0_dir))
        ),
        match="ASCII",
        offline=True,
    )


# ---- locations (backend.locations: inside the root, not reserved, not another table) ---------
def _locations() -> None:
    g = "locations"

    def register(location: Callable[[Sandbox], str], **kw: Any) -> Callable[[Env], Any]:
        return lambda e: e.ns.register_table(
            RegisterTableRequest(id=["a", "reg"], location=location(e.sb), **kw)
        )

    nothing_registered = table_missing(["a", "reg"])
    cases: list[tuple[str, Callable[[Sandbox], str], str | dict[str, str] | None]] = [
        ("root-itself-dot", lambda sb: ".", "root"),
        ("root-itself-absolute", lambda sb: str(sb.root), "root"),
        ("catalog", lambda sb: "__manifest", "__manifest"),
        ("console-dir", lambda sb: "_console", "_console"),
        ("staging-dir", lambda sb: "_staging", "_staging"),
        # over REST a part of a dataset is refused by its shape alone, before any read
        (
            "inside-another-table",
            lambda sb: sb.rel(sb.t0_dir / "_versions"),
            {LOCAL: "another table", REST: "inside a Lance dataset"},
        ),
        ("outside-relative", lambda sb: "../outside/other-table", "outside"),
        ("outside-dotdot-through-dir", lambda sb: "plain-dir/../../outside/other-table", "outside"),
        ("outside-absolute", lambda sb: str(sb.outside / "other-table"), "outside"),
        ("outside-file-uri", lambda sb: (sb.outside / "other-table").as_uri(), "outside"),
        ("empty-location", lambda sb: "", None),
        ("nul-in-location", lambda sb: sb.rel(sb.t0_dir) + "\x00", "control"),
    ]
    for name, location, match in cases:
        case(g, f"register_table-{name}", register(location), match=match, after=nothing_registered)
    # Whether a directory exists and holds a dataset only the server can see: the REST client
    # checks the location's shape; these two are the local backend's (and the server's) to refuse.
    # Another table's directory: pylance's server registers it; over REST the rule is the
    # explicit preflight's (tests/backend/test_rest_single_writes.py).
    for name, location, match in [
        ("another-table", lambda sb: sb.rel(sb.t0_dir), "another table"),
        ("root-level-table", lambda sb: sb.rel(sb.r_dir), "another table"),
        ("missing-directory", lambda sb: "missing-dir", "does not exist"),
        ("directory-without-versions", lambda sb: "plain-dir", "_versions"),
    ]:
        case(
            g,
            f"register_table-{name}",
            register(location),
            match=match,
            after=nothing_registered,
            backends=(LOCAL,),
        )

    def declare(location: Callable[[Sandbox], str]) -> Callable[[Env], Any]:
        return lambda e: e.ns.declare_table(
            DeclareTableRequest(id=["a", "dx"], location=location(e.sb))
        )

    not_declared = table_missing(["a", "dx"])
    for name, location, match in [
        ("outside-absolute", lambda sb: str(sb.outside / "new-table"), "outside"),
        ("outside-relative", lambda sb: "../outside/new-table", "outside"),
        ("catalog", lambda sb: "__manifest", "__manifest"),
        ("another-table", lambda sb: str(sb.t0_dir), "another table"),
    ]:
        # The REST client does not check a declared location (the server decides where its
        # tables go): over REST, the server's refusal and an unchanged disk are what counts.
        case(
            g,
            f"declare_table-{name}",
            declare(location),
            match={LOCAL: match, REST: None},
            after=not_declared,
        )


def table_missing(table_id: list[str]) -> Callable[[Env], None]:
    def check(env: Env) -> None:
        with pytest.raises(TableNotFoundError):
            env.ns.table_exists(TableExistsRequest(id=table_id))

    return check


# ---- manifest paths (backend.locations.manifest_problem; batch: validate.py) -------------------
# (name, manifest_path, message, backends, decidable from the path alone). The REST client
# can check the path against the table's location (backend.locations.remote_manifest_problem)
# but cannot read the server's files: whether the file is a manifest, of which version, or a
# directory, only the server can tell.
MANIFEST_TARGETS: list[tuple[str, Callable[[Sandbox], str], str | None, tuple[str, ...], bool]] = [
    ("outside-root", lambda sb: str(sb.outside_staged), "outside", BOTH, True),
    ("outside-relative", lambda sb: "../outside/staged-copy.manifest", "outside", BOTH, True),
    ("outside-file-uri", lambda sb: sb.outside_staged.as_uri(), "outside", BOTH, True),
    ("outside-published-copy", lambda sb: str(sb.outside_published), "outside", BOTH, True),
    ("another-tables-published", lambda sb: str(sb.r_published), "outside", BOTH, True),
    ("own-versions-dir", lambda sb: str(sb.t0_published), "published", BOTH, True),
    ("symlink-leaving-root", lambda sb: str(sb.symlink), "outside", (LOCAL,), False),
    ("not-a-manifest", lambda sb: str(sb.not_manifest), None, BOTH, False),
    ("manifest-of-another-version", lambda sb: str(sb.wrong_version), "version 2", BOTH, False),
    ("a-directory", lambda sb: str(sb.staging_subdir), "regular file", BOTH, False),
    ("empty", lambda sb: "", None, BOTH, True),
    ("nul-byte", lambda sb: sb.staged.manifest_path + "\x00.txt", "control|null", BOTH, True),
]


def _manifests() -> None:
    g = "manifests"
    for name, target, match, backends, by_path in MANIFEST_TARGETS:
        # A single CreateTableVersion goes to the server when its path passes the client's
        # rule: what the file holds only the server can check (pylance's RestAdapter moves
        # whatever file it is given), so those cases are the local backend's.
        backends = backends if by_path else (LOCAL,)
        case(
            g,
            f"create_table_version-{name}",
            lambda e, target=target: e.ns.create_table_version(
                CreateTableVersionRequest(id=T0, version=4, manifest_path=target(e.sb))
            ),
            match={LOCAL: match, REST: match if by_path else None},
            backends=backends,
            after=latest_is(T0, 3),
        )
    for name, target, match, backends, by_path in MANIFEST_TARGETS:
        # What the path alone shows is refused by the client before sending; the rest of a
        # batch that passes the client's rules goes to the server, and pylance's RestAdapter
        # has no BatchCommitTables: it answers "not supported" (nothing is applied).
        expected: Expected = {
            LOCAL: InvalidInputError,
            REST: InvalidInputError if by_path else UnsupportedOperationError,
        }
        case(
            g,
            f"batch-create_table_version-{name}",
            lambda e, target=target: commit_checked(
                e.ns, make_batch(op_version(T0, e.sb.staged, manifest_path=target(e.sb)))
            ),
            expected=expected,
            match=match,
            backends=backends,
            after=latest_is(T0, 3),
        )


# ---- version ranges (backend.rules.version_ranges: start >= 1, end > start, never the latest) --------
RANGES: list[tuple[str, list[tuple[int, int]], str, bool]] = [
    # name, ranges, message, refused by the static rules (REST: before anything is sent)
    ("start-0", [(0, 2)], "start at 1", True),
    ("negative-start", [(-1, 2)], "start at 1", True),
    ("end-before-start", [(3, 2)], "empty or inverted", True),
    ("empty-range", [(2, 2)], "empty or inverted", True),
    ("end-minus-2", [(1, -2)], "empty or inverted", True),
    ("covers-latest", [(2, 4)], "latest version", False),
    ("through-latest-minus-1", [(2, -1)], "latest version", False),
    ("all-versions-0-to-minus-1", [(0, -1)], "start at 1", True),
    ("no-ranges", [], "no version ranges", True),
]


def _ranges() -> None:
    g = "ranges"
    for name, pairs, match, static in RANGES:
        ranges = [VersionRange(start_version=s, end_version=e) for s, e in pairs]
        case(
            g,
            f"batch_delete_table_versions-{name}",
            lambda e, ranges=ranges: e.ns.batch_delete_table_versions(
                BatchDeleteTableVersionsRequest(id=T0, ranges=ranges)
            ),
            match=match,
            offline=static,
            after=latest_is(T0, 3),
        )
    case(
        g,
        "batch_delete_table_versions-1001-ranges",
        lambda e: e.ns.batch_delete_table_versions(
            BatchDeleteTableVersionsRequest(
                id=T0, ranges=[VersionRange(start_version=1, end_version=2)] * 1001
            )
        ),
        match="at most 1000",
        offline=True,
    )
    case(
        g,
        "batch_delete_table_versions-string-bounds-dict",
        lambda e: e.ns.batch_delete_table_versions(
            {"id": T0, "ranges": [{"start_version": "1", "end_version": 2}]}
        ),
        offline=True,
    )
    case(
        g,
        "batch_delete_table_versions-missing-table",
        lambda e: e.ns.batch_delete_table_versions(
            BatchDeleteTableVersionsRequest(
                id=["a", "ghost"], ranges=[VersionRange(start_version=1, end_version=2)]
            )
        ),
        expected=TableNotFoundError,
    )
    for name, pairs, match, _static in RANGES:
        case(
            g,
            f"batch-delete_table_versions-{name}",
            lambda e, pairs=pairs: commit_checked(e.ns, make_batch(op_delete(T0, *pairs))),
            match=match,
            after=latest_is(T0, 3),
        )
    case(
        g,
        "batch-delete-the-version-created-before",
        lambda e: commit_checked(
            e.ns, make_batch(op_version(T0, e.sb.staged), op_delete(T0, (4, 5)))
        ),
        after=latest_is(T0, 3),
    )


# ---- batch commit shape (backend.rules.batch_rules: checked before any lock or write) ----------------
def _batch_shape() -> None:
    g = "batch"
    commit = lambda *ops: lambda e: commit_checked(e.ns, make_batch(*ops))  # noqa: E731
    case(
        g,
        "empty-batch",
        lambda e: commit_checked(e.ns, BatchCommitTablesRequest(operations=[])),
        match="empty",
        offline=True,
    )
    case(g, "operation-without-kind", commit(CommitTableOperation()), match="none", offline=True)
    case(
        g,
        "operation-with-two-kinds",
        commit(
            CommitTableOperation(
                declare_table=DeclareTableRequest(id=["a", "n1"]),
                deregister_table=DeregisterTableRequest(id=T0),
            )
        ),
        match="exactly one",
        offline=True,
    )
    case(
        g,
        "declare-then-deregister",
        commit(op_declare(["a", "n1"]), op_deregister(["a", "n1"])),
        match="declared by operation 1",
    )
    case(
        g,
        "declare-an-existing-table",
        commit(op_declare(T0)),
        expected=TableAlreadyExistsError,
    )
    case(
        g,
        "declare-unicode-name",
        commit(op_declare(["a", "nouvé"])),
        match="ASCII",
        offline=True,
    )
    case(
        g,
        "declare-dotdot-name",
        commit(op_declare(["a", ".."])),
        match="not a valid",
        offline=True,
    )
    case(
        g,
        "declare-300-properties",
        commit(op_declare(["a", "n1"], properties={f"k{i}": "v" for i in range(300)})),
        match="at most 256",
    )
    case(
        g,
        "version-not-latest-plus-one",
        lambda e: commit_checked(e.ns, make_batch(op_version(T0, e.sb.staged, version=9))),
        expected=ConcurrentModificationError,
        match="not the next version",
        after=latest_is(T0, 3),
    )
    case(
        g,
        "version-equal-to-latest",
        lambda e: commit_checked(e.ns, make_batch(op_version(T0, e.sb.staged, version=3))),
        expected=ConcurrentModificationError,
        match="version 3 is taken: the table is at version 3, so the next is 4",
        after=latest_is(T0, 3),
    )
    case(
        g,
        "version-0",
        lambda e: commit_checked(
            e.ns,
            make_batch(
                CommitTableOperation(
                    create_table_version=CreateTableVersionRequest(
                        id=T0, version=0, manifest_path=e.sb.staged.manifest_path
                    )
                )
            ),
        ),
        match=r"version number \(1 or more\)",
    )
    case(
        g,
        "same-version-twice",
        lambda e: commit_checked(
            e.ns, make_batch(op_version(T0, e.sb.staged), op_version(T0, e.sb.staged))
        ),
        match="already created by operation 1",
        after=latest_is(T0, 3),
    )
    case(
        g,
        "operation-after-deregister",
        commit(op_deregister(U0), op_delete(U0, (1, 2))),
        match="nothing can follow",
    )
    case(
        g,
        "table-in-missing-namespace",
        commit(op_declare(["ghost", "t"])),
        expected=NamespaceNotFoundError,
    )
    case(
        g,
        "deregister-missing-table",
        commit(op_deregister(["a", "ghost"])),
        expected=TableNotFoundError,
    )
    case(
        g,
        "unknown-naming-scheme",
        lambda e: commit_checked(e.ns, make_batch(op_version(T0, e.sb.staged, naming_scheme="V3"))),
        match="naming scheme",
    )
    case(
        g,
        "operations-not-a-list-dict",
        lambda e: commit_checked(e.ns, {"operations": "declare everything"}),
    )
    case(
        g,
        "declare-with-location-outside-root",
        lambda e: commit_checked(
            e.ns, make_batch(op_declare(["a", "n1"], location=str(e.sb.outside / "n1")))
        ),
        # local: the directory namespace chooses locations (validate.py); pylance's RestAdapter
        # has no BatchCommitTables, so a batch passing the client's rules is "not supported".
        expected={LOCAL: InvalidInputError, REST: UnsupportedOperationError},
        after=table_missing(["a", "n1"]),
    )
    case(
        g,
        "10001-operations",
        lambda e: commit_checked(
            e.ns,
            BatchCommitTablesRequest.model_construct(
                operations=[
                    CommitTableOperation.model_construct(
                        deregister_table=DeregisterTableRequest.model_construct(id=T0)
                    )
                ]
                * 10_001
            ),
        ),
        match="at most 10,000",
        offline=True,
        after=table_still_exists(T0),
        # local: refused while another holder keeps the namespace lock, and without a record
        extra={"no_record": True, "lock_held": True},
    )


# ---- properties (backend.rules.properties: at most 256 entries, 64 KiB values, no control keys) ----
def _properties() -> None:
    g = "properties"
    big = {f"k{i}": "v" for i in range(300)}
    huge_value = {"k": "x" * (100 * 1024)}
    control_key = {"bell\x07key": "v"}
    too_much = {f"k{i}": "y" * 60_000 for i in range(20)}  # 1.2 MB in all
    empty_key = {"": "v"}

    def create_ns(props: Any) -> Callable[[Env], Any]:
        return lambda e: e.ns.create_namespace(
            CreateNamespaceRequest.model_construct(id=["pn"], properties=props)
        )

    def declare(props: Any) -> Callable[[Env], Any]:
        return lambda e: e.ns.declare_table(
            DeclareTableRequest.model_construct(id=["a", "pd"], properties=props)
        )

    def create_tbl(props: Any) -> Callable[[Env], Any]:
        return lambda e: e.ns.create_table(
            CreateTableRequest.model_construct(id=["a", "pt"], properties=props), SMALL_IPC
        )

    for op, make in (
        ("create_namespace", create_ns),
        ("declare_table", declare),
        ("create_table", create_tbl),
    ):
        case(g, f"{op}-300-properties", make(big), match="at most 256", offline=True)
        case(g, f"{op}-100KiB-value", make(huge_value), match="longer than", offline=True)
        case(g, f"{op}-control-character-key", make(control_key), match="control", offline=True)
        case(g, f"{op}-non-string-value", make({"k": 5}), match="must be a string", offline=True)
        case(g, f"{op}-empty-key", make(empty_key), match="non-empty", offline=True)
        case(g, f"{op}-1.2MB-in-all", make(too_much), match="bytes in all", offline=True)
    case(
        g,
        "create_namespace-non-string-value-dict",
        lambda e: e.ns.create_namespace({"id": ["pn"], "properties": {"k": 5}}),
        offline=True,
    )
    case(
        g,
        "declare_table-non-string-value-dict",
        lambda e: e.ns.declare_table({"id": ["a", "pd"], "properties": {"k": ["v"]}}),
        offline=True,
    )
    case(
        g,
        "create_table-non-string-value-dict",
        lambda e: e.ns.create_table({"id": ["a", "pt"], "properties": {"k": None}}, SMALL_IPC),
        offline=True,
    )
    case(
        g,
        "create_namespace-properties-not-a-mapping",
        create_ns(["k=v"]),
        match="mapping",
        offline=True,
    )


# ---- request bodies (backend.arrow.ipc.check_ipc_stream before pylance or a server) ----------
GARBAGE = b"this is not arrow!!"  # 19 bytes
assert len(GARBAGE) == 19
TRUNCATED = ipc_stream_bytes(make_table(50))[:700]
HUGE_METADATA = b"\xff\xff\xff\xff" + struct.pack("<i", 0x7FFFFFF0) + b"\x00" * 16
FAKE_FILE = b"ARROW1\x00\x00" + b"\x01" * 32


def _bodies() -> None:
    g = "bodies"
    bodies: list[tuple[str, Any, str | None]] = [
        ("garbage-19-bytes", GARBAGE, "not an Arrow IPC stream"),
        ("empty", b"", "empty"),
        ("truncated-stream", TRUNCATED, None),
        ("huge-claimed-metadata-length", HUGE_METADATA, None),
        ("fake-ipc-file", FAKE_FILE, "Arrow IPC file"),
        ("a-string", "id,cat\n1,a\n", None),
        ("none", None, None),
    ]
    for name, body, match in bodies:
        case(
            g,
            f"create_table-{name}",
            lambda e, body=body: e.ns.create_table(CreateTableRequest(id=["a", "nb"]), body),
            match=match,
            offline=True,
            after=table_missing(["a", "nb"]),
        )
        case(
            g,
            f"insert_into_table-{name}",
            lambda e, body=body: e.ns.insert_into_table(InsertIntoTableRequest(id=T0), body),
            match=match,
            offline=True,
            after=latest_is(T0, 3),
        )
    case(
        g,
        "merge_insert_into_table-garbage",
        lambda e: e.ns.merge_insert_into_table(
            MergeInsertIntoTableRequest(id=T0, on=["id"]), GARBAGE
        ),
        offline=True,
        after=latest_is(T0, 3),
    )


# ---- alter transaction (backend.rules.alter_actions.parse_actions via request_rules) ----------------
def _alter() -> None:
    g = "alter"

    def alter(actions: list[Any]) -> Callable[[Env], Any]:
        return lambda e: e.ns.alter_transaction(
            AlterTransactionRequest.model_construct(id=TXN, actions=actions)
        )

    status = lambda s: AlterTransactionAction(set_status_action=AlterTransactionSetStatus(status=s))  # noqa: E731
    setp = lambda k, v="v", m=None: AlterTransactionAction(  # noqa: E731
        set_property_action=AlterTransactionSetProperty(key=k, value=v, mode=m)
    )
    unset = lambda k, m=None: AlterTransactionAction(  # noqa: E731
        unset_property_action=AlterTransactionUnsetProperty(key=k, mode=m)
    )
    case(
        g,
        "two-set-status",
        alter([status("Canceled"), status("Failed")]),
        match="only one set-status",
        offline=True,
    )
    case(g, "duplicate-key", alter([setp("k"), unset("k")]), match="already changed", offline=True)
    case(
        g,
        "unknown-status",
        alter([status("Done")]),
        match="unknown transaction status",
        offline=True,
    )
    case(
        g,
        "unknown-set-mode",
        alter([setp("k", m="Sometimes")]),
        match="unknown set-property mode",
        offline=True,
    )
    case(
        g,
        "unknown-unset-mode",
        alter([unset("k", m="Overwrite")]),
        match="unknown unset-property mode",
        offline=True,
    )
    case(g, "empty-key", alter([setp("")]), match="non-empty key", offline=True)
    case(g, "blank-key", alter([unset("   ")]), match="non-empty key", offline=True)
    case(g, "no-actions", alter([]), match="at least one action", offline=True)
    case(
        g,
        "action-without-kind",
        alter([AlterTransactionAction()]),
        match="exactly one",
        offline=True,
    )
    case(
        g,
        "action-with-two-kinds",
        alter(
            [
                AlterTransactionAction(
                    set_status_action=AlterTransactionSetStatus(status="Canceled"),
                    unset_property_action=AlterTransactionUnsetProperty(key="k"),
                )
            ]
        ),
        match="exactly one",
        offline=True,
    )
    case(g, "set-without-value", alter([setp("k", v=None)]), match="needs a value", offline=True)
    case(
        g,
        "101-actions",
        alter([setp(f"k{i}") for i in range(101)]),
        match="at most 100",
        offline=True,
    )
    case(
        g,
        "no-actions-dict",
        lambda e: e.ns.alter_transaction({"id": TXN, "actions": []}),
        offline=True,
    )


# ---- requests as dicts with wrong types (pydantic errors become InvalidInputError) ------------
def _dicts() -> None:
    g = "dicts"
    case(
        g,
        "list_tables-id-not-a-list",
        lambda e: e.ns.list_tables({"id": "not-a-list"}),
        offline=True,
    )
    case(g, "describe_table-int-parts", lambda e: e.ns.describe_table({"id": [1, 2]}), offline=True)
    case(g, "list_tables-id-a-dict", lambda e: e.ns.list_tables({"id": {"a": 1}}), offline=True)
    case(
        g,
        "list_namespaces-negative-limit",
        lambda e: e.ns.list_namespaces({"limit": -5}),
        match="limit",
        offline=True,
    )
    case(
        g,
        "list_namespaces-limit-too-large",
        lambda e: e.ns.list_namespaces({"limit": 100_001}),
        match="limit",
        offline=True,
    )
    case(
        g,
        "list_tables-limit-string",
        lambda e: e.ns.list_tables({"id": ["a"], "limit": "x"}),
        offline=True,
    )
    case(
        g,
        "describe_table-negative-version",
        lambda e: e.ns.describe_table({"id": T0, "version": -1}),
        offline=True,
    )
    case(
        g,
        "describe_table-bool-version",
        lambda e: e.ns.describe_table({"id": T0, "version": True}),
        offline=True,
    )
    case(g, "describe_table-a-string", lambda e: e.ns.describe_table("a$t0"), offline=True)
    case(g, "describe_table-a-list", lambda e: e.ns.describe_table(["a", "t0"]), offline=True)
    case(
        g,
        "create_table_version-string-version",
        lambda e: e.ns.create_table_version(
            {"id": T0, "version": "4", "manifest_path": e.sb.staged.manifest_path}
        ),
        offline=True,
        after=latest_is(T0, 3),
    )
    case(
        g,
        "create_table_version-int-manifest-path",
        lambda e: e.ns.create_table_version({"id": T0, "version": 4, "manifest_path": 4}),
        offline=True,
        after=latest_is(T0, 3),
    )
    case(
        g,
        "batch_delete_table_versions-ranges-a-string",
        lambda e: e.ns.batch_delete_table_versions({"id": T0, "ranges": "1-3"}),
        offline=True,
        after=latest_is(T0, 3),
    )
    case(
        g,
        "drop_table-id-a-string",
        lambda e: e.ns.drop_table({"id": "a$t0"}),
        offline=True,
        after=table_still_exists(T0),
    )
    case(
        g,
        "create_table_tag-negative-version-unvalidated",
        lambda e: e.ns.create_table_tag(
            CreateTableTagRequest.model_construct(id=T0, tag="v1", version=-1)
        ),
        match="version number",
        offline=True,
    )
    case(
        g,
        "list_tables-bool-limit-unvalidated",
        lambda e: e.ns.list_tables(ListTablesRequest.model_construct(id=["a"], limit=True)),
        match="limit",
        offline=True,
    )


# ---- text fields and per-request headers (request_rules; connect_options for headers) -------
def _fields() -> None:
    g = "fields"
    case(
        g,
        "delete_from_table-nul-in-predicate",
        lambda e: e.ns.delete_from_table(DeleteFromTableRequest(id=T0, predicate="id >= 0\x00")),
        match="control",
        offline=True,
        after=latest_is(T0, 3),
    )
    case(
        g,
        "delete_from_table-70000-char-predicate",
        lambda e: e.ns.delete_from_table(
            DeleteFromTableRequest(id=T0, predicate="id >= 0" + " OR id >= 0" * 6400)
        ),
        match="longer than",
        offline=True,
        after=latest_is(T0, 3),
    )
    case(
        g,
        "count_table_rows-escape-in-predicate",
        lambda e: e.ns.count_table_rows(CountTableRowsRequest(id=T0, predicate="id > 1\x1b[2J")),
        match="control",
        offline=True,
    )
    # context and identity travel as HTTP headers: REST only (the local backend ignores them).
    case(
        g,
        "context-header-crlf-injection",
        lambda e: e.ns.describe_table(
            DescribeTableRequest(id=T0, context={"header.X-Note": "v\r\nX-Injected: 1"})
        ),
        match="control",
        backends=(REST,),
        offline=True,
    )
    case(
        g,
        "context-header-name-with-space",
        lambda e: e.ns.describe_table(
            DescribeTableRequest(id=T0, context={"header.Bad Name": "v"})
        ),
        match="header",
        backends=(REST,),
        offline=True,
    )
    case(
        g,
        "identity-api-key-newline",
        lambda e: e.ns.describe_table(
            DescribeTableRequest(id=T0, identity=Identity(api_key=SECRET + "\n"))
        ),
        match="API key",
        backends=(REST,),
        offline=True,
        secrets=(SECRET,),
    )


# ---- branches: a branch's change log, row compare, restore and tags (backend.services) ----
def _branches() -> None:
    from backend.services import restore as restoresv
    from backend.services import tags as tagsv

    g = "branches"
    gone = TableBranchNotFoundError
    nope = "no branch 'nope'"
    case(g, "change_log-unknown", lambda e: change_log.change_log(e.ns, T0, "nope"), expected=gone,
         match=nope)  # fmt: skip
    case(
        g,
        "row_changes-unknown",
        lambda e: row_changes.row_changes(e.ns, T0, 1, 3, key="id", branch="nope"),
        expected=gone,
        match=nope,
    )
    case(
        g,
        "row_changes-version-beyond",
        lambda e: row_changes.row_changes(e.ns, T0, 1, 99, key="id"),
        expected=TableVersionNotFoundError,
        match="has no version 99 .it has versions 1 to 3",
    )
    case(
        g,
        "row_changes-unknown-key",
        lambda e: row_changes.row_changes(e.ns, T0, 1, 3, key="nope"),
        match="key column nope is not in version 1",
    )
    case(
        g,
        "row_changes-reversed",
        lambda e: row_changes.row_changes(e.ns, T0, 3, 1, key="id"),
        match="must be older",
    )
    case(
        g,
        "branch_changes-main",
        lambda e: row_changes.branch_changes(e.ns, T0, "main", key="id"),
        match="default branch",
    )
    case(
        g,
        "branch_changes-unknown",
        lambda e: row_changes.branch_changes(e.ns, T0, "nope", key="id"),
        expected=gone,
        match=nope,
    )
    case(
        g,
        "restore_version-unknown-branch",
        lambda e: restoresv.restore_version(e.ns, T0, 1, branch="nope"),
        expected=gone,
        match=nope,
    )
    case(
        g,
        "create_tag-unknown-branch",
        lambda e: tagsv.create_tag(e.ns, T0, "x", 1, branch="nope"),
        expected=gone,
        match=nope,
    )
    case(
        g,
        "create_table_tag-unknown-branch",
        lambda e: e.ns.create_table_tag(
            CreateTableTagRequest(id=T0, tag="x", version=1, branch="nope")
        ),
        expected=gone,
        match="no branch 'nope'",
    )
    case(
        g,
        "update_table_tag-unknown-branch",
        lambda e: e.ns.update_table_tag(
            UpdateTableTagRequest(id=T0, tag="x", version=1, branch="nope")
        ),
        expected=gone,
        match="no branch 'nope'",
    )


for _group in (
    _fields,
    _ids,
    _locations,
    _manifests,
    _ranges,
    _batch_shape,
    _properties,
    _bodies,
    _alter,
    _dicts,
    _branches,
):
    _group()

PARAMS = [pytest.param(kind, c, id=f"{kind}-{c.id}") for c in CASES for kind in c.backends]


def _problems_of(
    env: Env, c: Case, run: Callable[[], Any]
) -> tuple[list[str], BaseException | None]:
    """Run ``run`` in the sandbox; what is wrong with the outcome (empty list: nothing)."""
    before = digest(env.sb)
    records_before = _records(env)
    env.clear_wire_log()
    problems: list[str] = []
    err: BaseException | None = None
    lock = _hold_namespace_lock(env) if c.extra.get("lock_held") else None
    try:
        answer = run()
    except Exception as exc:  # noqa: BLE001 - any escape is what this test looks for
        err = exc
    else:
        problems.append(f"accepted: answered {type(answer).__name__} {str(answer)[:200]}")
        close = getattr(answer, "close", None)
        if callable(close):
            close()
    if lock is not None and lock.release():
        problems.append("waited for the namespace lock: the request was not refused up front")
    expected = c.expected_for(env.kind)
    if err is not None:
        if not isinstance(err, expected):
            problems.append(f"raised {type(err).__module__}.{type(err).__name__}: {err}")
        elif c.match_for(env.kind) and not _matches(str(c.match_for(env.kind)), str(err)):
            problems.append(f"message does not mention {c.match_for(env.kind)!r}: {err}")
    if c.offline and env.kind == REST and env.sent():
        problems.append(f"sent {env.sent()} before refusing")
    after = digest(env.sb)
    if after != before:
        problems.append("the sandbox changed: " + digest_diff(before, after))
    if c.extra.get("no_record") and _records(env) != records_before:
        problems.append("a batch record was written: the batch was not refused up front")
    for secret in c.secrets:
        if err is not None:
            texts = (str(err), repr(err), str(describe_error(err)), str(err.__cause__ or ""))
            if any(secret in t for t in texts):
                problems.append("the error text shows the secret value")
    return problems, err


class _HeldLock:
    """The local namespace's writer lock (``flock`` on ``_console/namespace.lock``) held by this
    test through its own file descriptor; let go after ``patience`` seconds so that a backend
    that waits for it cannot hang the test. ``release()`` says whether someone waited."""

    def __init__(self, path: Path, patience: float = 2.0):
        self._fcntl = fcntl
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self._gave_up = threading.Event()
        self._guard = threading.Lock()
        self._timer = threading.Timer(patience, self._give_up)
        self._timer.start()

    def _give_up(self) -> None:
        with self._guard:
            if self._fd >= 0:
                self._gave_up.set()
                self._close()

    def _close(self) -> None:
        self._fcntl.flock(self._fd, self._fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = -1

    def release(self) -> bool:
        self._timer.cancel()
        with self._guard:
            if self._fd >= 0:
                self._close()
        return self._gave_up.is_set()


def _hold_namespace_lock(env: Env) -> _HeldLock | None:
    if env.kind != LOCAL:
        return None  # REST: "offline" shows the refusal happened before anything was sent
    return _HeldLock(env.sb.root / "_console" / "namespace.lock")


def _matches(pattern: str, text: str) -> bool:
    return re.search(pattern, text, re.IGNORECASE) is not None


def _records(env: Env) -> list[str]:
    d = env.sb.root / "_console" / "transactions"
    return sorted(os.listdir(d)) if d.is_dir() else []


@pytest.mark.parametrize(("kind", "c"), PARAMS)
def test_bad_input_is_refused_and_changes_nothing(
    use_env: Callable[[str], Env], kind: str, c: Case
) -> None:
    env = use_env(kind)
    problems, _err = _problems_of(env, c, lambda: c.call(env))
    if not problems and c.after is not None:
        c.after(env)
    assert not problems, f"{kind} {c.id}: " + "; ".join(problems)


# -- connection options (backend.connect -> connect_options / LocalNamespace options) ----------


@dataclass(frozen=True)
class ConnectCase:
    name: str
    kind: str  # the sandbox used: REST cases connect to its real server
    target: Callable[[Env], str]
    options: dict[str, Any] = field(default_factory=dict)
    match: str | None = None
    secrets: tuple[str, ...] = ()


def _url(e: Env) -> str:
    return e.url


CONNECT_CASES = [
    ConnectCase(
        "rest-url-user-password",
        REST,
        lambda e: e.url.replace("http://", f"http://admin:{PASSWORD}@"),
        match="user name or password",
        secrets=(PASSWORD,),
    ),
    ConnectCase(
        "rest-url-query-string",
        REST,
        lambda e: e.url + "/?api_key=" + SECRET,
        match="query",
        secrets=(SECRET,),
    ),
    ConnectCase("rest-url-fragment", REST, lambda e: e.url + "/#frag", match="fragment"),
    ConnectCase("rest-url-no-host", REST, lambda e: "http://", match="no host"),
    ConnectCase(
        "rest-url-port-out-of-range", REST, lambda e: "http://127.0.0.1:99999", match="port"
    ),
    ConnectCase("rest-url-with-space", REST, lambda e: e.url + "/a b", match="white space"),
    ConnectCase("ftp-url", REST, lambda e: e.url.replace("http://", "ftp://"), match="scheme"),
    ConnectCase("timeout-0", REST, _url, {"timeout": 0}, match="timeout"),
    ConnectCase("timeout-negative", REST, _url, {"timeout": -1}, match="timeout"),
    ConnectCase("timeout-not-a-number", REST, _url, {"timeout": "abc"}, match="timeout"),
    ConnectCase("timeout-1e9", REST, _url, {"timeout": 1e9}, match="timeout"),
    ConnectCase("timeout-nan", REST, _url, {"timeout": float("nan")}, match="timeout"),
    ConnectCase("max_retries-negative", REST, _url, {"max_retries": -1}, match="max_retries"),
    ConnectCase("max_retries-11", REST, _url, {"max_retries": 11}, match="max_retries"),
    ConnectCase("max_retries-2.5", REST, _url, {"max_retries": 2.5}, match="max_retries"),
    ConnectCase("max_retries-string", REST, _url, {"max_retries": "2.0"}, match="max_retries"),
    ConnectCase("delimiter-empty", REST, _url, {"delimiter": ""}, match="delimiter"),
    ConnectCase("delimiter-two-slashes", REST, _url, {"delimiter": "//"}, match="delimiter"),
    ConnectCase("delimiter-slash", REST, _url, {"delimiter": "/"}, match="delimiter"),
    ConnectCase("delimiter-percent", REST, _url, {"delimiter": "%"}, match="delimiter"),
    ConnectCase(
        "api_key-newline",
        REST,
        _url,
        {"api_key": SECRET + "\n"},
        match="API key",
        secrets=(SECRET,),
    ),
    ConnectCase(
        "api_key-carriage-return",
        REST,
        _url,
        {"api_key": SECRET + "\r"},
        match="API key",
        secrets=(SECRET,),
    ),
    ConnectCase(
        "api_key-nul", REST, _url, {"api_key": SECRET + "\x00"}, match="API key", secrets=(SECRET,)
    ),
    ConnectCase(
        "api_key-non-ascii",
        REST,
        _url,
        {"api_key": SECRET + "é"},
        match="API key",
        secrets=(SECRET,),
    ),
    ConnectCase(
        "auth_token-newline",
        REST,
        _url,
        {"auth_token": "\n" + SECRET},
        match="token",
        secrets=(SECRET,),
    ),
    ConnectCase(
        "secret-header-newline",
        REST,
        _url,
        {"headers": {"X-Api-Key": SECRET + "\nX-Evil: 1"}},
        match="header",
        secrets=(SECRET,),
    ),
    ConnectCase(
        "header-name-with-space", REST, _url, {"headers": {"Bad Header": "v"}}, match="header name"
    ),
    ConnectCase("headers-not-a-mapping", REST, _url, {"headers": ["X-A: 1"]}, match="headers"),
    ConnectCase(
        "unknown-rest-option", REST, _url, {"api_keys": SECRET}, match="unknown", secrets=(SECRET,)
    ),
    ConnectCase("local-target-nul", LOCAL, lambda e: str(e.sb.root) + "\x00evil", match="control"),
    ConnectCase(
        "local-target-newline", LOCAL, lambda e: str(e.sb.root) + "\nevil", match="control"
    ),
    ConnectCase(
        "local-target-is-a-file",
        LOCAL,
        lambda e: str(e.sb.outside / "secret.txt"),
        match="not a directory",
    ),
    ConnectCase(
        "local-api_key",
        LOCAL,
        lambda e: str(e.sb.root),
        {"api_key": SECRET},
        match="only apply to REST",
        secrets=(SECRET,),
    ),
    ConnectCase(
        "local-timeout", LOCAL, lambda e: str(e.sb.root), {"timeout": 5}, match="only apply to REST"
    ),
    ConnectCase(
        "local-unknown-option",
        LOCAL,
        lambda e: str(e.sb.root),
        {"colour": "blue"},
        match="unknown option",
    ),
    ConnectCase(
        "local-delimiter-slash",
        LOCAL,
        lambda e: str(e.sb.root),
        {"delimiter": "/"},
        match="delimiter",
    ),
    ConnectCase(
        "local-secret-storage-option-newline",
        LOCAL,
        lambda e: str(e.sb.root),
        {"storage_options": {"aws_secret_access_key": SECRET + "\n"}},
        match="storage option",
        secrets=(SECRET,),
    ),
    ConnectCase("local-unsupported-scheme", LOCAL, lambda e: "gopher://host/ns", match="scheme"),
]


@pytest.mark.parametrize(
    "c", CONNECT_CASES, ids=[f"{c.kind}-connect:{c.name}" for c in CONNECT_CASES]
)
def test_bad_connection_options_are_refused(
    use_env: Callable[[str], Env], c: ConnectCase, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = use_env(c.kind)
    monkeypatch.chdir(env.sb.cwd)  # a relative target would land in the sandbox, where it shows
    as_case = Case("connect", c.name, lambda e: None, match=c.match, secrets=c.secrets)
    target = c.target(env)
    problems, _err = _problems_of(env, as_case, lambda: backend.connect(target, **c.options))
    assert not problems, f"connect {c.name}: " + "; ".join(problems)


# -- dedicated: a file outside the root is never moved or deleted -------------------------------
@pytest.mark.parametrize("kind", BOTH)
@pytest.mark.parametrize("how", ["single", "batched"])
@pytest.mark.parametrize("which", ["staged-copy", "secret-file"])
def test_a_manifest_path_outside_the_root_never_moves_the_file(
    use_env: Callable[[str], Env], kind: str, how: str, which: str
) -> None:
    """A CreateTableVersion naming a file outside the root: the file stays, byte for byte.

    ``staged-copy`` is a valid manifest of exactly the version announced (only its place is
    wrong); ``secret-file`` is any file of the user's."""
    env = use_env(kind)
    victim = env.sb.outside_staged if which == "staged-copy" else env.sb.outside / "secret.txt"
    data = victim.read_bytes()
    request = CreateTableVersionRequest(id=T0, version=4, manifest_path=str(victim))
    if how == "single":
        run = lambda: env.ns.create_table_version(request)  # noqa: E731
        expected: type[LanceNamespaceError] = InvalidInputError
    else:
        batched = make_batch(CommitTableOperation(create_table_version=request))
        run = lambda: commit_checked(env.ns, batched)  # noqa: E731
        expected = InvalidInputError  # outside the root: the path alone shows it
    c = Case("outside", f"{how}-{which}", lambda e: None, expected=expected, match="outside")
    problems, _err = _problems_of(env, c, run)
    if not victim.is_file():
        problems.insert(0, f"{victim.name} was moved or deleted")
    elif victim.read_bytes() != data:
        problems.insert(0, f"{victim.name} was changed")
    assert not problems, f"{kind} {how} {which}: " + "; ".join(problems)
    latest_is(T0, 3)(env)


# -- an Arrow IPC *file* body: converted to a stream and accepted (backend.arrow.ipc) ------------
@pytest.mark.parametrize("kind", BOTH)
def test_an_arrow_ipc_file_body_is_accepted_as_a_stream(
    use_env: Callable[[str], Env], kind: str
) -> None:
    env = use_env(kind)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, SMALL.schema) as writer:
        writer.write_table(SMALL)
    body = sink.getvalue().to_pybytes()
    before = digest(env.sb)
    env.ns.create_table(CreateTableRequest(id=["a", "fromfile"]), body)
    assert env.ns.count_table_rows(CountTableRowsRequest(id=["a", "fromfile"])).count == 3
    after = digest(env.sb)
    # Accepted: only the catalog and the new table's directory changed.
    new_dir = os.path.relpath(table_location(env.ns, ["a", "fromfile"]), env.sb.path)
    allowed = ("root/__manifest", new_dir)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert changed and all(k.startswith(allowed) for k in changed), sorted(changed)[:10]


# -- the last bad inputs: missing namespace, connect(None), spec words, index parameters, limits,
# -- source locations (request_rules, index_rules, errors.clean_text) ---------------------------
LAST_CASES = [
    Case(
        "last",
        "list_tables-missing-namespace",
        lambda e: e.ns.list_tables(ListTablesRequest(id=["nope"])),
        expected=NamespaceNotFoundError,
        match="nope",
    ),
    Case(
        "last",
        "list_tables-missing-nested-namespace",
        lambda e: e.ns.list_tables(ListTablesRequest(id=["a", "nope"])),
        expected=NamespaceNotFoundError,
        match="nope",
    ),
    Case(
        "last",
        "create_namespace-unknown-mode",
        lambda e: e.ns.create_namespace(CreateNamespaceRequest(id=["a", "fresh"], mode="Replace")),
        match="mode must be one of Create, ExistOk, Overwrite",
        offline=True,
    ),
    Case(
        "last",
        "create_namespace-unknown-mode-existing",
        lambda e: e.ns.create_namespace(CreateNamespaceRequest(id=["a"], mode="bogus")),
        match="mode",
        offline=True,
    ),
    Case(
        "last",
        "drop_namespace-unknown-behavior",
        lambda e: e.ns.drop_namespace(DropNamespaceRequest(id=["a", "b"], behavior="Purge")),
        match="behavior must be one of Restrict, Cascade",
        offline=True,
    ),
    Case(
        "last",
        "list_table_versions-limit-0",
        lambda e: e.ns.list_table_versions(ListTableVersionsRequest(id=T0, limit=0)),
        match="limit must be between 1 and",
        offline=True,
    ),
    Case(
        "last",
        "create_table_index-hnsw-m-2",
        lambda e: e.ns.create_table_index(
            CreateTableIndexRequest(id=T0, column="vec", index_type="IVF_HNSW_SQ", m=2)
        ),
        match="m must be at least 4",
        offline=True,
    ),
    Case(
        "last",
        "create_table_index-hnsw-ef-below-default-m",
        lambda e: e.ns.create_table_index(
            CreateTableIndexRequest(
                id=T0, column="vec", index_type="IVF_HNSW_FLAT", ef_construction=10
            )
        ),
        match=r"ef_construction must be at least m \(20\)",
        offline=True,
    ),
]


@pytest.mark.parametrize(
    ("kind", "c"), [pytest.param(k, c, id=f"{k}-{c.id}") for c in LAST_CASES for k in c.backends]
)
def test_last_bad_inputs_are_refused_and_change_nothing(
    use_env: Callable[[str], Env], kind: str, c: Case
) -> None:
    env = use_env(kind)
    problems, _err = _problems_of(env, c, lambda: c.call(env))
    assert not problems, f"{kind} {c.id}: " + "; ".join(problems)


def test_the_spec_words_pass_in_any_case_and_snake_case() -> None:
    from backend.rules.request_rules import request_problem

    for word in ("Create", "exist_ok", "EXISTOK", "ExistOk", "overwrite"):
        assert (
            request_problem("create_namespace", CreateNamespaceRequest(id=["x"], mode=word)) is None
        )
    for mode, behavior in (("skip", "cascade"), ("FAIL", "Restrict")):
        request = DropNamespaceRequest(id=["x"], mode=mode, behavior=behavior)
        assert request_problem("drop_namespace", request) is None
    assert request_problem("list_table_versions", ListTableVersionsRequest(id=T0, limit=1)) is None


@pytest.mark.parametrize("target", [None, 42, {"root": "x"}, ["a"]], ids=repr)
def test_connect_without_a_target_text_is_refused(
    target: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from backend.local import LocalNamespace

    monkeypatch.chdir(tmp_path)
    for connect in (backend.connect, LocalNamespace):
        with pytest.raises(InvalidInputError, match="target must be a directory path") as info:
            connect(target)
        assert type(info.value).__module__ == "lance_namespace.errors"
    assert list(tmp_path.iterdir()) == []


# Traces of the code that raised an error: Rust source files, Location { file: ... } fields,
# CI and cargo paths.
SOURCE_TRACE = re.compile(r"\.rs\b|Location \{|location:|backtrace:|/home/runner/|/root/\.cargo/")


def _restore_missing_version(e: Env) -> Any:
    from lance_namespace import RestoreTableRequest

    return e.ns.restore_table(RestoreTableRequest(id=T0, version=50))


# Failures whose raw text (pylance's, or the REST server's answer) names Rust source files.
TRACED_FAILURES = [
    Case(
        "trace",
        "delete_from_table-unparsable-predicate",
        lambda e: e.ns.delete_from_table(DeleteFromTableRequest(id=T0, predicate="nosuch >")),
    ),
    Case(
        "trace",
        "create_table_index-missing-column",
        lambda e: e.ns.create_table_index(
            CreateTableIndexRequest(id=T0, column="zz", index_type="BTREE")
        ),
        expected=LanceNamespaceError,
    ),
    Case("trace", "restore_table-missing-version", _restore_missing_version, LanceNamespaceError),
    Case(
        "trace",
        "count_table_rows-unknown-column",
        lambda e: e.ns.count_table_rows(CountTableRowsRequest(id=T0, predicate="nosuch > 1")),
    ),
]


@pytest.mark.parametrize(
    ("kind", "c"),
    [pytest.param(k, c, id=f"{k}-{c.id}") for c in TRACED_FAILURES for k in c.backends],
)
def test_error_texts_carry_no_source_locations(
    use_env: Callable[[str], Env], kind: str, c: Case
) -> None:
    env = use_env(kind)
    problems, err = _problems_of(env, c, lambda: c.call(env))
    assert not problems, f"{kind} {c.id}: " + "; ".join(problems)
    assert err is not None
    described = describe_error(err)
    texts = {
        "str": str(err),
        "repr": repr(err),
        "server_message": str(getattr(err, "server_message", "")),
        "detail": str(getattr(err, "detail", "") or ""),
        "describe_error": f"{described['message']} {described['detail'] or ''}",
    }
    traced = {where: text for where, text in texts.items() if SOURCE_TRACE.search(text)}
    assert not traced, f"{kind} {c.id}: {traced}"
    # one cleaning: the UI shows what was raised (without a title repeated in front of it)
    assert str(err).endswith(described["message"]) and described["message"]


def test_describe_error_and_the_rest_path_clean_alike() -> None:
    """One rule (``backend.errors.clean_text``): a server's answer and an exception raised
    in-process come out the same."""
    import httpx

    from backend.rest import RestNamespaceClient

    raw = (
        'Invalid user input: bad m\x07, location: Location { file: "/home/runner/work/lance/'
        'lance/rust/lance-index/src/vector/hnsw/builder.rs", line: 145, column: 24 }, '
        "/home/runner/work/lance/lance/rust/lance/src/dataset.rs:765:44"
    )

    def server(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, json={"error": raw, "code": 13, "detail": raw})

    client = RestNamespaceClient(
        "http://ns.test", transport=httpx.MockTransport(server), max_retries=0
    )
    with pytest.raises(InvalidInputError) as info:
        client.describe_namespace(DescribeNamespaceRequest(id=["a"]))
    from_rest = describe_error(info.value)
    in_process = describe_error(ValueError(raw))
    assert from_rest["message"] == "Invalid user input: bad m "
    assert from_rest["detail"] == from_rest["message"]
    assert in_process["message"] == f"operation: {from_rest['message']}"
    assert not SOURCE_TRACE.search(str(info.value) + repr(info.value))


def _vector_table(ns: Any, table_id: list[str]) -> None:
    """``table_id`` with 300 rows of 8-dimensional vectors and a BTREE index on ``id`` (so
    ``_indices`` holds another index's directory)."""
    from tests.support import create_table

    create_table(ns, table_id, make_table(300, dim=8))
    ns.create_table_scalar_index(
        CreateTableIndexRequest(id=table_id, column="id", index_type="BTREE")
    )


@pytest.mark.parametrize(
    "params",
    [{"m": 2}, {"m": 3, "ef_construction": 200}, {"m": 200}, {"m": 16, "ef_construction": 8}],
    ids=["m-2", "m-3", "m-200-default-ef", "ef-below-m"],
)
def test_an_index_build_refused_for_its_parameters_writes_nothing(
    ns: Any, backend_kind: str, params: dict[str, int]
) -> None:
    """HNSW ranges (``index_rules``) on a table where lance would build: refused before any
    file is written, on both backends (REST: before anything is sent)."""
    _vector_table(ns, ["v"])
    table_dir = table_location(ns, ["v"])
    before = tree_digest(table_dir)
    if backend_kind == REST:
        ns.wire_log.clear()
    request = CreateTableIndexRequest(
        id=["v"], column="vec", index_type="IVF_HNSW_SQ", num_partitions=2, **params
    )
    with pytest.raises(InvalidInputError, match="at least"):
        ns.create_table_index(request)
    assert tree_digest(table_dir) == before
    if backend_kind == REST:
        assert [e.op for e in ns.wire_log] == []


def test_a_failed_local_build_removes_its_own_partial_directory_only(tmp_path: Path) -> None:
    """A build lance refuses after writing (``backend.local.indexes``, the request rules
    bypassed): its ``_indices/<uuid>`` goes, another index's directory and a directory another
    writer is filling stay. Control: lance alone leaves a partial directory."""
    import lance

    from backend.local import indexes

    ns = backend.connect(str(tmp_path / "root"))
    _vector_table(ns, ["v"])
    table_dir = table_location(ns, ["v"])
    foreign = table_dir / "_indices" / "0b8e7c52-5d2b-4d0e-9f1e-6a0c1d2e3f40"
    foreign.mkdir()
    (foreign / "part-0.lance").write_bytes(b"another writer's build in progress")
    control = tmp_path / "control"
    shutil.copytree(table_dir, control)
    before = tree_digest(table_dir)
    request = CreateTableIndexRequest(
        id=["v"], column="vec", index_type="IVF_HNSW_SQ", num_partitions=2, m=2
    )
    with pytest.raises(ValueError, match="at least 4"):
        indexes.build_index(
            ns.open_dataset(["v"]), request, table="v", storage_options=None, progress=None
        )
    assert tree_digest(table_dir) == before
    with pytest.raises(ValueError, match="at least 4"):
        lance.dataset(str(control)).create_index(
            "vec", "IVF_HNSW_SQ", num_partitions=2, m=2, replace=False
        )
    left = set(os.listdir(control / "_indices")) - set(os.listdir(table_dir / "_indices"))
    assert len(left) == 1, left  # what the cleanup removed


def test_a_partial_build_on_an_object_store_is_removed_and_nothing_else(s3_root: Any) -> None:
    """``remove_partial_build`` on S3 (moto): the objects under ``_indices/<segment>`` of a
    build go; another segment's objects and a committed index's stay (lance writes nothing to
    a bucket before the HNSW check fails, so the partial objects are put here)."""
    import uuid

    from backend.local import indexes

    _vector_table(s3_root.ns, ["v"])
    ds = s3_root.ns.open_dataset(["v"])
    committed = ds.describe_indices()[0].segments[0].uuid
    bucket = s3_root.bucket
    table_key = ds.uri.split(f"s3://{bucket}/", 1)[1]
    ours, theirs = str(uuid.uuid4()), str(uuid.uuid4())
    s3 = s3_root.server.client()
    for segment in (ours, theirs):
        for name in ("part-0.lance", "sub/part-1.lance"):
            s3.put_object(Bucket=bucket, Key=f"{table_key}/_indices/{segment}/{name}", Body=b"x")
    before = s3_root.server.objects(bucket)
    options = s3_root.ns.storage_options
    assert indexes.remove_partial_build(ds, committed, options) is False  # a real index
    assert s3_root.server.objects(bucket) == before
    assert indexes.remove_partial_build(ds, ours, options) is True
    gone = {k for k in before if f"/_indices/{ours}/" in k}
    assert len(gone) == 2
    assert s3_root.server.objects(bucket) == {k: v for k, v in before.items() if k not in gone}


def test_error_titles_and_ids_as_the_ui_shows_them() -> None:
    """A readable title from the error class (not the code), the code prefix gone, and ids
    joined by the delimiter shown with › by the one rule in backend.rules.ids."""
    from lance_namespace.errors import ErrorCode, NamespaceNotEmptyError

    from backend.errors import describe_error, error_title, make
    from backend.rules import ids

    err = make(ErrorCode.NAMESPACE_NOT_EMPTY, "NAMESPACE_NOT_EMPTY: namespace sales$eu has tables")
    info = describe_error(err)
    assert info["title"] == "Namespace not empty" == error_title(NamespaceNotEmptyError)
    assert info["message"] == "namespace sales$eu has tables"
    assert ids.display_ids_in_text(info["message"]) == "namespace sales › eu has tables"
    assert (
        ids.display_ids_in_text("at /data/a$b/t.lance, cost $5") == "at /data/a$b/t.lance, cost $5"
    )
    assert ids.display_id(["sales", "orders"]) == "sales › orders"
    assert ids.parse_id("sales › orders") == ids.parse_id("sales$orders") == ["sales", "orders"]
    assert ids.parse_id(" a ›b › c ", "|") == ["a", "b", "c"]


def test_version_zero_is_refused_alike_everywhere(ns) -> None:
    """One version rule (version_ranges.version_problem: 1 or more) on every path that names
    a version: a request field, a restore, a tag, a batch's CreateTableVersion; nothing sent."""
    from lance_namespace import QueryTableRequest

    from backend.services import batch_builder
    from backend.services import restore as restoresv
    from backend.services import tags as tagsv

    ns.create_namespace(CreateNamespaceRequest(id=["v"]))
    table = ["v", "t"]
    ns.create_table(CreateTableRequest(id=table), ipc_stream_bytes(make_table(3)))
    expected = r"version number \(1 or more\), got 0"
    with pytest.raises(InvalidInputError, match=expected):
        ns.describe_table(DescribeTableRequest(id=table, version=0))
    with pytest.raises(InvalidInputError, match=expected):
        ns.query_table(QueryTableRequest(id=table, k=1, version=0, vector={"single_vector": []}))
    with pytest.raises(InvalidInputError, match=expected):
        restoresv.restore_version(ns, table, 0)
    with pytest.raises(InvalidInputError, match=expected):
        tagsv.create_tag(ns, table, "zero", 0)
    problems = batch_builder.validate(
        ns, [{"create_table_version": {"id": table, "version": 0, "manifest_path": "x.manifest"}}]
    )
    assert any(re.search(expected, p.message) for p in problems), problems
    assert tagsv.list_tags(ns, table).empty
    from backend.services import versions

    assert versions.latest_version(ns, table) == 1


def test_a_missing_parent_namespace_is_said_alike_everywhere(ns) -> None:
    """One rule (ids.missing_parent) for everything created under a namespace: a namespace,
    a created, declared or renamed table, and a batch's DeclareTable, on both backends."""
    from lance_namespace import RenameTableRequest

    from backend.services import batch_builder

    ns.create_namespace(CreateNamespaceRequest(id=["here"]))
    ns.create_table(CreateTableRequest(id=["here", "t"]), ipc_stream_bytes(make_table(2)))
    said = "namespace nope not found"
    attempts: list[Callable[[], Any]] = [
        lambda: ns.create_namespace(CreateNamespaceRequest(id=["nope", "child"])),
        lambda: ns.declare_table(DeclareTableRequest(id=["nope", "t"])),
        lambda: ns.create_table(
            CreateTableRequest(id=["nope", "t"]), ipc_stream_bytes(make_table(2))
        ),
    ]
    if backend.capabilities(ns).rename is not False:
        attempts.append(
            lambda: ns.rename_table(
                RenameTableRequest(id=["here", "t"], new_table_name="u", new_namespace_id=["nope"])
            )
        )
    requests: list[Any] = [
        CreateNamespaceRequest(id=["nope", "child"]),
        DeclareTableRequest(id=["nope", "t"]),
        CreateTableRequest(id=["nope", "t"]),
        RenameTableRequest(id=["here", "t"], new_table_name="u", new_namespace_id=["nope"]),
    ]
    # the explicit preflight says it of every single write, on both backends
    for request in requests:
        found = backend.preflight(ns, request)
        assert [p.code.name for p in found] == ["NAMESPACE_NOT_FOUND"], found
        assert said in found[0].message
    # the local backend refuses the writes themselves; over REST a CreateNamespace still reads
    # its parent, and a table write is the server's to judge (pylance's declares and creates
    # into a missing namespace: the rule is the preflight's)
    if backend.capabilities(ns).kind == "local":
        for attempt in attempts:
            with pytest.raises(NamespaceNotFoundError, match=said):
                attempt()
    else:
        with pytest.raises(NamespaceNotFoundError, match=said):
            attempts[0]()
    problems = batch_builder.validate(ns, [batch_builder.declare_op(["nope", "t"])])
    assert [p.message for p in problems if said in p.message], problems
    assert ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces == ["here"]
    assert ns.list_tables(ListTablesRequest(id=["here"])).tables == ["t"]
