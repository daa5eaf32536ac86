"""One secret policy (backend.redaction) for every place a secret could show: names, masks,
URLs, free text, and the log records of the libraries the REST client calls."""

from __future__ import annotations

import logging

import lance_namespace as ln
import pytest

import backend
from backend import redaction
from backend.redaction import REDACTED, is_secret_name, redact_json, redact_text, redact_url
from tests.support import ipc_stream_bytes, make_table

SECRET = "AKIA-very-secret-value-42"


@pytest.mark.parametrize(
    "name",
    [
        "x-api-key",
        "Authorization",
        "cookie",
        "session",
        "x-session-id",
        "client_key",
        "aws_secret_access_key",
        "aws_access_key_id",
        "aws_session_token",
        "azure_storage_account_key",
        "azure_storage_sas_key",
        "google_service_account_key",
        "apiKey",
        "sessionToken",
        "password",
        "db_password",
        "x-amz-security-token",
    ],
)
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "base_tokenizer",
        "max_token_length",
        "page_token",
        "next_page_token",
        "key",
        "primary_key",
        "owner",
        "region",
        "endpoint",
        "api_key_env",
        "with_position",
    ],
)
def test_names_that_are_not_secrets(name: str) -> None:
    assert not is_secret_name(name)


def test_fts_details_stay_readable() -> None:
    details = {"base_tokenizer": "simple", "max_token_length": 40, "aws_session_token": SECRET}
    assert redact_json(details) == {
        "base_tokenizer": "simple",
        "max_token_length": 40,
        "aws_session_token": REDACTED,
    }


def test_urls_and_text() -> None:
    assert SECRET not in redact_url(f"http://user:{SECRET}@h/x?api_key={SECRET}&limit=1")
    assert "limit=1" in redact_url(f"http://h/x?api_key={SECRET}&limit=1")
    redaction.register_secret(SECRET)
    text = f"failed: bad header {SECRET!r} from s3://u:pw@bucket/x"
    shown = redact_text(text)
    assert SECRET not in shown and "pw@" not in shown and REDACTED in shown


def test_httpx_log_records_hold_no_secret(rest_server, caplog) -> None:
    """CreateTable sends its storage options in the query string; httpx logs every request's URL
    at INFO: the console's filter masks the secret in those records."""
    caplog.set_level(logging.DEBUG)
    client = backend.connect(rest_server.url, api_key="conn-key-123456")
    storage = {"aws_secret_access_key": SECRET, "region": "eu"}
    client.create_table(
        ln.CreateTableRequest(id=["t"], storage_options=storage), ipc_stream_bytes(make_table(2))
    )
    httpx_records = [r for r in caplog.records if r.name.startswith(("httpx", "httpcore"))]
    assert any("HTTP Request" in r.getMessage() for r in httpx_records)
    for record in caplog.records:
        message = record.getMessage()
        assert SECRET not in message, message
        assert "conn-key-123456" not in message, message


def test_secret_in_an_exception_text_is_masked(rest_server) -> None:
    """A header value that httpx refuses to send must not come back inside the error."""
    bad = "line1\nline2-secret"
    with pytest.raises(ln.errors.InvalidInputError) as info:
        backend.connect(rest_server.url, api_key=bad)
    assert bad not in str(info.value) and "line2-secret" not in str(info.value)


def test_rust_http_response_dumps_are_cut_other_dumps_stay() -> None:
    from backend.errors import trim_source_locations

    http = (
        "connect: LanceError(IO): Failed to get AWS credentials: ProviderError(ProviderError { "
        'source: ServiceError(ServiceError { raw: Response { status: 403, headers: {"x-amz": '
        '"token-abc"}, body: SdkBody { inner: Once(Some(b"denied")) } } }) })'
    )
    assert trim_source_locations(http) == (
        "connect: LanceError(IO): Failed to get AWS credentials (…)"
    )
    field = (
        "query_table: Failed to execute query: InvalidInput { source: SchemaError(FieldNotFound "
        '{ field: Column { name: "no_such_column" } }) }'
    )
    assert "no_such_column" in trim_source_locations(field)


def test_nested_values_under_a_secret_name_are_masked() -> None:
    nested = {
        "name": "prod",
        "credentials": {"user": "ops", "value": "s3cr3t", "expires": 3600, "rotating": True},
        "tokens": ["tok-a", {"refresh": "tok-b"}],
        "storage_options": {"aws_secret_access_key": "k-1", "region": "eu-west-1"},
    }
    shown = redact_json(nested)
    text = repr(shown)
    for secret in ("ops", "s3cr3t", "3600", "tok-a", "tok-b", "k-1"):
        assert secret not in text, (secret, shown)
    # the shape stays readable: which keys there are, how many tokens, what is not secret
    assert shown["credentials"] == {
        "user": REDACTED, "value": REDACTED, "expires": REDACTED, "rotating": True,
    }  # fmt: skip
    assert shown["tokens"] == [REDACTED, {"refresh": REDACTED}]
    assert shown["storage_options"] == {"aws_secret_access_key": REDACTED, "region": "eu-west-1"}
    assert shown["name"] == "prod"
