"""Connection options: the rules ``backend.connect``, the sidebar's form and the saved
connections apply before a client is made.

* a REST URL is ``http(s)://host[:port][/path]``: no query, no fragment, and no
  ``user:password@`` (credentials go in ``api_key`` / ``auth_token`` / headers, never in a
  URL that ends up in logs);
* ``timeout`` is a number of seconds in (0, :data:`MAX_TIMEOUT`]; ``max_retries`` an integer
  in [0, 10]; the delimiter one character of ``backend.rules.ids.SAFE_DELIMITERS``;
* secrets (API key, token, secret headers, secret storage options) are printable ASCII: a
  CR, LF, NUL or non-ASCII character would end up in an exception text (httpx quotes refused
  header values) instead of on the wire;
* header names are HTTP tokens, header values printable;
* a REST server is never at a link-local address (``169.254.0.0/16``, ``fe80::/10``) nor at a
  cloud-metadata address or name (:data:`METADATA_ADDRESSES`, :data:`METADATA_HOSTS`), unless
  allowed explicitly: :func:`address_problem` judges the host and every address it resolves
  to (the client resolves; the rule reads nothing);
* object-store roots (``s3://``, ``gs://``, ``az://``): :data:`STORAGE_KEYS` lists the storage
  options each store knows, with a short hint (the Connect dialog offers them);
  :func:`storage_setup_problems` says what is missing before any request is made (no region
  nor endpoint, an ``http://`` endpoint without ``allow_http``, an endpoint without
  credentials, half a key pair), counting the environment variables lance reads too;
  :func:`storage_endpoint` names the S3 endpoint a root is opened at (``scheme://host:port``,
  never credentials).
* pylance's flat property names (what ``lance_namespace.connect(impl, properties)`` and
  ``lancedb.connect_namespace`` pass as keyword arguments) fold into these options:
  ``storage.<key>`` into ``storage_options``, ``header.<Name>`` into ``headers``, numbers and
  booleans given as text parsed (:func:`fold_properties`).
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from lance_namespace.errors import InvalidInputError

from backend.redaction import is_secret_name, register_secret
from backend.rules import ids
from backend.text import capital

MAX_TIMEOUT = 3600.0
MAX_RETRIES = 10
_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")


# Flat property prefixes and the option each folds into (pylance's property names).
PROPERTY_PREFIXES: dict[str, str] = {"storage.": "storage_options", "header.": "headers"}
# Options that arrive as text from a properties dict, and how each is parsed.
_FLOAT_OPTIONS = frozenset({"timeout", "backoff", "retry_cap"})
_INT_OPTIONS = frozenset({"max_retries", "wire_log_size"})
_BOOL_OPTIONS = frozenset({"jitter", "verify"})
_BOOL_TEXT = {"true": True, "false": False}


def check_target(target: Any) -> str:
    """The target as text (a path, URI or URL); ``InvalidInputError`` when it is none of
    these (``None``, a number, a dict...)."""
    if isinstance(target, (str, os.PathLike)):
        text = os.fspath(target)
        if isinstance(text, str):
            return text
    raise InvalidInputError(
        "connect: the target must be a directory path, a file://, memory:// or object-store "
        f"URI, or an http(s):// URL, not {type(target).__name__}"
    )


def fold_properties(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with pylance's flat property names folded in: ``storage.<key>`` entries
    join ``storage_options`` and ``header.<Name>`` entries ``headers`` (a flat entry wins over
    the same key in the mapping); ``timeout``, ``max_retries``, ... given as text (property
    values are strings) become numbers or booleans when the text is one; any other text stays
    as it is, for the option checks to refuse."""
    out: dict[str, Any] = {}
    folded: dict[str, dict[str, Any]] = {}
    for key, value in options.items():
        prefix = next((p for p in PROPERTY_PREFIXES if str(key).startswith(p)), None)
        if prefix is not None:
            folded.setdefault(PROPERTY_PREFIXES[prefix], {})[str(key)[len(prefix) :]] = value
        else:
            out[key] = _parse_text(key, value)
    for option, entries in folded.items():
        given = out.get(option)
        if given is not None and not isinstance(given, Mapping):
            out[option] = given  # not a mapping: the option checks say so
            continue
        out[option] = {**dict(given or {}), **entries}
    return out


def _parse_text(key: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    text = value.strip()
    try:
        if key in _FLOAT_OPTIONS:
            return float(text)
        if key in _INT_OPTIONS:
            return int(text)
    except ValueError:
        return value
    if key in _BOOL_OPTIONS and text.lower() in _BOOL_TEXT:
        return _BOOL_TEXT[text.lower()]
    return value


def is_rest_target(target: Any) -> bool:
    """Whether ``target`` names a REST namespace server (``http://`` / ``https://``)."""
    return str(target).strip().lower().startswith(("http://", "https://"))


def target_kind(target: Any) -> str:
    """``"rest"`` for http(s) URLs, else ``"local"``: the one rule ``connect`` follows."""
    return "rest" if is_rest_target(target) else "local"


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a REST namespace URL (``None``: it can)."""
    text = str(url).strip()
    if any(ord(c) < 33 or ord(c) == 127 for c in text):
        return "the server URL contains white space or control characters"
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        return f"the server URL is not valid: {exc}"
    if parts.scheme.lower() not in ("http", "https"):
        return "the server URL must start with http:// or https://"
    if not parts.hostname:
        return "the server URL has no host"
    if "@" in parts.netloc:
        return (
            "the server URL holds a user name or password: give credentials as the API key, "
            "the bearer token or a header instead"
        )
    if parts.query or text.endswith("?"):
        return "the server URL must not have a query string (?...)"
    if parts.fragment or "#" in text:
        return "the server URL must not have a fragment (#...)"
    if port is not None and not 0 < port < 65536:
        return f"the server URL's port {port} is out of range"
    return None


# Cloud instance-metadata services (AWS IMDS v4/v6, ECS task metadata, Alibaba, Oracle...) and
# the names they answer at. Link-local addresses are refused as a whole besides these.
METADATA_ADDRESSES: frozenset[ipaddress.IPv4Address | ipaddress.IPv6Address] = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",
        "169.254.170.2",
        "169.254.169.253",
        "fd00:ec2::254",
        "fd00:ec2::23",
        "100.100.100.200",
        "192.0.0.192",
    )
)
METADATA_HOSTS: frozenset[str] = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "metadata.azure.com",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.tencentyun.com",
        "metadata.packet.net",
    }
)


def host_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP address written as ``host`` (any form the C resolver takes as a number:
    ``169.254.169.254``, ``2852039166``, ``0xa9.0xfe.0xa9.0xfe``, ``[fe80::1]``), an IPv4 address
    mapped into IPv6 as its IPv4 address; ``None`` for a host name."""
    text = str(host).strip().strip("[]").split("%", 1)[0]
    try:
        found = ipaddress.ip_address(text)
    except ValueError:
        if not text or not re.fullmatch(r"[0-9a-fA-FxX.]+", text):
            return None
        try:  # inet_aton: the C library's forms of an IPv4 address (no lookup)
            found = ipaddress.ip_address(socket.inet_aton(text))
        except OSError:
            return None
    if isinstance(found, ipaddress.IPv6Address) and found.ipv4_mapped is not None:
        return found.ipv4_mapped
    return found


def address_problem(host: str, addresses: Iterable[str] = ()) -> str | None:
    """Why a REST client must not connect to ``host`` that resolved to ``addresses``: a
    link-local or cloud-metadata address, or a metadata service's name (``None``: fine). The
    host itself is judged too, so a caller that cannot resolve still refuses the known forms."""
    name = str(host).strip().strip("[]").rstrip(".").lower()
    if name in METADATA_HOSTS:
        return f"{name} is a cloud metadata service"
    for raw in (name, *addresses):
        found = host_address(raw)
        if found is None:
            continue
        shown = name if str(found) == name else f"{name} ({found})"
        if found in METADATA_ADDRESSES:
            return f"{shown} is a cloud metadata address"
        if found.is_link_local:
            return f"{shown} is a link-local address"
    return None


def secret_problem(value: Any, what: str) -> str | None:
    """Why ``value`` cannot be sent as the secret ``what`` (never echoes the value)."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        return f"the {what} must be a string"
    if not all(32 <= ord(c) < 127 for c in value):
        return (
            f"the {what} contains a character that is not printable ASCII (a line break, NUL "
            "or non-ASCII character): check what was pasted"
        )
    if len(value) > 16 * 1024:
        return f"the {what} is longer than 16 KiB"
    return None


def header_problem(name: Any, value: Any) -> str | None:
    if not isinstance(name, str) or not _HEADER_NAME.match(name):
        return f"{str(name)[:40]!r} is not a valid HTTP header name"
    if is_secret_name(name):
        return secret_problem(value, f"header {name}")
    text = str(value)
    if any(ord(c) < 32 and c != "\t" or ord(c) == 127 for c in text):
        return f"the value of header {name} contains a control character"
    return None


def number_problem(value: Any, what: str, low: float, high: float, *, integer: bool) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{what} must be a number, not {type(value).__name__}"
    if value != value or (integer and float(value) != int(value)):
        return f"{what} must be {'a whole number' if integer else 'a number'}"
    if not low <= value <= high:
        return f"{what} must be between {low:g} and {high:g}"
    return None


def rest_option_problems(url: str, options: Mapping[str, Any]) -> list[str]:
    """Every problem of a REST connection's URL and options."""
    problems = [p for p in [url_problem(url)] if p]
    for key, what in (("api_key", "API key"), ("auth_token", "bearer token")):
        p = secret_problem(options.get(key), what)
        if p:
            problems.append(p)
    headers = options.get("headers") or {}
    if not isinstance(headers, Mapping):
        problems.append("headers must be a mapping of names to values")
    else:
        problems += [p for p in (header_problem(k, v) for k, v in headers.items()) if p]
    timeout = options.get("timeout")
    p = number_problem(timeout, "the timeout (seconds)", 0.001, MAX_TIMEOUT, integer=False)
    if p:
        problems.append(p)
    p = number_problem(options.get("max_retries"), "max_retries", 0, MAX_RETRIES, integer=True)
    if p:
        problems.append(p)
    if "delimiter" in options and options["delimiter"] is not None:
        p = ids.delimiter_problem(options["delimiter"])
        if p:
            problems.append(p)
    return problems


def storage_option_problems(storage_options: Mapping[str, Any] | None) -> list[str]:
    problems = []
    for key, value in (storage_options or {}).items():
        if not isinstance(key, str) or not key or any(ord(c) < 33 for c in key):
            problems.append(f"{str(key)[:40]!r} is not a valid storage option name")
        elif is_secret_name(key):
            p = secret_problem(value, f"storage option {key}")
            if p:
                problems.append(p)
    return problems


def check_rest_options(url: str, options: Mapping[str, Any]) -> None:
    """``InvalidInputError`` listing :func:`rest_option_problems`; registers the secrets with
    ``backend.redaction`` so that no text the console writes can show them."""
    problems = rest_option_problems(url, options)
    if problems:
        raise InvalidInputError("; ".join(capital(p) for p in problems))
    for key in ("api_key", "auth_token"):
        register_secret(options.get(key))
    for name, value in (options.get("headers") or {}).items():
        if is_secret_name(name):
            register_secret(value)


def check_storage_options(storage_options: Mapping[str, Any] | None) -> dict[str, str]:
    problems = storage_option_problems(storage_options)
    if problems:
        raise InvalidInputError("; ".join(capital(p) for p in problems))
    out = {str(k): str(v) for k, v in (storage_options or {}).items()}
    for key, value in out.items():
        if is_secret_name(key):
            register_secret(value)
    return out


class StorageKey(NamedTuple):
    """A storage option an object store knows: its name, a short hint, the env variable lance
    reads when the option is not given."""

    key: str
    hint: str
    env: str = ""


# The storage options worth knowing per object store (lance / object_store key names).
STORAGE_KEYS: dict[str, tuple[StorageKey, ...]] = {
    "s3": (
        StorageKey("aws_region", "the bucket's region, e.g. us-east-1", "AWS_REGION"),
        StorageKey(
            "aws_endpoint",
            "S3-compatible server URL, e.g. http://127.0.0.1:9000 (MinIO, moto, R2)",
            "AWS_ENDPOINT",
        ),
        StorageKey(
            "aws_access_key_id", "access key id (secret: better from env)", "AWS_ACCESS_KEY_ID"
        ),
        StorageKey("aws_secret_access_key", "secret access key (secret)", "AWS_SECRET_ACCESS_KEY"),
        StorageKey(
            "aws_session_token", "session token of temporary credentials", "AWS_SESSION_TOKEN"
        ),
        StorageKey("allow_http", "true to allow an http:// endpoint", "AWS_ALLOW_HTTP"),
        StorageKey(
            "aws_virtual_hosted_style_request",
            "true: bucket in the host name (false: in the path, as MinIO wants)",
            "AWS_VIRTUAL_HOSTED_STYLE_REQUEST",
        ),
        StorageKey(
            "aws_skip_signature", "true: anonymous access to a public bucket", "AWS_SKIP_SIGNATURE"
        ),
    ),
    "gs": (
        StorageKey(
            "google_service_account",
            "path of a service-account JSON file",
            "GOOGLE_SERVICE_ACCOUNT",
        ),
        StorageKey(
            "google_service_account_key",
            "the service-account JSON itself (secret)",
            "GOOGLE_SERVICE_ACCOUNT_KEY",
        ),
        StorageKey(
            "google_application_credentials",
            "path of application-default credentials",
            "GOOGLE_APPLICATION_CREDENTIALS",
        ),
    ),
    "az": (
        StorageKey(
            "azure_storage_account_name", "storage account name", "AZURE_STORAGE_ACCOUNT_NAME"
        ),
        StorageKey(
            "azure_storage_account_key", "account key (secret)", "AZURE_STORAGE_ACCOUNT_KEY"
        ),
        StorageKey(
            "azure_storage_sas_token",
            "SAS token instead of a key (secret)",
            "AZURE_STORAGE_SAS_TOKEN",
        ),
        StorageKey("azure_client_id", "service principal: client id", "AZURE_CLIENT_ID"),
        StorageKey(
            "azure_client_secret", "service principal: client secret", "AZURE_CLIENT_SECRET"
        ),
        StorageKey("azure_tenant_id", "service principal: tenant id", "AZURE_TENANT_ID"),
        StorageKey(
            "azure_storage_use_emulator",
            "true for Azurite on localhost",
            "AZURE_STORAGE_USE_EMULATOR",
        ),
    ),
}
# Options every store reads.
COMMON_STORAGE_KEYS = (
    StorageKey("timeout", "request timeout, e.g. 30s"),
    StorageKey("connect_timeout", "connection timeout, e.g. 5s"),
    StorageKey("client_max_retries", "retries of a failed request (lance: 10)"),
)
_STORE_OF_SCHEME = {
    "s3": "s3",
    "s3a": "s3",
    "gs": "gs",
    "gcs": "gs",
    "az": "az",
    "azure": "az",
    "abfs": "az",
    "abfss": "az",
    "adl": "az",
}


def object_store_kind(target: Any) -> str | None:
    """``"s3"``, ``"gs"`` or ``"az"`` for an object-store URI, else ``None``."""
    scheme = str(target).strip().split("://", 1)[0].lower() if "://" in str(target) else ""
    return _STORE_OF_SCHEME.get(scheme)


def storage_keys(target: Any) -> tuple[StorageKey, ...]:
    """The storage options worth offering for ``target`` (every store's when unknown)."""
    kind = object_store_kind(target)
    if kind is None:
        return tuple(k for keys in STORAGE_KEYS.values() for k in keys) + COMMON_STORAGE_KEYS
    return STORAGE_KEYS[kind] + COMMON_STORAGE_KEYS


def storage_setup_hint(target: Any) -> str:
    """One sentence naming the storage options a root of ``target``'s store needs."""
    kind = object_store_kind(target)
    if kind == "s3":
        return (
            "Set the storage options aws_region (the bucket's region) and the credentials "
            "aws_access_key_id / aws_secret_access_key (or AWS_REGION, AWS_ACCESS_KEY_ID, "
            "AWS_SECRET_ACCESS_KEY in the environment); for an S3-compatible server also "
            "aws_endpoint (e.g. http://127.0.0.1:9000) and allow_http=true for http://"
        )
    if kind == "gs":
        return (
            "Set the storage option google_service_account (a service-account JSON file) or "
            "GOOGLE_APPLICATION_CREDENTIALS in the environment"
        )
    if kind == "az":
        return (
            "Set the storage options azure_storage_account_name and azure_storage_account_key "
            "(or azure_storage_sas_token, or AZURE_STORAGE_ACCOUNT_NAME / "
            "AZURE_STORAGE_ACCOUNT_KEY in the environment)"
        )
    return "Check the storage options"


def _given(options: Mapping[str, str], env: Mapping[str, str], keys: tuple[str, ...]) -> str:
    """The first non-empty value of ``keys`` in the options (any case), then in the environment
    (upper case): where lance looks."""
    low = {k.lower(): v for k, v in options.items()}
    for key in keys:
        if str(low.get(key, "")).strip():
            return str(low[key]).strip()
    for key in keys:
        if str(env.get(key.upper(), "")).strip():
            return str(env[key.upper()]).strip()
    return ""


_ENDPOINT_KEYS = ("aws_endpoint", "aws_endpoint_url", "endpoint", "endpoint_url")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def endpoint_address(endpoint: str) -> str:
    """``scheme://host:port`` of an endpoint URL, as messages name it: no user name or
    password, path or query; the scheme's port when none is given."""
    text = str(endpoint).strip()
    try:
        parts = urlsplit(text if "://" in text else f"//{text}")
        port = parts.port
    except ValueError:
        return text.rsplit("@", 1)[-1].split("/", 1)[0].split("?", 1)[0]
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    scheme = parts.scheme.lower()
    port = port or _DEFAULT_PORTS.get(scheme)
    address = f"{host}:{port}" if port else host
    return f"{scheme}://{address}" if scheme else address


def storage_endpoint(
    target: Any, storage_options: Mapping[str, Any] | None, env: Mapping[str, str] | None = None
) -> str:
    """The S3 endpoint an object-store root ``target`` is opened at (the storage option, else
    the environment variable lance reads) as :func:`endpoint_address` shows it; ``""`` when
    none is set or the root is not on S3."""
    if object_store_kind(target) != "s3":
        return ""
    env = os.environ if env is None else env
    options = {str(k): str(v) for k, v in (storage_options or {}).items()}
    endpoint = _given(options, env, _ENDPOINT_KEYS)
    return endpoint_address(endpoint) if endpoint else ""


def storage_setup_problems(
    target: Any, storage_options: Mapping[str, Any] | None, env: Mapping[str, str] | None = None
) -> list[str]:
    """What is certainly missing to open the object-store root ``target`` (``[]``: nothing
    known; the store may still refuse). Options first, then the environment lance reads."""
    env = os.environ if env is None else env
    options = {str(k): str(v) for k, v in (storage_options or {}).items()}
    kind = object_store_kind(target)
    problems: list[str] = []
    if kind == "s3":
        region = _given(options, env, ("aws_region", "region", "aws_default_region"))
        endpoint = _given(options, env, _ENDPOINT_KEYS)
        if not region and not endpoint:
            problems.append(
                "no region: set the storage option aws_region (e.g. us-east-1) or AWS_REGION; "
                "for an S3-compatible server set aws_endpoint (e.g. http://127.0.0.1:9000)"
            )
        allow_http = _given(options, env, ("allow_http", "aws_allow_http"))
        if endpoint.lower().startswith("http://") and allow_http.lower() not in _TRUE:
            problems.append(
                f"the endpoint {endpoint_address(endpoint)} is plain http: set the storage "
                "option allow_http=true (or use https://)"
            )
        key_id = _given(options, env, ("aws_access_key_id", "access_key_id"))
        secret = _given(options, env, ("aws_secret_access_key", "secret_access_key"))
        if bool(key_id) != bool(secret):
            missing = "aws_secret_access_key" if key_id else "aws_access_key_id"
            problems.append(f"half a key pair: set {missing} too")
        other_credentials = _given(
            options,
            env,
            (
                "aws_skip_signature",
                "aws_profile",
                "aws_web_identity_token_file",
                "aws_container_credentials_relative_uri",
                "aws_container_credentials_full_uri",
            ),
        )
        # an S3-compatible server (not AWS itself, where instance roles are normal) needs
        # credentials; without them the AWS chain would probe the instance metadata service
        host = (urlsplit(endpoint).hostname or "") if "://" in endpoint else endpoint
        on_aws = host.lower().rstrip(".").endswith(".amazonaws.com")
        if endpoint and not on_aws and not (key_id or secret or other_credentials):
            problems.append(
                "no credentials for the endpoint: set aws_access_key_id and "
                "aws_secret_access_key (or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY), or "
                "aws_skip_signature=true for a public bucket"
            )
    elif kind == "az":
        netloc = str(target).split("://", 1)[1].split("/", 1)[0]
        account = _given(
            options, env, ("azure_storage_account_name", "account_name", "azure_account_name")
        )
        emulator = _given(options, env, ("azure_storage_use_emulator", "use_emulator"))
        if not account and "@" not in netloc and "." not in netloc and emulator not in _TRUE:
            problems.append(
                "no storage account: set the storage option azure_storage_account_name (or "
                "AZURE_STORAGE_ACCOUNT_NAME)"
            )
    return problems


_TRUE = ("1", "true", "yes", "on")
