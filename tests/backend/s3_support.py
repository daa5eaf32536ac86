"""Helpers for the object-store tests (moto's S3 server, see tests/conftest.py::S3Server)."""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

import lance
import pyarrow as pa
from lance_namespace import DescribeTableRequest

from backend.local.batch.catalog import parse_manifest_name
from tests.support import StagedVersion


def _split(url: str) -> tuple[str, str]:
    rest = url.split("://", 1)[1]
    bucket, _, key = rest.partition("/")
    return bucket, key.rstrip("/")


def stage_version_s3(ns: Any, server: Any, table_id: list[str], rows: pa.Table) -> StagedVersion:
    """Stage version latest+1 of an S3 table: lance appends ``rows`` (data files written next to
    the table's), then the new manifest moves from ``_versions`` to ``<root>/_staging``, so only
    CreateTableVersion publishes it."""
    location = ns.describe_table(DescribeTableRequest(id=table_id)).location
    ds = lance.write_dataset(rows, location, mode="append", storage_options=server.storage_options)
    bucket, table_key = _split(location)
    s3 = server.client()
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=f"{table_key}/_versions/")["Contents"]
    key = next(
        o["Key"] for o in listed if parse_manifest_name(o["Key"].rsplit("/", 1)[-1]) == ds.version
    )
    root_key = table_key.rsplit("/", 1)[0]
    staged = f"{root_key}/_staging/{uuid.uuid4().hex}.manifest"
    body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    s3.put_object(Bucket=bucket, Key=staged, Body=body)
    s3.delete_object(Bucket=bucket, Key=key)
    return StagedVersion(
        version=ds.version,
        manifest_path=f"s3://{bucket}/{staged}",
        manifest_size=len(body),
        num_rows=ds.count_rows(),
    )


def bucket_state(server: Any, bucket: str) -> dict[str, Any]:
    """What a reader of the namespace can observe, straight from the bucket: the catalog rows
    (read with lance) and every object outside ``__manifest/`` and ``_console/`` (key ->
    content hash)."""
    s3 = server.client()
    objects = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for o in page.get("Contents", []):
            key = o["Key"]
            rel = key.split("/", 1)[1] if "/" in key else key
            if rel.startswith(("__manifest/", "_console/")) or key.endswith("/"):
                continue  # the catalog (read below), the console's records, directory markers
            body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
            objects[rel] = hashlib.sha256(body).hexdigest()
    try:
        ds = lance.dataset(f"s3://{bucket}/root/__manifest", storage_options=server.storage_options)
        rows = {
            r["object_id"]: (r["object_type"], r["location"], r["metadata"])
            for r in ds.to_table().to_pylist()
        }
    except (ValueError, OSError):
        rows = {}
    return {"catalog": rows, "objects": objects}


def console_objects(server: Any, bucket: str, prefix: str = "root/_console/batch/") -> list[str]:
    out = []
    for page in (
        server.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    ):
        out += [o["Key"] for o in page.get("Contents", [])]
    return out


def stage_version_s3_isolated(
    ns: Any, server: Any, table_id: list[str], rows: pa.Table
) -> StagedVersion:
    """Stage version latest+1 of an S3 table without writing a manifest into the table (other
    writers may be appending to it meanwhile): the table's objects are copied to a scratch
    clone under ``<root>/_staging/``, lance appends ``rows`` to the clone, the clone's new data
    and transaction objects are copied into the table's prefix (no manifest of the table names
    them yet) and its new manifest to ``<root>/_staging/<uuid>.manifest``."""
    location = ns.describe_table(DescribeTableRequest(id=table_id)).location
    bucket, table_key = _split(location)
    root_key = table_key.rsplit("/", 1)[0]
    clone_key = f"{root_key}/_staging/clone-{uuid.uuid4().hex}"
    s3 = server.client()

    def keys(prefix: str) -> list[str]:
        out: list[str] = []
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            out += [o["Key"] for o in page.get("Contents", [])]
        return out

    for key in keys(f"{table_key}/"):
        s3.copy_object(
            Bucket=bucket,
            Key=clone_key + key[len(table_key) :],
            CopySource={"Bucket": bucket, "Key": key},
        )
    ds = lance.write_dataset(
        rows, f"s3://{bucket}/{clone_key}", mode="append", storage_options=server.storage_options
    )
    manifest = None
    for key in keys(f"{clone_key}/"):
        rel = key[len(clone_key) + 1 :]
        if rel.startswith("_versions/"):
            if parse_manifest_name(rel.rsplit("/", 1)[-1]) == ds.version:
                manifest = key
            continue
        if rel.startswith(("data/", "_transactions/")):
            target = f"{table_key}/{rel}"
            if not keys(target):
                s3.copy_object(Bucket=bucket, Key=target, CopySource={"Bucket": bucket, "Key": key})
    assert manifest is not None
    staged = f"{root_key}/_staging/{uuid.uuid4().hex}.manifest"
    body = s3.get_object(Bucket=bucket, Key=manifest)["Body"].read()
    s3.put_object(Bucket=bucket, Key=staged, Body=body)
    num_rows = ds.count_rows()
    for key in keys(f"{clone_key}/"):
        s3.delete_object(Bucket=bucket, Key=key)
    return StagedVersion(
        version=ds.version,
        manifest_path=f"s3://{bucket}/{staged}",
        manifest_size=len(body),
        num_rows=num_rows,
    )
