"""TLS to a REST namespace server: what ``verify`` does, and the contexts a process shares.

A real HTTPS server on loopback (``http.server`` wrapped in TLS) with a self-signed certificate
made for the test: a client that verifies refuses it, one given that certificate as its CA
bundle (by path, or through ``SSL_CERT_FILE`` as httpx reads it) and one that does not verify
are answered. Clients with the same setting share one ``SSLContext``
(``backend.rest.tls``): building one reads the whole CA bundle.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from lance_namespace import ListNamespacesRequest
from lance_namespace.errors import LanceNamespaceError

import backend
from backend.rest import tls
from tests.support import namespaces_listener


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 signed by its own key: (certificate, key) PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "server.pem", folder / "server.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


@pytest.fixture
def https_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(the server's URL, its certificate's PEM file)."""
    cert_file, key_file = self_signed(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    with namespaces_listener(context) as (port, _):
        yield f"https://127.0.0.1:{port}", cert_file


def listed(url: str, **options: object) -> list[str]:
    client = backend.connect(url, **options)
    return list(client.list_namespaces(ListNamespacesRequest(id=[])).namespaces)


def test_verify_refuses_an_unknown_certificate_and_accepts_a_given_bundle(
    https_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, cert_file = https_server
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with pytest.raises(LanceNamespaceError, match="(?i)certificate"):
        listed(url)
    assert listed(url, verify=False) == []
    with pytest.warns(DeprecationWarning):  # httpx's own warning for a path
        assert listed(url, verify=str(cert_file)) == []
    # httpx reads SSL_CERT_FILE as it builds the default context: a shared context built
    # before the variable was set is not used after it
    monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))
    assert listed(url) == []
    monkeypatch.delenv("SSL_CERT_FILE")
    with pytest.raises(LanceNamespaceError, match="(?i)certificate"):
        listed(url)


def test_clients_with_the_same_setting_share_one_context(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    verifying, unverified = tls.ssl_context(True), tls.ssl_context(False)
    assert verifying is tls.ssl_context(True) and unverified is tls.ssl_context(False)
    assert isinstance(verifying, ssl.SSLContext) and isinstance(unverified, ssl.SSLContext)
    assert verifying.verify_mode == ssl.CERT_REQUIRED and verifying.check_hostname
    assert unverified.verify_mode == ssl.CERT_NONE and not unverified.check_hostname
    assert tls.ssl_context("/some/ca.pem") == "/some/ca.pem"  # read anew by each client
