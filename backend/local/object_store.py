"""The console's own objects on an object-store root (``s3://``, ``gs://``, ``az://``).

One storage layer for everything the console writes next to the tables: the batch protocol's
lease, journal and decision objects (``backend.local.batch.objects``) and the transaction
records (``backend.local.txn_store``). It is ``obstore``, the Python binding of the Rust
``object_store`` crate that lance itself uses, built from the namespace's storage options the
way lance reads them: the same keys (``aws_endpoint``, ``aws_region``, ``allow_http``, ...),
the same environment variables (``AWS_ENDPOINT``, ``AWS_ACCESS_KEY_ID``, ``AWS_REGION``,
``GOOGLE_SERVICE_ACCOUNT``, ``AZURE_STORAGE_ACCOUNT_NAME``, ...) when an option is not given.

Objects are written whole (a PUT is atomic); nothing here ever writes a zero-byte
"directory marker": an object store has no directories, a key prefix is enough.

Failures leave as namespace errors (:func:`store_error`): a store that cannot be reached is a
``NamespaceConnectionError`` naming the endpoint it tried when one is set, else the storage
options to check.
"""

from __future__ import annotations

import datetime
import os
import re
from collections.abc import Mapping
from typing import Any

from lance_namespace.errors import ErrorCode, LanceNamespaceError

from backend.rules.connect_options import storage_endpoint, storage_setup_hint

from ..errors import NamespaceConnectionError, attach_error_details, make, trim_source_locations

# object_store client options (HTTP client settings); the rest configures the store.
CLIENT_KEYS = frozenset(
    {
        "allow_http",
        "allow_invalid_certificates",
        "timeout",
        "connect_timeout",
        "pool_idle_timeout",
        "pool_max_idle_per_host",
        "proxy_url",
        "proxy_ca_certificate",
        "proxy_excludes",
        "user_agent",
        "http1_only",
        "http2_only",
    }
)
# Options lance reads itself (retries, its own switches): not object_store configuration.
_RETRY_KEYS = {"client_max_retries": "max_retries", "client_retry_timeout": "retry_timeout"}
_LANCE_ONLY_KEYS = frozenset({"download_retry_count", "use_opendal", "expires_at_millis"})
_TRUE = ("1", "true", "yes", "on")


def split_options(
    storage_options: Mapping[str, Any],
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """``(config, client_options, retry_config)`` for obstore from lance storage options."""
    config: dict[str, Any] = {}
    client: dict[str, Any] = {}
    retry: dict[str, Any] = {}
    for key, value in storage_options.items():
        low = key.lower()
        if low in CLIENT_KEYS:
            if low in ("allow_http", "allow_invalid_certificates", "http1_only", "http2_only"):
                client[low] = str(value).strip().lower() in _TRUE
            else:
                client[low] = value
        elif low in _RETRY_KEYS:
            try:
                number = int(str(value).strip())
            except ValueError:
                continue  # lance refuses it with its own message when it opens the root
            retry[_RETRY_KEYS[low]] = (
                datetime.timedelta(seconds=number) if low == "client_retry_timeout" else number
            )
        elif low in _LANCE_ONLY_KEYS or low.startswith("lance."):
            continue
        else:
            config[key] = value
    return config, client, retry


def open_root(root: str, storage_options: Mapping[str, Any] | None = None) -> Any:
    """An obstore store whose keys are relative to ``root`` (no request is made here)."""
    from obstore.store import from_url

    config, client, retry = split_options(dict(storage_options or {}))
    kwargs: dict[str, Any] = {"config": config}
    if client:
        # given client options replace the ones obstore reads from the environment
        # (AWS_ALLOW_HTTP, ...): keep allow_http from there, as lance does
        if (
            "allow_http" not in client
            and (os.environ.get("AWS_ALLOW_HTTP") or os.environ.get("ALLOW_HTTP") or "")
            .strip()
            .lower()
            in _TRUE
        ):
            client["allow_http"] = True
        kwargs["client_options"] = client
    if retry:
        kwargs["retry_config"] = retry
    try:
        return from_url(root.rstrip("/"), **kwargs)
    except Exception as exc:  # noqa: BLE001 - obstore's configuration errors, as input errors
        raise store_error(exc, root, "open the object store", storage_options) from None


def _first_line(text: str) -> str:
    head = text.split("\n\nDebug source:", 1)[0].strip()
    line = trim_source_locations(head.splitlines()[0] if head else "")
    dump = re.search(r"\b[A-Z]\w*\s*\{\s*\w+:|\b[A-Z]\w*\(", line)
    return line[: dump.start()].rstrip(" :(") if dump and dump.start() > 0 else line


# What a failure's text says, as a short reason (first match wins) and its error code.
_REASONS: tuple[tuple[tuple[str, ...], str, ErrorCode | None], ...] = (
    (("nosuchbucket",), "the bucket does not exist", ErrorCode.INVALID_INPUT),
    (
        ("resolveregion",),
        "the bucket's region could not be looked up (no answer from the store)",
        None,
    ),
    (("dns error", "failed to lookup address"), "the store's host name does not resolve", None),
    (
        ("connection refused", "error sending request", "connecterror", "tcp connect"),
        "the store's endpoint did not answer",
        None,
    ),
    (
        ("invalidaccesskeyid", "signaturedoesnotmatch", "accessdenied", "forbidden", "403"),
        "the store refused the credentials",
        ErrorCode.PERMISSION_DENIED,
    ),
    (
        ("missing region", "missing bucket", "missing account", "configuration key"),
        "the storage options are incomplete or unknown",
        ErrorCode.INVALID_INPUT,
    ),
)


# The reasons of an unreachable store, said of the endpoint that could not be reached.
_UNREACHABLE_WHY = {
    "the store's endpoint did not answer": " (nothing answered there)",
    "the store's host name does not resolve": " (its host name does not resolve)",
}


def store_error(
    exc: BaseException | str,
    root: str,
    action: str,
    storage_options: Mapping[str, Any] | None = None,
) -> LanceNamespaceError:
    """An obstore or lance object-store failure as a namespace error: a short reason and the
    storage options to set (:func:`backend.rules.connect_options.storage_setup_hint`). A store that
    cannot be reached is a ``NamespaceConnectionError``; when an S3 endpoint is set (in
    ``storage_options`` or the environment) it names that endpoint as the address that could not
    be reached, instead of asking for options that are set."""
    if isinstance(exc, LanceNamespaceError):
        return exc
    raw = str(exc)
    low = raw.lower()
    reason, code = _first_line(raw) or type(exc).__name__, ErrorCode.INTERNAL
    connection = False
    for needles, text, found_code in _REASONS:
        if any(n in low for n in needles):
            reason = text
            if "options" in text:  # name the option the store refused
                reason = f"{text} ({_first_line(raw)})"
            connection = found_code is None
            code = found_code or ErrorCode.SERVICE_UNAVAILABLE
            break
    endpoint = storage_endpoint(root, storage_options) if connection else ""
    if endpoint:
        why = _UNREACHABLE_WHY.get(reason, "")
        message = (
            f"Cannot {action} at {root}: the endpoint {endpoint} could not be reached{why}. "
            "Check that the S3 server is running there, or correct the storage option "
            "aws_endpoint (or AWS_ENDPOINT in the environment)."
        )
    else:
        message = f"Cannot {action} at {root}: {reason}. {storage_setup_hint(root)}."
    if connection:
        return attach_error_details(NamespaceConnectionError(message), message=message)
    return make(code, message)
