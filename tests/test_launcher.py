"""``lance-console``: the launch policy, storage options and secrets, and the real launcher.

The process tests run ``python -m backend.launcher.cli`` as a user would (its own working directory and
home, a free port), wait for streamlit's health check and stop the launcher by its pid. What
the console process was given is read from ``/proc`` (its command line and environment).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest
from lance_namespace import (
    CreateNamespaceRequest,
    CreateTableRequest,
    DropTableRequest,
    ListTablesRequest,
    RenameTableRequest,
)

import backend
from backend.config import launch
from backend.launcher import cli
from backend.launcher import options as launcher_options
from backend.redaction import REDACTED
from tests.support import free_port, ipc_stream_bytes

REPO = Path(__file__).resolve().parents[1]
SECRET = "s3cr3t-value-0123456789abcdef"
START_TIMEOUT = 120.0  # the machine is slow and shared


# -- the policy ---------------------------------------------------------------------------------
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.9"])
def test_loopback_addresses(host: str) -> None:
    assert launch.is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "example.com", ""])
def test_exposed_addresses(host: str) -> None:
    assert not launch.is_loopback(host)


def test_sign_in_is_an_auth_section_in_secrets_toml(tmp_path: Path) -> None:
    secrets = tmp_path / "secrets.toml"
    assert not launch.sign_in_configured([secrets])  # no file
    secrets.write_text('[connections.prod]\ntarget = "x"\n')
    assert not launch.sign_in_configured([secrets])
    secrets.write_text("[auth\nbroken")
    assert not launch.sign_in_configured([secrets])
    secrets.write_text('[auth]\nredirect_uri = "http://localhost:8501/oauth2callback"\n')
    assert not launch.sign_in_configured([secrets])  # incomplete: st.login could not work
    secrets.write_text(
        "[auth]\n"
        'redirect_uri = "http://localhost:8501/oauth2callback"\n'
        'cookie_secret = "a-long-random-string-0123456789abcdef"\n'
        'client_id = "lance-console"\n'
        'client_secret = "from-the-provider"\n'
        'server_metadata_url = "https://id.example.com/.well-known/openid-configuration"\n'
    )
    assert launch.sign_in_configured([tmp_path / "missing.toml", secrets])
    assert tmp_path / ".streamlit" / "secrets.toml" in launch.secrets_files(tmp_path)


def test_launch_mode_rules() -> None:
    env: dict[str, str] = {}
    assert cli.launch_mode("127.0.0.1", env=env) == cli.Mode(None, None)
    exposed = cli.launch_mode("0.0.0.0", signed_in=False, env=env)
    assert exposed.read_only_reason == "it listens on 0.0.0.0 and no sign-in is configured"
    (advice,) = exposed.messages
    assert "[auth]" in advice and ".streamlit/secrets.toml" in advice
    assert "--allow-anonymous-writes" in advice
    assert cli.launch_mode("0.0.0.0", signed_in=True, env=env) == cli.Mode(None, None)
    anonymous = cli.launch_mode("0.0.0.0", allow_anonymous_writes=True, signed_in=False, env=env)
    assert anonymous.read_only_reason is None and anonymous.anonymous_writes == "0.0.0.0"
    assert "WARNING" in anonymous.messages[0]
    # --read-only and the environment variable win over everything
    for mode in (
        cli.launch_mode("0.0.0.0", read_only=True, allow_anonymous_writes=True, env=env),
        cli.launch_mode("127.0.0.1", env={launch.READ_ONLY_ENV: "1"}),
    ):
        assert mode.read_only_reason and mode.anonymous_writes is None
    assert cli.launch_mode("127.0.0.1", env={launch.READ_ONLY_ENV: "0"}).read_only_reason is None


def test_console_reads_what_the_launcher_sets() -> None:
    mode = cli.launch_mode("0.0.0.0", allow_anonymous_writes=True, signed_in=False, env={})
    _, env = cli.build_command("/data", 8600, no_browser=True, host="0.0.0.0", mode=mode)
    assert launch.launch_read_only(env) is None and launch.anonymous_writes(env) == "0.0.0.0"
    mode = cli.launch_mode("0.0.0.0", signed_in=False, env={})
    _, env = cli.build_command("/data", 8600, no_browser=True, host="0.0.0.0", mode=mode)
    assert launch.launch_read_only(env) == mode.read_only_reason
    assert launch.anonymous_writes(env) is None


# -- Streamlit's settings, wherever the launcher is started -----------------------------------
# A folder of the user's own: its .streamlit/ says the opposite of the project on every point.
FOREIGN_CONFIG = """\
[server]
maxUploadSize = 200
[client]
toolbarMode = "developer"
showErrorDetails = "full"
[browser]
gatherUsageStats = true
[theme]
base = "dark"
primaryColor = "#FF0000"
backgroundColor = "#000000"
font = "monospace"
"""


def foreign_folder(path: Path) -> Path:
    (path / ".streamlit").mkdir(parents=True)
    (path / ".streamlit" / "config.toml").write_text(FOREIGN_CONFIG)
    (path / ".streamlit" / "secrets.toml").write_text('[connections.prod]\ntarget = "/srv"\n')
    return path


def project_config() -> dict[str, dict]:
    import tomllib

    return tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())


def flags(argv: list[str]) -> dict[str, list[str]]:
    """``--section.option value`` pairs of a ``streamlit run`` command line."""
    out: dict[str, list[str]] = {}
    rest = argv[argv.index("run") + 2 :]
    for flag, value in zip(rest[::2], rest[1::2], strict=True):
        assert flag.startswith("--"), rest
        out.setdefault(flag[2:], []).append(value)
    return out


def test_command_sets_the_projects_streamlit_settings_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit import config as st_config

    monkeypatch.chdir(foreign_folder(tmp_path))
    monkeypatch.delenv("LANCE_CONSOLE_MAX_IMPORT_BYTES", raising=False)
    monkeypatch.delenv("STREAMLIT_BROWSER_SERVER_ADDRESS", raising=False)
    argv, _ = cli.build_command("/data", 8600, no_browser=True, host="0.0.0.0")
    given = flags(argv)
    # every setting of the project's file, as the file writes it
    for section, options in project_config().items():
        for option, value in options.items():
            text = str(value).lower() if isinstance(value, bool) else str(value)
            name = f"{section}.{option}"
            if name != "server.maxUploadSize":  # the cap in force, below
                assert given[name] == [text], name
    assert project_config()["theme"]["base"] == "light"  # no base left to the folder's file
    # the ones that always hold
    assert given["client.toolbarMode"] == ["minimal"]
    assert given["browser.gatherUsageStats"] == ["false"]
    assert given["server.headless"] == ["true"]
    # no full collection after every script run: its cost grows with what the sessions keep
    assert given["runner.postScriptGC"] == ["false"]
    assert given["client.showErrorDetails"] == [project_config()["client"]["showErrorDetails"]]
    assert given["server.maxUploadSize"] == [str((1 << 30) // (1 << 20))]  # 1 GiB, in MB
    assert given["server.address"] == ["0.0.0.0"] and given["server.port"] == ["8600"]
    # an any-address bind names the address users reach: no external-IP lookup at start-up
    assert given["browser.serverAddress"] == ["localhost"]
    # each is one of streamlit's options, settable on its command line
    for name in given:
        option = st_config._config_options_template[name]
        assert not option.sensitive and not option.deprecated, name

    argv, _ = cli.build_command("/data", 8600, no_browser=True)  # loopback: its own address
    assert "browser.serverAddress" not in flags(argv)
    monkeypatch.setenv("STREAMLIT_BROWSER_SERVER_ADDRESS", "console.example.com")
    argv, _ = cli.build_command("/data", 8600, no_browser=True, host="0.0.0.0")
    assert "browser.serverAddress" not in flags(argv)  # the user's name for it stands


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (None, "is missing: the installation is incomplete"),
        (b"[server\nport = 1\n", "cannot be read: Expected ']' at the end of a table declaration"),
        (b"[theme]\nfont = '\xff'\n", "cannot be read: it is not UTF-8 text (byte 17), as TOML is"),
    ],
    ids=["missing", "not-toml", "not-utf8"],
)
def test_a_missing_or_damaged_project_settings_file_stops_the_launch_in_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, content: bytes | None, reason: str
) -> None:
    """The project's own ``.streamlit/config.toml`` is read as the console's other settings
    files are: a damaged install is said in one line, and nothing is created."""
    from backend.launcher import streamlit_settings

    config = tmp_path / "config.toml"
    if content is not None:
        config.write_bytes(content)
    monkeypatch.setattr(streamlit_settings, "PROJECT_CONFIG", config)
    demo = tmp_path / "demo"
    assert cli.main(["--demo-dir", str(demo), "--no-browser"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"lance-console: the console's Streamlit settings: {config} {reason}")
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert not demo.exists()


def test_upload_limit_follows_the_import_cap(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("LANCE_CONSOLE_MAX_IMPORT_BYTES", str(5 * (1 << 30) + 1))
    argv, _ = cli.build_command("/data", 8600, no_browser=True)
    assert flags(argv)["server.maxUploadSize"] == [str(5 * 1024 + 1)]  # rounded up: never less
    monkeypatch.setenv("LANCE_CONSOLE_MAX_IMPORT_BYTES", "1000")
    argv, _ = cli.build_command("/data", 8600, no_browser=True)
    assert flags(argv)["server.maxUploadSize"] == ["1"]
    # a cap that is no number: refused before anything is created
    monkeypatch.setenv("LANCE_CONSOLE_MAX_IMPORT_BYTES", "1GB")
    demo = tmp_path / "demo"
    assert cli.main(["--demo-dir", str(demo), "--no-browser"]) == 2
    assert "LANCE_CONSOLE_MAX_IMPORT_BYTES must be a positive number" in capsys.readouterr().err
    assert not demo.exists()


def test_allow_target_is_repeatable_and_reaches_the_console(capsys) -> None:
    """``--allow-target`` (repeatable) and ``--host`` travel to the console in its environment,
    read back by the console's own functions; an empty pattern is refused before launch."""
    args = cli.build_parser().parse_args(
        ["/data", "--allow-target", "/srv/lance/*", "--allow-target", "https://lance.example/*"]
    )
    assert args.allow_target == ["/srv/lance/*", "https://lance.example/*"]
    env = launch.targets_env(args.allow_target, "0.0.0.0")
    assert launch.launch_allow_targets(env) == ("/srv/lance/*", "https://lance.example/*")
    assert launch.launch_host(env) == "0.0.0.0"
    # none given: no allowlist, and nothing inherited from the launcher's environment
    assert launch.launch_allow_targets(launch.targets_env([], "127.0.0.1")) == ()
    # a value the console cannot read allows nothing (a pattern that matches no target)
    assert launch.launch_allow_targets({launch.ALLOW_TARGETS_ENV: "not json"}) == ("",)
    with pytest.raises(SystemExit) as exited:
        cli.main(["/tmp", "--allow-target", " "])
    assert exited.value.code == 2
    assert "non-empty pattern" in capsys.readouterr().err


def test_ray_address_reaches_the_console_and_a_bad_one_stops_the_launcher(
    capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--ray-address`` travels in the console's environment, where the Ray executor reads it
    as its default cluster; without it nothing is inherited; a web address (the dashboard) is
    refused before launch."""
    from backend.services import ray_executor

    args = cli.build_parser().parse_args(["/data", "--ray-address", " head:6379 "])
    _, env = cli.build_command("/data", 8600, no_browser=True, ray_address=args.ray_address)
    assert launch.launch_ray_address(env) == ray_executor.default_address(env) == "head:6379"
    monkeypatch.setenv(launch.RAY_ADDRESS_ENV, "old-head:6379")
    _, env = cli.build_command("/data", 8600, no_browser=True)
    assert launch.launch_ray_address(env) is None
    with pytest.raises(SystemExit) as exited:
        cli.main(["/tmp", "--ray-address", "http://head:8265"])
    assert exited.value.code == 2
    assert "web address" in capsys.readouterr().err


# -- storage options and secrets ---------------------------------------------------------------
def test_storage_options_keep_secrets_out_of_argv_and_output() -> None:
    items = [
        "endpoint=http://127.0.0.1:9000",
        "region=env:MY_REGION",
        "allow_http=true",
        "aws_access_key_id=env:MY_KEY_ID",
        f"aws_secret_access_key={SECRET}",
    ]
    env = {"MY_REGION": "us-east-1", "MY_KEY_ID": "AKIA-id"}
    storage = launcher_options.parse_storage(items, env)
    assert storage.public == {
        "endpoint": "http://127.0.0.1:9000",
        "region": "us-east-1",
        "allow_http": "true",
    }
    assert storage.secret_env["aws_access_key_id"] == "MY_KEY_ID"
    var = storage.secret_env["aws_secret_access_key"]
    assert storage.child_env == {var: SECRET}
    (warning,) = storage.warnings  # only the secret typed on the command line
    assert "aws_secret_access_key=env:NAME" in warning and SECRET not in warning
    shown = storage.shown()
    assert f"aws_secret_access_key={REDACTED}" in shown and "AKIA" not in shown
    assert "endpoint=http://127.0.0.1:9000" in shown

    argv, child = cli.build_command(
        "s3://bucket/root", 8600, no_browser=True, storage=storage, api_key_env="MY_API"
    )
    assert not any(SECRET in a or "s3://bucket" in a for a in argv)
    assert json.loads(child[launch.STORAGE_ENV]) == storage.public
    assert json.loads(child[launch.STORAGE_SECRETS_ENV]) == storage.secret_env
    assert child[var] == SECRET and child[launch.API_KEY_ENV_NAME] == "MY_API"
    assert launch.launch_storage(child) == (storage.public, storage.secret_env)


@pytest.mark.parametrize(
    ("item", "problem"),
    [
        ("endpoint", "KEY=VALUE"),
        ("=x", "KEY=VALUE"),
        ("aws_secret_access_key=env:UNSET_VAR_FOR_TEST", "UNSET_VAR_FOR_TEST is not set"),
    ],
)
def test_bad_storage_options_are_refused(item: str, problem: str, capsys) -> None:
    with pytest.raises(ValueError, match=problem):
        launcher_options.parse_storage([item], {})
    assert cli.main(["/tmp", "--storage", item]) == 2
    assert problem in capsys.readouterr().err


S3_CHECK_CASES = {
    "http endpoint without allow_http": [
        "aws_endpoint=http://127.0.0.1:9",
        "aws_region=us-east-1",
        "aws_access_key_id=env:LAUNCH_KEY_ID",
        "aws_secret_access_key=env:LAUNCH_SECRET",
    ],
    "access key id without the secret": [
        "aws_region=us-east-1",
        "aws_access_key_id=env:LAUNCH_KEY_ID",
    ],
    "secret without the access key id": [
        "aws_region=us-east-1",
        "aws_secret_access_key=env:LAUNCH_SECRET",
    ],
}


@pytest.mark.slow
@pytest.mark.parametrize("items", S3_CHECK_CASES.values(), ids=S3_CHECK_CASES)
def test_s3_options_the_page_refuses_are_refused_at_launch(
    tmp_path: Path, items: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The launcher refuses what the console's page refuses, with the page's message: it
    exits with 2 before starting streamlit (it returns instead of serving) and creates
    nothing (its working directory and home stay empty)."""
    from lance_namespace.errors import InvalidInputError

    user_env = {"LAUNCH_KEY_ID": "AKIA-launch-id", "LAUNCH_SECRET": SECRET}
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "ALLOW_HTTP"))}
    for name in set(os.environ) - set(clean):
        monkeypatch.delenv(name)
    # what the page says when it connects with these options (resolved as the console does)
    values = launcher_options.parse_storage(items, user_env).values
    with pytest.raises(InvalidInputError) as refused:
        backend.connect("s3://bucket/root", storage_options=values)
    expected = str(refused.value)
    assert expected.startswith("Cannot open s3://bucket/root: ")

    home = tmp_path / "home"
    home.mkdir()
    args = [a for item in items for a in ("--storage", item)]
    child_env = {k: v for k, v in clean.items() if not k.startswith("LANCE_CONSOLE_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "backend.launcher.cli", "s3://bucket/root", *args]
        + ["--port", str(free_port()), "--no-browser"],
        cwd=home,
        env={**child_env, **user_env, "HOME": str(home), "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=START_TIMEOUT)
    except subprocess.TimeoutExpired:  # it started serving: stop it and what it started
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"the launcher started the console: {out}{err}")
    assert proc.returncode == 2, out + err
    assert err.strip() == f"lance-console: {expected}"
    assert "opening" not in out and SECRET not in out + err
    assert list(home.iterdir()) == []  # no demo, no config, nothing


def test_storage_options_are_refused_for_a_rest_target(capsys) -> None:
    assert cli.main(["http://127.0.0.1:9/api", "--storage", "region=us-east-1"]) == 2
    assert "--storage is for folders and object stores" in capsys.readouterr().err


def test_launcher_errors_never_show_a_storage_secret() -> None:
    from backend.redaction import redact_text

    launcher_options.parse_storage([f"aws_secret_access_key={SECRET}"], {})
    assert SECRET not in redact_text(f"could not open the bucket with {SECRET}")


def test_default_connection_gets_the_launch_options(monkeypatch: pytest.MonkeyPatch) -> None:
    from backend.config import saved_connections as conns

    monkeypatch.setenv(launch.TARGET_ENV, "http://127.0.0.1:9/api")
    monkeypatch.setenv(launch.API_KEY_ENV, SECRET)
    monkeypatch.setenv(launch.STORAGE_ENV, json.dumps({"region": "eu-west-1"}))
    monkeypatch.setenv(launch.STORAGE_SECRETS_ENV, json.dumps({"aws_secret_access_key": "S"}))
    monkeypatch.setenv("S", SECRET)
    spec = conns.default_connection()
    assert spec.api_key_env == launch.API_KEY_ENV
    secrets, problems = conns.resolve_secrets(spec)
    assert secrets.api_key == SECRET and not problems
    assert conns.connect_options(spec, secrets)["api_key"] == SECRET
    assert SECRET not in json.dumps(spec.describe())
    monkeypatch.setenv(launch.TARGET_ENV, "s3://bucket/root")
    spec = conns.default_connection()
    assert spec.api_key_env is None  # an API key is for REST servers
    secrets, _ = conns.resolve_secrets(spec)
    assert conns.connect_options(spec, secrets)["storage_options"] == {
        "region": "eu-west-1",
        "aws_secret_access_key": SECRET,
    }


def test_the_demo_is_built_through_the_write_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without TARGET the launcher builds (or finds) the demo before the console starts, as
    the OS user through the write gate: the audit log records it like any long write (a
    ``started`` entry, then its outcome), naming the demo folder."""
    from backend import audit
    from backend.gate import Actor
    from tests.support import demo_copy

    monkeypatch.setenv("LANCE_CONSOLE_AUDIT_DIR", str(tmp_path / "audit"))
    root = demo_copy(tmp_path / "demo")
    assert cli.resolve_target(None, str(root), echo=lambda _m: None) == str(root)
    started, done = audit.AuditLog(tmp_path / "audit").entries()
    assert (started.operation, started.outcome) == (cli.DEMO_OPERATION, audit.STARTED)
    assert (done.operation, done.outcome, done.op_id) == (
        cli.DEMO_OPERATION,
        audit.OK,
        started.op_id,
    )
    assert done.user == Actor.os_user().user and done.source == "launcher"
    assert (done.target, done.connection, done.role) == (str(root), "demo", "admin")


def test_help_documents_storage_options_and_exposure(capsys) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    text = capsys.readouterr().out
    for expected in (
        "--storage KEY=VALUE",
        "endpoint=http://127.0.0.1:9000",
        "region=",
        "allow_http=true",
        "aws_secret_access_key=env:",
        "LANCE_CONSOLE_API_KEY",
        "--host ADDRESS",
        "--allow-anonymous-writes",
        "--rebuild-demo",
    ):
        assert expected in text, expected


# -- sign-in and roles fail closed: the real CLI refuses to start -------------------------------
AUTH_TOML = {
    "redirect_uri": "http://127.0.0.1:8501/oauth2callback",
    "cookie_secret": "launcher-cookie-secret-0123456789abcdef",
    "client_id": "lance-console",
    "client_secret": SECRET,
    "server_metadata_url": "https://id.example.com/.well-known/openid-configuration",
}


def auth_toml(section: dict[str, str], **named: dict[str, str]) -> str:
    text = "[auth]\n" + "".join(f'{k} = "{v}"\n' for k, v in section.items())
    for name, table in named.items():
        text += f"[auth.{name}]\n" + "".join(f'{k} = "{v}"\n' for k, v in table.items())
    return text


def run_cli(tmp_path: Path, *args: str, env: dict[str, str] | None = None):
    """The launcher run as a user would, in ``tmp_path`` (also its home), to its end."""
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("LANCE_CONSOLE_")} | {
        "HOME": str(tmp_path),
        "PYTHONPATH": str(REPO),
        **(env or {}),
    }
    return subprocess.run(
        [sys.executable, "-m", "backend.launcher.cli", *args, "--port", str(free_port()),
         "--no-browser"],
        cwd=tmp_path, env=child_env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def run_cli_here(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    cwd: Path,
    *args: str,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """:func:`run_cli` for a launch that stops before starting anything: ``cli.main`` in this
    process, in ``cwd`` (also its home) with the same environment, its exit code and output."""
    for name in [k for k in os.environ if k.startswith("LANCE_CONSOLE_")]:
        monkeypatch.delenv(name)
    for name, value in {"HOME": str(cwd), **(env or {})}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(cwd)
    capsys.readouterr()
    code = cli.main([*args, "--port", str(free_port()), "--no-browser"])
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["lance-console", *args], code, out, err)


def assert_stopped_for_sign_in(
    done: subprocess.CompletedProcess[str], named: str, secrets: Path, cwd: Path
) -> None:
    """The launch stopped (exit 2) naming the sign-in problem ``named`` and the ``secrets``
    file, without its secret, having started and built nothing in ``cwd``."""
    assert done.returncode == 2, done.stderr
    assert named in done.stderr and "sign-in: invalid" in done.stderr
    assert str(secrets) in done.stderr and "nothing was started" in done.stderr
    assert SECRET not in done.stderr + done.stdout
    assert not (cwd / ".lance-console").exists()  # no demo built: nothing started


def _without(key: str) -> dict[str, str]:
    return {k: v for k, v in AUTH_TOML.items() if k != key}


@pytest.mark.parametrize(
    ("where", "toml", "named"),
    [
        (".streamlit", auth_toml(_without("redirect_uri")), "[auth] is missing redirect_uri"),
        (".streamlit", auth_toml(_without("cookie_secret")), "[auth] is missing cookie_secret"),
        (".streamlit", auth_toml(_without("client_id")), "[auth] is missing client_id"),
        (".streamlit", auth_toml(_without("client_secret")), "[auth] is missing client_secret"),
        (
            ".streamlit",
            auth_toml(_without("server_metadata_url")),
            "[auth] is missing server_metadata_url",
        ),
        (
            ".streamlit",
            auth_toml({**AUTH_TOML, "cookie_secret": "short"}),
            "cookie_secret is shorter than 32 characters",
        ),
        (
            ".streamlit",
            auth_toml({**AUTH_TOML, "redirect_uri": "console.example.com/oauth2callback"}),
            "redirect_uri is not an http(s) URL",
        ),
        (
            ".streamlit",
            auth_toml(AUTH_TOML, corp={"client_id": "x", "server_metadata_url": "https://a/b"}),
            "[auth.corp] is missing client_secret",
        ),
        # ~/.streamlit/secrets.toml counts as well (Streamlit reads it too)
        ("home", auth_toml(_without("client_secret")), "[auth] is missing client_secret"),
        (".streamlit", "[auth\nclient_id = ", "could not be read as TOML"),
    ],
)
def test_an_incomplete_auth_section_stops_the_launcher(
    tmp_path: Path,
    where: str,
    toml: str,
    named: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each case through ``cli.main`` in this process (the checks are the launcher's own code);
    :func:`test_an_incomplete_auth_section_stops_the_launcher_process` runs one as a user
    would, in a process of its own."""
    folder = tmp_path / ".streamlit"  # HOME is tmp_path too: ~/.streamlit is the same folder
    cwd = tmp_path if where == "home" else tmp_path / "work"
    cwd.mkdir(exist_ok=True)
    folder.mkdir()
    (folder / "secrets.toml").write_text(toml)
    done = run_cli_here(monkeypatch, capsys, cwd, env={"HOME": str(tmp_path)})
    assert_stopped_for_sign_in(done, named, folder / "secrets.toml", cwd)


@pytest.mark.slow
def test_an_incomplete_auth_section_stops_the_launcher_process(tmp_path: Path) -> None:
    folder = tmp_path / ".streamlit"
    cwd = tmp_path / "work"
    cwd.mkdir()
    folder.mkdir()
    (folder / "secrets.toml").write_text(auth_toml(_without("client_secret")))
    named = "[auth] is missing client_secret"
    done = run_cli(cwd, env={"HOME": str(tmp_path)})
    assert_stopped_for_sign_in(done, named, folder / "secrets.toml", cwd)


@pytest.mark.slow
def test_unknown_role_names_stop_the_launcher(tmp_path: Path) -> None:
    roles = tmp_path / "roles.toml"
    roles.write_text(
        'default = "viewer"\n[users]\n"ada@example.com" = "Admin"\n"ok@example.com" = "editor"\n'
    )
    done = run_cli(tmp_path, env={"LANCE_CONSOLE_ROLES": str(roles)})
    assert done.returncode == 2
    assert f"roles file {roles}: [users] 'ada@example.com' has role 'Admin'" in done.stderr
    assert "ok@example.com" not in done.stderr and "nothing was started" in done.stderr
    assert not (tmp_path / ".lance-console").exists()


# -- the real launcher -------------------------------------------------------------------------
@dataclass
class Launched:
    proc: subprocess.Popen
    port: int
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def console_pid(self) -> int:
        """The streamlit process the launcher started."""
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text()
        (pid,) = children.split()
        return int(pid)


@contextmanager
def launcher(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Launched]:
    """``python -m backend.launcher.cli ARGS --port <free> --no-browser`` in ``tmp_path`` (also its
    home: no secrets file of the machine's user counts), until healthy; stopped by its pid."""
    port = free_port()
    log = tmp_path / f"launcher-{port}.log"
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("LANCE_CONSOLE_")} | {
        "HOME": str(tmp_path),
        "PYTHONPATH": str(REPO),
        **(env or {}),
    }
    with log.open("w") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "backend.launcher.cli",
                *args,
                "--port",
                str(port),
                "--no-browser",
            ],
            cwd=tmp_path,
            env=child_env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    launched = Launched(proc, port, log)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            assert proc.poll() is None, f"the launcher exited: {launched.output()}"
            try:
                url = f"http://127.0.0.1:{port}/_stcore/health"
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, f"no health answer: {launched.output()}"
            time.sleep(0.3)
        yield launched
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)  # the launcher forwards it to streamlit
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def listening(port: int) -> set[str]:
    """The local addresses with a listening TCP socket on ``port`` (from /proc/net)."""
    found = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            address, hex_port = fields[1].split(":")
            if fields[3] == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                raw = bytes.fromhex(address)
                # /proc/net prints each 32-bit word in host (little-endian) order
                words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
                found.add(
                    socket.inet_ntop(socket.AF_INET if table == "tcp" else socket.AF_INET6, words)
                )
    return found


def user_table(ns, table_id: list[str]) -> pa.Table:
    data = pa.table({"id": [1, 2, 3], "note": ["my", "own", "rows"]})
    ns.create_table(CreateTableRequest(id=table_id), ipc_stream_bytes(data))
    return data


@pytest.mark.slow
def test_restart_keeps_the_users_tables_and_listens_on_loopback(tmp_path: Path) -> None:
    demo_dir = tmp_path / "demo"
    with launcher(tmp_path, "--demo-dir", str(demo_dir)) as first:
        assert listening(first.port) == {"127.0.0.1"}  # the default: this machine only
        assert "[demo] tables: stdlib › modules" in first.output()
        # the user, meanwhile: drops one demo table, renames another, imports their own
        ns = backend.connect(str(demo_dir))
        ns.drop_table(DropTableRequest(id=["stdlib", "modules"]))
        ns.rename_table(RenameTableRequest(id=["stdlib", "symbols"], new_table_name="kept"))
        ns.create_namespace(CreateNamespaceRequest(id=["mine"]))
        mine = user_table(ns, ["mine", "imported"])
        mine_in_demo_ns = user_table(ns, ["sandbox", "notes"])
    assert first.proc.returncode is not None

    with launcher(tmp_path, "--demo-dir", str(demo_dir)) as second:
        said = second.output()
        assert "demo already present" in said
        assert "stdlib › modules, stdlib › symbols" in said and "--rebuild-demo" in said
        ns = backend.connect(str(demo_dir))
        assert ns.open_dataset(["mine", "imported"]).to_table().equals(mine)
        assert ns.open_dataset(["sandbox", "notes"]).to_table().equals(mine_in_demo_ns)
        assert sorted(ns.list_tables(ListTablesRequest(id=["stdlib"])).tables) == [
            "kept",
            "passages",
        ]


@pytest.mark.slow
def test_exposed_launch_without_sign_in_is_read_only(tmp_path: Path) -> None:
    target = tmp_path / "data"
    target.mkdir()
    args = (
        str(target),
        "--host",
        "0.0.0.0",
        "--storage",
        "region=us-east-1",
        "--storage",
        "aws_secret_access_key=env:TEST_STORAGE_SECRET",
        "--allow-target",
        "/srv/lance/*",
        "--allow-target",
        "s3://bucket/team-*",
    )
    env = {"TEST_STORAGE_SECRET": SECRET, launch.ALLOW_TARGETS_ENV: '["/inherited/*"]'}
    with launcher(tmp_path, *args, env=env) as run:
        said = run.output()
        assert "The console is read-only: it listens on 0.0.0.0" in said
        home_and_cwd = tmp_path / ".streamlit" / "secrets.toml"  # HOME is tmp_path too
        assert f"sign-in: off (no [auth] section in {home_and_cwd} or " in said
        assert "[auth]" in said and "(read-only)" in said
        assert f"aws_secret_access_key={REDACTED}" in said and SECRET not in said
        assert listening(run.port) == {"0.0.0.0"}
        pid = run.console_pid()
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        assert b"0.0.0.0" in argv and not any(SECRET.encode() in a for a in argv)
        assert not any(str(target).encode() in a for a in argv)  # the target travels in env
        environ = dict(
            item.split(b"=", 1)
            for item in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            if b"=" in item
        )
        assert environ[launch.READ_ONLY_ENV.encode()] == b"1"
        assert b"no sign-in" in environ[launch.READ_ONLY_REASON_ENV.encode()]
        assert environ[launch.TARGET_ENV.encode()] == str(target).encode()
        console_env = {k.decode(): v.decode() for k, v in environ.items()}
        assert launch.launch_allow_targets(console_env) == ("/srv/lance/*", "s3://bucket/team-*")
        assert launch.launch_host(console_env) == "0.0.0.0"


@contextmanager
def recording_proxy() -> Iterator[tuple[str, list[str]]]:
    """An HTTP proxy on localhost that refuses everything: its URL, and each request line it
    got (``GET http://host/...``, ``CONNECT host:443``), i.e. every outbound call sent to it."""
    import socketserver
    import threading

    seen: list[str] = []

    class Refuse(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            seen.append(self.rfile.readline().decode(errors="replace").strip())
            self.wfile.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")

    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), Refuse) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}", seen
        finally:
            server.shutdown()
            thread.join()


def proxied_env(proxy: str) -> dict[str, str]:
    """Every outbound HTTP(S) call through ``proxy``; localhost directly."""
    names = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
    direct = "127.0.0.1,localhost"
    return dict.fromkeys(names, proxy) | {"NO_PROXY": direct, "no_proxy": direct}


def wait_for_output(run: Launched, text: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while text not in run.output():
        assert time.monotonic() < deadline, f"{text!r} never printed: {run.output()}"
        time.sleep(0.3)


def served_page(port: int, page: str) -> list:
    """What the console sends a browser that opens ``page`` (Streamlit's websocket protocol):
    its ``ForwardMsg`` messages up to ``script_finished``."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.sync.client import connect
    from websockets.typing import Subprotocol

    url = f"ws://127.0.0.1:{port}/_stcore/stream"
    with connect(url, subprotocols=[Subprotocol("streamlit")], open_timeout=START_TIMEOUT) as ws:
        back = BackMsg()
        back.rerun_script.page_name = page
        ws.send(back.SerializeToString())
        messages: list = []
        while not messages or messages[-1].WhichOneof("type") != "script_finished":
            msg = ForwardMsg()
            msg.ParseFromString(ws.recv(timeout=START_TIMEOUT))
            messages.append(msg)
        return messages


@pytest.mark.slow
def test_console_started_in_another_folder_serves_the_projects_settings(tmp_path: Path) -> None:
    """``lance-console DIR --host 0.0.0.0`` started in a folder with its own ``.streamlit/``
    (config.toml, secrets.toml): the page has the project's theme, the minimal toolbar and the
    upload limit it states, and nothing asks the internet for the machine's external address."""
    from streamlit.proto.NewSession_pb2 import Config, CustomThemeConfig

    folder = foreign_folder(tmp_path / "elsewhere")
    data = tmp_path / "data"
    data.mkdir()
    args = (str(data), "--host", "0.0.0.0")
    with (
        recording_proxy() as (proxy, outbound),
        launcher(folder, *args, env=proxied_env(proxy)) as run,
    ):
        messages = served_page(run.port, "transfer")
        wait_for_output(run, f"URL: http://localhost:{run.port}")  # start-up is over
        argv = Path(f"/proc/{run.console_pid()}/cmdline").read_bytes().split(b"\0")
    assert outbound == []  # no checkip.amazonaws.com, nor any other outbound call
    (session,) = [m.new_session for m in messages if m.WhichOneof("type") == "new_session"]
    assert session.config.toolbar_mode == Config.MINIMAL  # no "Deploy" button
    assert not session.config.gather_usage_stats
    theme, project = session.custom_theme, project_config()["theme"]
    assert theme.base == CustomThemeConfig.LIGHT
    assert (theme.primary_color, theme.background_color, theme.text_color) == (
        project["primaryColor"],
        project["backgroundColor"],
        project["textColor"],
    )
    assert theme.secondary_background_color == project["secondaryBackgroundColor"]
    assert theme.body_font == project["font"]
    elements = [m.delta.new_element for m in messages if m.WhichOneof("type") == "delta"]
    (uploader,) = [e.file_uploader for e in elements if e.WhichOneof("type") == "file_uploader"]
    assert uploader.max_upload_size_mb == (1 << 30) >> 20  # 1 GiB, the import cap
    texts = [
        e.markdown.body.replace("\\", "") for e in elements if e.WhichOneof("type") == "markdown"
    ]
    (limit,) = [t for t in texts if "Arrow IPC or JSON Lines, up to" in t]
    assert limit.endswith("up to 1.0 GiB.")  # not the 200 MB of the folder's config.toml
    shown = argv[argv.index(b"--client.showErrorDetails") + 1].decode()
    assert shown == project_config()["client"]["showErrorDetails"]


def readme_s3_example() -> tuple[str, list[str], dict[str, str]]:
    """The README's S3-compatible example: its target, ``--storage`` items and exports."""
    text = (REPO / "README.md").read_text()
    block = text[text.index("```sh\nexport S3_KEY_ID") :].split("```")[1]
    exports = dict(
        item.split("=", 1) for item in block.split("\n")[1].removeprefix("export ").split()
    )
    words = block.replace("\\\n", " ").split()
    target = next(w for w in words if w.startswith("s3://"))
    items = [words[i + 1] for i, w in enumerate(words) if w == "--storage"]
    return target, items, exports


def test_readme_s3_example_works_against_an_s3_compatible_server(
    s3_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The documented options (endpoint, region, allow_http, keys from the environment) as
    the launcher hands them to the console's default connection, against moto's S3."""
    from backend.config import saved_connections as conns

    target, items, exports = readme_s3_example()
    assert {i.split("=", 1)[0] for i in items} == {
        "endpoint",
        "region",
        "allow_http",
        "aws_access_key_id",
        "aws_secret_access_key",
    }
    # this machine's server: its endpoint, bucket and keys instead of the example's
    items = [f"endpoint={s3_server.endpoint}" if i.startswith("endpoint=") else i for i in items]
    bucket = s3_server.new_bucket()
    target = target.replace(target.split("/")[2], bucket)
    env = dict.fromkeys(exports) | {
        "S3_KEY_ID": s3_server.ACCESS_KEY,
        "S3_SECRET": s3_server.SECRET_KEY,
    }
    storage = launcher_options.parse_storage(items, env)
    assert not storage.warnings and s3_server.SECRET_KEY not in storage.shown()
    argv, child = cli.build_command(target, 8600, no_browser=True, storage=storage)
    assert not any(s3_server.SECRET_KEY in a for a in argv)
    for name in (launch.TARGET_ENV, launch.STORAGE_ENV, launch.STORAGE_SECRETS_ENV):
        monkeypatch.setenv(name, child[name])
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    spec = conns.default_connection()
    secrets, problems = conns.resolve_secrets(spec)
    assert not problems
    ns = backend.connect(spec.target, **conns.connect_options(spec, secrets))
    ns.create_namespace(CreateNamespaceRequest(id=["lake"]))
    user_table(ns, ["lake", "rows"])
    assert ns.list_tables(ListTablesRequest(id=["lake"])).tables == ["rows"]
    assert any(key.startswith("lance/") for key in s3_server.objects(bucket))


@pytest.mark.slow
def test_a_complete_auth_section_is_announced_with_its_provider(tmp_path: Path) -> None:
    """Sign-in on: exposed, the console is writable; the launcher names the provider's host
    and the file, never a secret."""
    target = tmp_path / "data"
    target.mkdir()
    secrets = tmp_path / ".streamlit" / "secrets.toml"
    secrets.parent.mkdir()
    secrets.write_text(auth_toml(AUTH_TOML))
    with launcher(tmp_path, str(target), "--host", "0.0.0.0") as run:
        said = run.output()
        assert f"sign-in: on (provider id.example.com, from {secrets})" in said
        assert "(read-only)" not in said and SECRET not in said
        assert AUTH_TOML["cookie_secret"] not in said
