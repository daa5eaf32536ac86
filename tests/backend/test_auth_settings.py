"""The sign-in settings check (``backend.config.auth_settings.check_auth``) and where the
launcher reads them from (``backend.config.launch.auth_settings``): the same files, in the
same order, as Streamlit."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.config import launch
from backend.config.auth_settings import MIN_COOKIE_SECRET, check_auth

COMPLETE = {
    "redirect_uri": "https://console.example.com/oauth2callback",
    "cookie_secret": "c" * MIN_COOKIE_SECRET,
    "client_id": "lance-console",
    "client_secret": "from-the-provider-0123456789",
    "server_metadata_url": "https://id.example.com/.well-known/openid-configuration",
}
NAMED = {k: COMPLETE[k] for k in ("client_id", "client_secret")} | {
    "server_metadata_url": "https://login.example.org/.well-known/openid-configuration"
}


def without(key: str) -> dict:
    return {k: v for k, v in COMPLETE.items() if k != key}


def test_no_section_is_off_and_a_complete_one_is_on() -> None:
    off = check_auth(None, source="/x/secrets.toml")
    assert not off.present and not off.enabled and not off.invalid
    assert off.summary() == "sign-in: off (no [auth] section in /x/secrets.toml)"
    on = check_auth(COMPLETE, source="/x/secrets.toml")
    assert on.enabled and [p.name for p in on.providers] == ["default"]
    assert on.summary() == "sign-in: on (provider id.example.com, from /x/secrets.toml)"
    both = check_auth({**COMPLETE, "corp": NAMED, "client_kwargs": {"prompt": "login"}})
    assert both.enabled and [(p.name, p.host) for p in both.providers] == [
        ("default", "id.example.com"),
        ("corp", "login.example.org"),
    ]
    only_named = check_auth({k: COMPLETE[k] for k in ("redirect_uri", "cookie_secret")} | {
        "corp": NAMED
    })  # fmt: skip
    assert only_named.enabled and [p.name for p in only_named.providers] == ["corp"]
    for settings in (on, both):
        for secret in (COMPLETE["client_secret"], COMPLETE["cookie_secret"]):
            assert secret not in settings.summary()


INCOMPLETE = [
    (without("redirect_uri"), "[auth] is missing redirect_uri"),
    (without("cookie_secret"), "[auth] is missing cookie_secret"),
    (without("client_id"), "[auth] is missing client_id"),
    (without("client_secret"), "[auth] is missing client_secret"),
    (without("server_metadata_url"), "[auth] is missing server_metadata_url"),
    ({**COMPLETE, "client_secret": "  "}, "[auth] is missing client_secret"),
    ({**COMPLETE, "cookie_secret": "short"}, f"shorter than {MIN_COOKIE_SECRET} characters"),
    ({**COMPLETE, "redirect_uri": "console.example.com/oauth2callback"}, "not an http(s) URL"),
    ({**COMPLETE, "redirect_uri": "ftp://h/oauth2callback"}, "redirect_uri is not an http(s)"),
    ({**COMPLETE, "redirect_uri": "https://h/"}, "does not end with /oauth2callback"),
    ({**COMPLETE, "server_metadata_url": "id.example.com"}, "server_metadata_url is not an"),
    ({**COMPLETE, "corp": without("client_secret")}, "[auth.corp] is missing client_secret"),
    ({**COMPLETE, "my_corp": NAMED}, "[auth.my_corp]: a provider name may not contain '_'"),
    ({"redirect_uri": COMPLETE["redirect_uri"]}, "missing cookie_secret"),
    ({}, "[auth] is missing redirect_uri, cookie_secret"),
    ("not a table", "[auth] is not a table"),
]


@pytest.mark.parametrize(("section", "problem"), INCOMPLETE)
def test_an_incomplete_section_is_invalid_naming_what_is_missing(section, problem) -> None:
    settings = check_auth(section, source="/x/secrets.toml")
    assert settings.present and settings.invalid and not settings.enabled
    assert problem in settings.summary(), settings.summary()
    assert settings.summary().startswith("sign-in: invalid (the [auth] section in /x/secrets.toml")
    assert COMPLETE["client_secret"] not in settings.summary()


def test_the_launcher_reads_streamlits_files_in_streamlits_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """~/.streamlit, then the working directory's .streamlit, then the app's own; the last
    file with an [auth] table gives it (Streamlit replaces top-level tables file by file)."""
    home, cwd, app = tmp_path / "home", tmp_path / "cwd", tmp_path / "app"
    monkeypatch.setenv("HOME", str(home))
    files = launch.secrets_files(cwd, app)
    assert files == [
        home / ".streamlit" / "secrets.toml",
        cwd / ".streamlit" / "secrets.toml",
        app / ".streamlit" / "secrets.toml",
    ]
    assert launch.secrets_files(cwd)[-1] == launch.APP_DIR / ".streamlit" / "secrets.toml"
    assert (launch.APP_DIR / "main.py").is_file()

    def write(path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def toml(section: dict) -> str:
        return "[auth]\n" + "".join(f'{k} = "{v}"\n' for k, v in section.items())

    assert launch.auth_settings(files).summary().startswith("sign-in: off (no [auth] section in")
    write(files[0], toml(COMPLETE))
    assert launch.auth_settings(files).enabled
    # the working directory's incomplete [auth] replaces the home one's: invalid
    write(files[1], toml(without("client_secret")))
    settings = launch.auth_settings(files)
    assert settings.invalid and settings.source == str(files[1])
    assert "missing client_secret" in settings.summary()
    # a file without [auth] changes nothing; one Streamlit cannot parse makes it invalid
    write(files[2], 'other = "x"\n')
    assert launch.auth_settings(files).source == str(files[1])
    write(files[2], "[auth\nbroken")
    broken = launch.auth_settings(files)
    assert broken.invalid and "could not be read as TOML" in broken.summary()
