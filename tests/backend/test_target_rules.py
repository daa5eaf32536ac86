"""The targets rule (``backend.config.targets``): which targets a session may open, the normal
forms an allowlist is matched against; the address rule of the REST client
(``connect_options.address_problem``); the connections file's ``allow_targets``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lance_namespace.errors import InvalidInputError

from backend.config import saved_connections as conns
from backend.config import targets
from backend.rules import connect_options


def realpath(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


@pytest.mark.parametrize(
    ("target", "normal"),
    [
        ("HTTP://Lance.Example.COM:443/api/", "http://lance.example.com:443/api"),
        ("https://lance.example.com:443/api/", "https://lance.example.com/api"),
        ("http://127.0.0.1:9400/jwks", "http://127.0.0.1:9400/jwks"),
        ("http://[::1]:80/", "http://[::1]"),
        ("https://lance.example.com./", "https://lance.example.com"),
        ("s3a://bucket//team/a/", "s3://bucket/team/a"),
        ("gcs://b/p", "gs://b/p"),
        ("memory://scratch", "memory://scratch"),
    ],
)
def test_normal_forms_of_urls_and_object_stores(target: str, normal: str) -> None:
    assert targets.normal_form(target, realpath=realpath) == normal


def test_a_folder_is_matched_by_its_real_path(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    assert targets.normal_form(str(link / "x"), realpath=realpath) == str(real / "x")
    assert targets.normal_form((link / "x").as_uri(), realpath=realpath) == str(real / "x")
    # a symlink cannot smuggle a folder outside the allowlist in
    allowed = [str(tmp_path / "link" / "*")]
    assert targets.allowlist_denial(str(real / "x"), allowed) is not None


@pytest.mark.parametrize(
    "target",
    ["s3://bucket/allowed/../secret", "http://h/a/./b", "http://h/a/%2e%2e/b", "ftp://h/x"],
)
def test_forms_no_pattern_could_judge_are_refused(target: str) -> None:
    with pytest.raises(InvalidInputError):
        targets.normal_form(target, realpath=realpath)


def test_allowlist_matching() -> None:
    allowed = ["/srv/lance/*", "s3://bucket/team-*", "https://lance.example.com/*"]
    assert targets.allowlist_denial("/srv/lance", allowed) is None  # the root itself
    assert targets.allowlist_denial("/srv/lance/a/b", allowed) is None  # '*' crosses '/'
    assert targets.allowlist_denial("s3://bucket/team-x/t", allowed) is None
    assert targets.allowlist_denial("https://lance.example.com", allowed) is None
    for outside in (
        "/srv/lancet",
        "/etc",
        "s3://bucket/other",
        "https://lance.example.com.evil.net",
        "http://127.0.0.1:9400/jwks",
    ):
        why = targets.allowlist_denial(outside, allowed)
        assert why is not None and outside in why and "--allow-target" in why
    assert targets.allowlist_denial("/anything", []) is None  # no allowlist
    assert targets.allowlist_denial("/anything", [""]) is not None  # unreadable: fails closed


def test_the_one_rule_per_source_role_and_exposure() -> None:
    def denial(source: str, role: str | None, exposed: str | None = None, allow=()) -> str | None:
        return targets.denial(
            "/srv/lance/x",
            source=source,
            role=role,
            exposed=exposed,
            patterns=list(allow),
            realpath=realpath,
        )

    for source in ("default", "env", "config", "secrets"):  # configuration: always
        assert denial(source, None, exposed="0.0.0.0", allow=["/nowhere/*"]) is None
    assert denial("session", "admin") is None
    assert denial("session", "admin", allow=["/srv/*"]) is None
    assert "not among the targets" in str(denial("session", "admin", allow=["/data/*"]))
    assert "the viewer role may not open a folder" in str(denial("session", "viewer"))
    assert "the editor role" in str(denial("session", "editor"))
    assert "a user without a role" in str(denial("session", None))
    exposed = str(denial("session", "admin", exposed="0.0.0.0"))
    assert "listens on 0.0.0.0 without sign-in" in exposed


def test_only_a_pattern_with_its_host_written_out_allows_a_metadata_host() -> None:
    normal = "http://169.254.169.254/latest"
    assert targets.names_host_explicitly(normal, ["http://169.254.169.254/*"])
    assert not targets.names_host_explicitly(normal, ["http://*", "http://169.254.*/*", "*"])
    assert not targets.names_host_explicitly(normal, ["http://169.254.169.254:8080/*"])


@pytest.mark.parametrize(
    ("host", "addresses", "why"),
    [
        ("169.254.169.254", [], "cloud metadata address"),
        ("2852039166", [], "cloud metadata address"),  # the same address as one number
        ("0xa9.0xfe.0xa9.0xfe", [], "cloud metadata address"),
        ("::ffff:169.254.169.254", [], "cloud metadata address"),
        ("fd00:ec2::254", [], "cloud metadata address"),
        ("169.254.10.1", [], "link-local address"),
        ("[fe80::1]", [], "link-local address"),
        ("metadata.google.internal", [], "cloud metadata service"),
        ("Metadata.Google.Internal.", [], "cloud metadata service"),
        ("innocent.example", ["203.0.113.5", "169.254.169.254"], "cloud metadata address"),
    ],
)
def test_link_local_and_metadata_addresses_are_refused(host, addresses, why) -> None:
    found = connect_options.address_problem(host, addresses)
    assert found is not None and why in found


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "10.1.2.3", "lance.example"])
def test_other_addresses_pass(host: str) -> None:
    assert connect_options.address_problem(host, ["127.0.0.1", "203.0.113.5"]) is None


def test_connections_file_allowlist_is_kept_by_saves(tmp_path: Path) -> None:
    path = tmp_path / "connections.toml"
    assert conns.load_allowed_targets(path) == ((), [])
    path.write_text('allow_targets = ["/srv/lance/*", "s3://b/*"]\n')
    assert conns.load_allowed_targets(path) == (("/srv/lance/*", "s3://b/*"), [])
    conns.save_connection(conns.ConnectionSpec(name="one", target="/srv/lance/one"), path)
    conns.delete_connection("one", path)
    conns.save_connection(conns.ConnectionSpec(name="two", target="/srv/lance/two"), path)
    assert conns.load_allowed_targets(path) == (("/srv/lance/*", "s3://b/*"), [])
    assert [s.name for s in conns.load_connections(path)[0]] == ["two"]
    path.write_text('allow_targets = "/srv/*"\n')  # not a list: no typed target at all
    patterns, problems = conns.load_allowed_targets(path)
    assert patterns == ("",) and "must be a list" in problems[0]
    with pytest.raises(ValueError, match="must be a list"):  # never rewritten unread
        conns.save_connection(conns.ConnectionSpec(name="x", target="/x"), path)
