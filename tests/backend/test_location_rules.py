"""backend.rules.location_rules: one location rule, one staged-manifest rule and one declare policy
for every kind of root. The same request gets the same verdict on a file root (resolved with
realpath), an object-store root (keys) and from a REST server's locations; object keys are
parsed strictly (no ``..``, ``//``, percent-encoding, other buckets or schemes)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from lance_namespace import (
    CreateNamespaceRequest,
    DescribeTableRequest,
    DropTableRequest,
    ListTablesRequest,
    RegisterTableRequest,
)
from lance_namespace.errors import InvalidInputError

import backend
from backend.locations import (
    ObjectTables,
    TableDirs,
    local_path_text,
    location_problem,
    manifest_problem,
    object_manifest_key,
    object_table_key,
    real,
    remote_location_problem,
    remote_manifest_problem,
    to_local_path,
)
from backend.rules.location_rules import (
    OBJECT,
    TablePrefixes,
    declare_location_rule,
    object_key,
    object_parts,
)
from tests.support import create_table, make_table

S3 = "s3://lake/root"

# (location relative to the root, accepted?) - decided by the rule, whatever the root.
RELATIVE = [
    ("new_table", True),
    ("group/new_table", True),
    ("t10", True),  # another table is t1: t10 is not inside it
    (".", False),
    ("__manifest", False),
    ("__manifest/data", False),
    ("_console", False),
    ("_staging", False),
    ("t1", False),
    ("t1/data", False),
    ("grp", False),  # contains grp/inner
    ("grp/inner", False),
    ("../elsewhere", False),
]


@pytest.mark.parametrize(("location", "ok"), RELATIVE)
def test_file_and_object_roots_give_the_same_verdict(
    tmp_path: Path, location: str, ok: bool
) -> None:
    root = tmp_path / "root"
    for d in ("t1", "grp/inner", "__manifest", "_console", "_staging"):
        (root / d).mkdir(parents=True)
    on_file = location_problem(root, location, other_tables=TableDirs([root / "t1", root / "grp/inner"]))  # fmt: skip
    _, on_s3 = object_table_key(S3, location, other_tables=ObjectTables(S3, ["t1", f"{S3}/grp/inner"]))  # fmt: skip
    assert (on_file is None) is ok, on_file
    assert (on_s3 is None) is ok, on_s3
    if location not in ("t1", "t1/data", "grp", "grp/inner"):  # other tables: the server's
        assert (remote_location_problem(location) is None) is ok


@pytest.mark.parametrize(
    ("location", "why"),
    [
        ("x//y", "//"),
        ("x/./y", "'.'"),
        ("x/../__manifest", "'..'"),
        ("x%2F..%2F__manifest", "percent"),
        ("%5F_manifest", "percent"),
        ("x\\..\\y", "backslash"),
        ("x\x00", "control"),
        ("/root/x", "absolute"),
        ("", "empty"),
        (f"{S3}/x//y", "//"),
    ],
)
def test_object_keys_are_never_interpreted(location: str, why: str) -> None:
    key, problem = object_table_key(S3, location)
    assert key is None and why in str(problem)


@pytest.mark.parametrize(
    "location", ["s3://other/root/x", "gs://lake/root/x", "s3://lake/rootx/y", "s3://lake/x"]
)
def test_other_buckets_schemes_and_prefixes_are_outside(location: str) -> None:
    assert object_parts(S3, location) == (None, None)
    assert "outside the namespace root" in str(object_table_key(S3, location)[1])


def test_object_locations_as_uri_or_relative_key_are_one_prefix() -> None:
    for location in ("x/y", "x/y/", f"{S3}/x/y", f"{S3}/x/y/"):
        assert object_table_key(S3, location) == ("x/y", None)
    assert object_key(S3, ("x", "y")) == "root/x/y"
    assert object_key("s3://lake", ("x",)) == "x"
    # memory:// roots: one store, Lance reports "<name>/<key>" as paths
    assert object_parts("memory://m", "memory://m/t") == (("t",), None)
    assert object_parts("memory://m", "m/_staging/x", base="bucket") == (("_staging", "x"), None)
    assert object_key("memory://m", ("t",)) == "m/t"


def test_table_prefixes_compare_whole_segments() -> None:
    tables = TablePrefixes(["t1", "g/t2"], kind=OBJECT)
    assert tables.conflict("t10") is None and tables.conflict("t") is None
    assert tables.conflict("g/t20") is None
    assert "is the prefix" in str(tables.conflict("t1"))
    assert "inside" in str(tables.conflict("t1/x/y"))
    assert "contains" in str(tables.conflict("g"))
    tables.add("n/new")
    assert "contains" in str(tables.conflict("n"))
    # catalog locations other writers left (pylance reads "x//y" as x/y)
    assert "is the prefix" in str(ObjectTables(S3, ["x//y"]).conflict("x/y"))


# (manifest path relative to the root, accepted?) for a table at root/grp/t (a registration
# below the root: the root's _staging is one of its staging areas on every kind of root).
MANIFESTS = [
    ("_staging/m.manifest", True),
    ("grp/t/m.manifest", True),
    ("grp/t/sub/m.manifest", True),
    ("grp/t/_versions/m.manifest", False),
    ("grp/_staging/m.manifest", False),
    ("other/_versions/m.manifest", False),
    ("m.manifest", False),
    ("_staging", False),
]


@pytest.mark.parametrize(("manifest", "ok"), MANIFESTS)
def test_one_staged_manifest_rule_for_every_root(tmp_path: Path, manifest: str, ok: bool) -> None:
    root = tmp_path / "root"
    target = root / manifest
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.suffix:
        target.write_bytes(b"x")
    (root / "grp" / "t").mkdir(parents=True, exist_ok=True)
    on_file = manifest_problem(root, root / "grp" / "t", str(target))
    _, on_s3 = object_manifest_key(S3, f"{S3}/grp/t", f"root/{manifest}")
    remote = remote_manifest_problem(f"{S3}/grp/t", f"{S3}/{manifest}", root=S3)
    for problem in (on_file, on_s3, remote):
        if ok and problem and "regular file" in problem:
            continue  # a directory on the file root: the file check, not the rule
        assert (problem is None) is ok, problem


def test_remote_manifest_rule_without_the_root_takes_the_tables_parent() -> None:
    assert remote_manifest_problem("file:///r/t", "/r/_staging/x.manifest") is None
    assert remote_manifest_problem("s3://b/r/t", "r/_staging/x.manifest") is None  # bucket path
    assert "outside" in str(remote_manifest_problem("s3://b/r/t", "s3://c/r/_staging/x"))
    assert "published" in str(remote_manifest_problem("file:///r/t", "/r/t/_versions/1.manifest"))


@pytest.mark.parametrize(
    ("table_id", "location", "ok"),
    [
        (["t"], None, True),
        (["t"], "t.lance", True),
        (["t"], "t.lance/", True),
        (["t"], f"{S3}/t.lance", True),
        (["t"], "other.lance", False),
        (["a", "t"], None, True),
        (["a", "t"], "custom", False),
        (["a", "t"], f"{S3}/1234abcd_a$t", False),
    ],
)
def test_one_declare_policy(table_id: list[str], location: str | None, ok: bool) -> None:
    problem = declare_location_rule(table_id, location, root_uri=S3)
    assert (problem is None) is ok, problem


def test_a_memory_root_gets_the_same_boundary(tmp_path: Path) -> None:
    """memory:// roots are keys too: a registration at the catalog or another table's prefix
    is refused, and a dangerous registration another writer made is never dropped."""
    ns = backend.connect(f"memory://rules-{tmp_path.name}")
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    create_table(ns, ["a", "t"], make_table(3))
    t = ns.describe_table(DescribeTableRequest(id=["a", "t"])).location.rsplit("/", 1)[1]
    for location, why in (("__manifest", "__manifest"), (t, "another table"), (".", "root")):
        with pytest.raises(InvalidInputError, match=why):
            ns.register_table(RegisterTableRequest(id=["a", "reg"], location=location))
    ns._inner.register_table(RegisterTableRequest(id=["a", "evil"], location="__manifest"))
    with pytest.raises(InvalidInputError, match="__manifest.*deregister"):
        ns.drop_table(DropTableRequest(id=["a", "evil"]))
    assert ns.list_tables(ListTablesRequest(id=["a"])).tables == ["evil", "t"]  # catalog intact
    assert ns.count_table_rows({"id": ["a", "t"]}).count == 3


def test_table_dirs_under_a_root_resolve_as_realpath_does(tmp_path: Path) -> None:
    """Given the root, plain children resolve without a walk of each path; symbolic links
    among the children, nested paths and ``..`` still resolve as ``realpath`` does."""
    root = tmp_path / "root"
    (root / "t1").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (root / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (root / "alias").symlink_to(root / "t1", target_is_directory=True)
    dirs = [
        root / "t1",
        root / "linked",
        root / "alias",
        root / "missing",
        root / "grp" / "inner",
        root / ".." / "root" / "t1",
    ]
    rooted, walked = TableDirs(dirs, root=root), TableDirs(dirs)
    assert rooted.conflict(str(real(tmp_path / "elsewhere"))) == "is the directory of another table"
    for probe in (root / "t1", root / "missing", root / "grp", tmp_path / "elsewhere" / "x"):
        assert rooted.conflict(str(real(probe))) == walked.conflict(str(real(probe)))
    assert len(rooted) == len(walked) == 4  # t1 (three ways), elsewhere, missing, grp/inner


def _reference_local_path(location: str, root: Path) -> Path | None:
    """What a location names on a file root, read with the standard library's URI parser."""
    parsed = urlparse(location)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path)) if parsed.netloc in ("", "localhost") else None
    if parsed.scheme:
        return None
    return Path(location) if Path(location).is_absolute() else root / location


@pytest.mark.parametrize(
    "location",
    [
        "08da9d3e_e2e$docs",
        "grp/inner.lance",
        "./t1",
        "../outside",
        "/abs/t.lance",
        "file:///abs/t.lance",
        "file:///abs/with%20space/t%23x.lance",
        "file:///abs/t.lance?version=3",
        "file:///abs/t.lance#frag",
        "file://localhost/abs/t.lance",
        "file://otherhost/abs/t.lance",
        "FILE:///abs/t.lance",
        "s3://bucket/t.lance",
        "memory://t",
    ],
)
def test_a_catalog_location_names_the_path_the_uri_parser_reads(location: str) -> None:
    """The catalog's locations are read as text without a URI parse of each (100,000 tables);
    every form still names the path the standard library's parser reads."""
    root = Path("/data/root")
    text = local_path_text(location, root)
    expected = _reference_local_path(location, root)
    assert (Path(text) if text is not None else None) == expected
    assert to_local_path(location, root) == expected


def test_table_dirs_from_text_resolve_as_realpath_does(tmp_path: Path) -> None:
    """Text paths the catalog gives (unnormalised: ``./``, doubled or trailing separators)
    resolve as ``realpath`` does."""
    root = tmp_path / "root"
    (root / "t1").mkdir(parents=True)
    top = str(root)
    dirs = [f"{top}/t1", f"{top}/./t1", f"{top}//t1", f"{top}/t1/", f"{top}/t2"]
    rooted, walked = TableDirs(dirs, root=root), TableDirs(dirs)
    assert len(rooted) == len(walked) == 2  # t1 (four ways), t2
    for probe in (root / "t1", root / "t2", root / "t3", root / "t1" / "x"):
        assert rooted.conflict(str(real(probe))) == walked.conflict(str(real(probe)))
    assert rooted.conflict(str(real(root / "t1"))) == "is the directory of another table"


def test_a_prefix_without_one_table_keeps_another_at_the_same_prefix() -> None:
    prefixes = TablePrefixes(["/r/a", "/r/a", "/r/b"], kind="file")
    assert prefixes.without("/r/a").conflict("/r/a") == "is the directory of another table"
    alone = prefixes.without("/r/b")
    assert alone.conflict("/r/b") is None and alone.conflict("/r/b/x") is None
    assert prefixes.conflict("/r/b") == "is the directory of another table"  # not changed
    assert prefixes.without("/r/c").conflict("/r/c") is None
