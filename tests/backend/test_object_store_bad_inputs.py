"""The bad-input catalogue's location, registration and manifest cases on an S3 root (moto's
server, tests/conftest.py::S3Server), for the local backend.

One bucket is built per module: namespace root ``root/`` with namespaces ``a`` and ``a$b``,
tables ``a$t0`` (3 versions, version 4 staged under ``root/_staging``), ``r``, ``t1`` and ``t10``
(root level), ``a$grp`` (registered at ``root/group/inner``); and, as another process could have
written them into the catalog, dangerous registrations at the root, the catalog, ``_console``,
``a$t0``'s prefix, a prefix inside it and a prefix around ``a$grp``. Beside the root, in the same
bucket, ``outside/`` holds a copy of a dataset and of the staged manifest; a second bucket holds
another copy.

For every case the expected ``lance_namespace.errors`` class and message come back (the rules
of ``backend.rules.location_rules``), and every object key and ETag of both buckets is the same
afterwards: nothing is written, moved or deleted, ``_console`` included.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import lance
import pytest
from lance_namespace import (
    CreateNamespaceRequest,
    CreateTableVersionRequest,
    DeclareTableRequest,
    DescribeTableRequest,
    DropTableRequest,
    ListTableVersionsRequest,
    RegisterTableRequest,
    TableExistsRequest,
)
from lance_namespace.errors import InvalidInputError, LanceNamespaceError, TableNotFoundError

import backend
from backend.local.batch.catalog import parse_manifest_name
from tests.backend.s3_support import stage_version_s3
from tests.conftest import S3Server
from tests.support import StagedVersion, create_table, make_table, op_declare, op_version
from tests.support import batch as make_batch

T0 = ["a", "t0"]
# Registrations another process wrote into the catalog (pylance accepts them): table id ->
# location, relative to the root (None: a$t0's prefix / a prefix inside it, filled in below).
DANGEROUS = {
    "at-root": ".",
    "at-catalog": "__manifest",
    "at-console": "_console",
    "at-t0": None,
    "in-t0": None,
    "around-grp": "group",
}


@dataclass
class World:
    ns: Any
    server: S3Server
    bucket: str
    other: str  # a second bucket
    t0: str  # a$t0's key relative to the root
    staged: StagedVersion  # a$t0 version 4 (URI form)
    staged_key: str  # ... its key in the bucket
    t0_published: str  # key of a$t0's version 3 manifest
    r_published: str  # key of r's version 1 manifest

    def uri(self, key: str) -> str:
        return f"s3://{self.bucket}/{key}"

    def objects(self) -> dict[str, dict[str, str]]:
        return {b: self.server.objects(b) for b in (self.bucket, self.other)}


def _keys(server: S3Server, bucket: str, prefix: str) -> list[str]:
    return sorted(k for k in server.objects(bucket) if k.startswith(prefix))


def _manifest_key(server: S3Server, bucket: str, table_key: str, version: int) -> str:
    return next(
        k
        for k in _keys(server, bucket, f"{table_key}/_versions/")
        if parse_manifest_name(k.rsplit("/", 1)[-1]) == version
    )


def _copy(server: S3Server, src: tuple[str, str], dst: tuple[str, str]) -> None:
    s3 = server.client()
    s3.copy_object(Bucket=dst[0], Key=dst[1], CopySource={"Bucket": src[0], "Key": src[1]})


@pytest.fixture(scope="module")
def world(s3_server: S3Server) -> World:
    server = s3_server
    bucket, other = server.new_bucket(), server.new_bucket()
    ns = backend.connect(f"s3://{bucket}/root", storage_options=server.storage_options)
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    ns.create_namespace(CreateNamespaceRequest(id=["a", "b"]))
    create_table(ns, T0, make_table(3))
    t0_uri = ns.describe_table(DescribeTableRequest(id=T0)).location
    for i in (1, 2):
        lance.write_dataset(
            make_table(3, start=3 * i),
            t0_uri,
            mode="append",
            storage_options=server.storage_options,
        )
    staged = stage_version_s3(ns, server, T0, make_table(2, start=100))
    for name in ("r", "t1", "t10"):
        create_table(ns, [name], make_table(2))
    lance.write_dataset(
        make_table(2),
        f"s3://{bucket}/root/group/inner",
        storage_options=server.storage_options,
    )
    ns.register_table(RegisterTableRequest(id=["a", "grp"], location="group/inner"))
    t0 = t0_uri.split("/root/", 1)[1]
    DANGEROUS["at-t0"], DANGEROUS["in-t0"] = t0, f"{t0}/_versions"
    for name, location in DANGEROUS.items():  # pylance's own register: no console checks
        ns._inner.register_table(RegisterTableRequest(id=["a", name], location=location))
    staged_key = staged.manifest_path.split(f"s3://{bucket}/", 1)[1]
    t0_key = f"root/{t0}"
    s3 = server.client()
    _copy(server, (bucket, staged_key), (bucket, "outside/staged-copy.manifest"))
    _copy(server, (bucket, staged_key), (other, "root/_staging/copy.manifest"))
    _copy(server, (bucket, _manifest_key(server, bucket, t0_key, 2)), (bucket, "root/_staging/old-v2.manifest"))  # fmt: skip
    s3.put_object(Bucket=bucket, Key="root/_staging/notes.txt", Body=b"not a Lance manifest\n")
    s3.put_object(Bucket=bucket, Key="root/plain-prefix/readme.txt", Body=b"no dataset here\n")
    for key in _keys(server, bucket, "root/r.lance/"):
        _copy(server, (bucket, key), (bucket, "outside/other-table/" + key.split("/", 2)[2]))
    return World(
        ns=ns,
        server=server,
        bucket=bucket,
        other=other,
        t0=t0,
        staged=staged,
        staged_key=staged_key,
        t0_published=_manifest_key(server, bucket, t0_key, 3),
        r_published=_manifest_key(server, bucket, "root/r.lance", 1),
    )


# -- cases -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    name: str
    call: Callable[[World], Any]
    match: str | None  # regex (case-insensitive) the message must contain
    after: Callable[[World], None] | None = None
    expected: type[LanceNamespaceError] = InvalidInputError


CASES: list[Case] = []


def _missing(table_id: list[str]) -> Callable[[World], None]:
    def check(w: World) -> None:
        with pytest.raises(TableNotFoundError):
            w.ns.table_exists(TableExistsRequest(id=table_id))

    return check


def _still_registered(table_id: list[str]) -> Callable[[World], None]:
    return lambda w: w.ns.table_exists(TableExistsRequest(id=table_id))


def _latest_is(version: int) -> Callable[[World], None]:
    def check(w: World) -> None:
        versions = w.ns.list_table_versions(ListTableVersionsRequest(id=T0)).versions
        assert max(v.version for v in versions) == version

    return check


Where = Callable[[World], str]
REGISTER: list[tuple[str, Where, str]] = [
    ("root-dot", lambda w: ".", "root itself"),
    ("root-uri", lambda w: w.uri("root"), "root itself"),
    ("root-uri-slash", lambda w: w.uri("root/"), "root itself"),
    ("catalog", lambda w: "__manifest", "__manifest"),
    ("catalog-uri", lambda w: w.uri("root/__manifest"), "__manifest"),
    ("catalog-slash", lambda w: "__manifest/", "__manifest"),
    ("catalog-dot-segment", lambda w: "./__manifest", r"'\.'"),
    ("catalog-inside", lambda w: "__manifest/data", "__manifest"),
    ("console-dir", lambda w: "_console", "_console"),
    ("staging-dir", lambda w: "_staging", "_staging"),
    ("another-table", lambda w: w.t0, "another table"),
    ("another-table-uri", lambda w: w.uri(f"root/{w.t0}"), "another table"),
    ("root-level-table", lambda w: "r.lance", "another table"),
    ("inside-another-table", lambda w: f"{w.t0}/_versions", "another table"),
    ("inside-another-table-data", lambda w: f"{w.t0}/data", "another table"),
    ("around-another-table", lambda w: "group", "another table"),
    ("outside-same-bucket", lambda w: w.uri("outside/other-table"), "outside"),
    ("outside-other-bucket", lambda w: f"s3://{w.other}/root/x", "outside"),
    ("outside-other-scheme", lambda w: f"gs://{w.bucket}/root/x", "outside"),
    ("outside-dotdot", lambda w: "../outside/other-table", r"'\.\.'"),
    ("outside-dotdot-through-prefix", lambda w: "plain-prefix/../../outside/other-table", r"\.\."),
    ("absolute-path", lambda w: "/root/plain-prefix", "absolute"),
    ("doubled-slash", lambda w: "plain-prefix//x", "//"),
    ("percent-dotdot", lambda w: "x%2F..%2F__manifest", "percent"),
    ("percent-name", lambda w: "%5F_manifest", "percent"),
    ("backslash", lambda w: "x\\..\\__manifest", "backslash"),
    ("empty", lambda w: "", None),
    ("nul", lambda w: "plain-prefix\x00", "control"),
    ("missing-prefix", lambda w: "missing-prefix", "no Lance dataset"),
    ("prefix-without-versions", lambda w: "plain-prefix", "no Lance dataset"),
]
for _name, _where, _match in REGISTER:
    CASES.append(
        Case(
            f"register_table-{_name}",
            lambda w, where=_where: w.ns.register_table(
                RegisterTableRequest(id=["a", "reg"], location=where(w))
            ),
            _match,
            _missing(["a", "reg"]),
        )
    )

DECLARE: list[tuple[str, list[str], Where, str]] = [
    ("catalog", ["a", "dx"], lambda w: "__manifest", "__manifest"),
    ("another-table", ["a", "dx"], lambda w: w.uri(f"root/{w.t0}"), "another table"),
    ("outside-other-bucket", ["a", "dx"], lambda w: f"s3://{w.other}/root/dx", "outside"),
    ("inside-root-custom", ["a", "dx"], lambda w: "custom-prefix", "chooses table locations"),
    ("root-level-elsewhere", ["dx"], lambda w: "other.lance", "chooses table locations"),
]
for _name, _id, _where, _match in DECLARE:
    CASES.append(
        Case(
            f"declare_table-{_name}",
            lambda w, tid=_id, where=_where: w.ns.declare_table(
                DeclareTableRequest(id=tid, location=where(w))
            ),
            _match,
            _missing(_id),
        )
    )
    CASES.append(
        Case(
            f"batch-declare_table-{_name}",
            lambda w, tid=_id, where=_where: w.ns.batch_commit_tables(
                make_batch(op_declare(tid, location=where(w)))
            ),
            _match,
            _missing(_id),
        )
    )

DROP: list[tuple[str, str]] = [
    ("at-root", "root itself"),
    ("at-catalog", "__manifest"),
    ("at-console", "_console"),
    ("at-t0", "another table"),
    ("in-t0", "another table"),
    ("around-grp", "another table"),
]
for _name, _match in DROP:
    CASES.append(
        Case(
            f"drop_table-{_name}",
            lambda w, n=_name: w.ns.drop_table(DropTableRequest(id=["a", n])),
            f"{_match}.*deregister",
            _still_registered(["a", _name]),
        )
    )
CASES.append(  # a$t0's prefix is also at-t0's, and holds in-t0's: its drop would delete theirs
    Case(
        "drop_table-shared-prefix",
        lambda w: w.ns.drop_table(DropTableRequest(id=T0)),
        "another table.*deregister",
        _latest_is(3),
    )  # fmt: skip
)

MANIFESTS: list[tuple[str, Where, str | None]] = [
    ("outside-root-same-bucket", lambda w: "outside/staged-copy.manifest", "outside"),
    ("outside-root-uri", lambda w: w.uri("outside/staged-copy.manifest"), "outside"),
    ("other-bucket", lambda w: f"s3://{w.other}/root/_staging/copy.manifest", "outside"),
    ("root-relative-form", lambda w: w.staged_key.split("/", 1)[1], "outside"),
    ("another-tables-published", lambda w: w.r_published, "outside"),
    ("own-versions-dir", lambda w: w.t0_published, "published"),
    ("own-versions-dir-uri", lambda w: w.uri(w.t0_published), "published"),
    ("dotdot-into-versions", lambda w: f"root/_staging/../{w.t0}/_versions/x.manifest", r"\.\."),
    ("doubled-slash", lambda w: w.staged_key.replace("/_staging/", "//_staging/"), "//"),
    ("percent-encoded", lambda w: w.staged_key.replace("_staging", "%5Fstaging"), "percent"),
    ("backslash", lambda w: w.staged_key.replace("/", "\\"), "backslash"),
    ("not-a-manifest", lambda w: "root/_staging/notes.txt", "not a Lance manifest"),
    ("manifest-of-another-version", lambda w: "root/_staging/old-v2.manifest", "version 2"),
    ("missing", lambda w: "root/_staging/missing.manifest", "does not exist"),
    ("empty", lambda w: "", None),
]
for _name, _where, _match in MANIFESTS:
    CASES.append(
        Case(
            f"create_table_version-{_name}",
            lambda w, where=_where: w.ns.create_table_version(
                CreateTableVersionRequest(id=T0, version=4, manifest_path=where(w))
            ),
            _match,
            _latest_is(3),
        )
    )
    CASES.append(
        Case(
            f"batch-create_table_version-{_name}",
            lambda w, where=_where: w.ns.batch_commit_tables(
                make_batch(op_version(T0, w.staged, manifest_path=where(w)))
            ),
            _match,
            _latest_is(3),
        )
    )
for _how in ("single", "batch"):
    CASES.append(
        Case(
            f"{_how}-create_table_version-wrong-size",
            (
                lambda w: w.ns.create_table_version(
                    CreateTableVersionRequest(
                        id=T0,
                        version=4,
                        manifest_path=w.staged.manifest_path,
                        manifest_size=w.staged.manifest_size + 1,
                    )
                )
            )
            if _how == "single"
            else (
                lambda w: w.ns.batch_commit_tables(
                    make_batch(op_version(T0, w.staged, manifest_size=w.staged.manifest_size + 1))
                )
            ),
            "manifest_size",
            _latest_is(3),
        )  # fmt: skip
    )


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_bad_input_on_s3_is_refused_and_changes_no_object(world: World, c: Case) -> None:
    before = world.objects()
    with pytest.raises(LanceNamespaceError) as info:
        c.call(world)
    assert isinstance(info.value, c.expected), f"{type(info.value).__name__}: {info.value}"
    if c.match:
        assert re.search(c.match, str(info.value), re.IGNORECASE), str(info.value)
    assert "Traceback" not in str(info.value) and ".rs:" not in str(info.value)
    assert world.objects() == before, "an object was written, moved or deleted"
    if c.after is not None:
        c.after(world)


def test_the_staged_manifest_is_accepted_as_a_uri_and_as_a_bucket_path(s3_server) -> None:
    """The forms the rule accepts are the ones that publish: a URI of the root's bucket (single
    calls hand pylance the path inside the bucket, the form it reads) and that path itself."""
    bucket = s3_server.new_bucket()
    ns = backend.connect(f"s3://{bucket}/root", storage_options=s3_server.storage_options)
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    create_table(ns, T0, make_table(3))
    first = stage_version_s3(ns, s3_server, T0, make_table(2, start=10))
    ns.create_table_version(
        CreateTableVersionRequest(id=T0, version=2, manifest_path=first.manifest_path)
    )
    second = stage_version_s3(ns, s3_server, T0, make_table(2, start=20))
    bucket_path = second.manifest_path.split(f"s3://{bucket}/", 1)[1]
    ns.batch_commit_tables(make_batch(op_version(T0, second, manifest_path=bucket_path)))
    versions = ns.list_table_versions(ListTableVersionsRequest(id=T0)).versions
    assert sorted(v.version for v in versions) == [1, 2, 3]
    assert ns.count_table_rows({"id": T0}).count == 3 + 2 + 2


def test_a_drop_deletes_only_its_own_prefix(s3_server) -> None:
    """``t1`` is dropped: every object under ``root/t1.lance/`` goes, and not one of
    ``root/t1.lance0/`` (a prefix that starts with the same characters), ``t10``'s or the
    catalog's other rows."""
    bucket = s3_server.new_bucket()
    ns = backend.connect(f"s3://{bucket}/root", storage_options=s3_server.storage_options)
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    for name in ("t1", "t10"):
        create_table(ns, [name], make_table(2))
    lance.write_dataset(
        make_table(2), f"s3://{bucket}/root/t1.lance0", storage_options=s3_server.storage_options
    )
    ns.register_table(RegisterTableRequest(id=["a", "near"], location="t1.lance0"))
    before = s3_server.objects(bucket)
    own = {k for k in before if k.startswith("root/t1.lance/")}
    assert own and any(k.startswith("root/t1.lance0/") for k in before)
    ns.drop_table(DropTableRequest(id=["t1"]))
    after = s3_server.objects(bucket)
    assert not any(k.startswith("root/t1.lance/") for k in after)
    untouched = {k: e for k, e in before.items() if not k.startswith(("root/t1.lance/", "root/__manifest/"))}  # fmt: skip
    assert {k: e for k, e in after.items() if k in untouched} == untouched
    assert set(untouched) <= set(after)
    assert ns.count_table_rows({"id": ["t10"]}).count == 2
    assert ns.count_table_rows({"id": ["a", "near"]}).count == 2
    with pytest.raises(TableNotFoundError):
        ns.table_exists(TableExistsRequest(id=["t1"]))
