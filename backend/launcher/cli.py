"""``lance-console [TARGET] [options]``: start the console (``lance-console --help``).

Without TARGET the demo namespace is built (once) in ``./.lance-console/demo`` (or
``--demo-dir``) and opened as it is on every later start: nothing in that folder is ever
deleted, demo tables dropped or renamed since are reported and built again only with
``--rebuild-demo``. A non-empty folder that is not a demo is left alone. The launcher builds it
before the console starts, as the OS user through the write gate (recorded in the audit log as
``build_demo``); the console never builds it. TARGET may be a
directory, any URI the local backend accepts, or an ``http(s)://`` URL of a Lance REST
namespace (passed through as is). An object-store TARGET whose storage options (with the
environment lance reads) certainly cannot open it (an ``http://`` endpoint without
``allow_http``, half a key pair, ...) is refused before anything is started or created, with the
message the console's page gives (``backend.local.target.check_object_store``).

The console listens on ``127.0.0.1`` unless ``--host`` says otherwise; exposed on another
address without sign-in configured (:func:`backend.config.launch.sign_in_configured`) it starts
read-only, unless ``--allow-anonymous-writes``. ``--read-only`` (or
``LANCE_CONSOLE_READ_ONLY``) makes it read-only for the life of the server.

The console itself is ``python -m streamlit run app/main.py``; everything it needs (target,
storage options, read-only, secrets) reaches it through its environment
(:mod:`backend.config.launch`), never its command line. Its Streamlit settings (the project's
``.streamlit/config.toml`` and the ones that always hold) are its command-line flags, so they
hold whatever the working directory (:mod:`backend.launcher.streamlit_settings`). Its exit code
is ours, and Ctrl-C stops it cleanly.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
import webbrowser
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.config import launch
from backend.config.launch import READ_ONLY_ENV, TARGET_ENV
from backend.launcher import maintain
from backend.launcher.options import (
    StorageOptions,
    add_access_options,
    parse_storage,
    storage_problem,
)
from backend.launcher.streamlit_settings import ANY_ADDRESS, as_flags, streamlit_settings
from backend.redaction import display_target
from backend.rules import ids

DEFAULT_PORT = 8501
DEFAULT_HOST = launch.LOOPBACK
DEFAULT_DEMO_DIR = Path(".lance-console") / "demo"
# Variables of the console process that only the launcher sets (never inherited as they are).
_LAUNCH_VARS = (
    launch.READ_ONLY_ENV,
    launch.READ_ONLY_REASON_ENV,
    launch.ANONYMOUS_WRITES_ENV,
    launch.STORAGE_ENV,
    launch.STORAGE_SECRETS_ENV,
    launch.API_KEY_ENV_NAME,
    launch.RAY_ADDRESS_ENV,
)

EPILOG = """\
storage options:
  --storage KEY=VALUE (repeatable) passes an option to the object store of a local or
  object-store TARGET (s3://, gs://, az://, file://), as Lance's storage_options.
  KEY=env:NAME takes the value from the environment variable NAME: use it for secrets
  (aws_secret_access_key, ...), which then never appear on a command line. Secret values
  are masked in everything the launcher and the console print.

  An S3-compatible store (MinIO, Ceph, a local test server) over plain HTTP:

    export S3_KEY_ID=minio S3_SECRET=minio-secret
    lance-console s3://my-bucket/lance \\
      --storage endpoint=http://127.0.0.1:9000 \\
      --storage region=us-east-1 \\
      --storage allow_http=true \\
      --storage aws_access_key_id=env:S3_KEY_ID \\
      --storage aws_secret_access_key=env:S3_SECRET

REST servers:
  The API key of an http(s):// TARGET comes from the environment: LANCE_CONSOLE_API_KEY,
  or the variable named by --api-key-env.

exposure:
  The console listens on 127.0.0.1 (this machine only). --host 0.0.0.0 (or another
  address) exposes it; without sign-in configured (an [auth] section in
  .streamlit/secrets.toml) it then starts read-only. --allow-anonymous-writes lets anyone
  who reaches it write, with a warning on every page.

targets:
  TARGET and the saved connections are what users pick from. A folder, bucket or URL
  typed in the "Connect to..." dialog is an admin's right, recorded in the audit log, and
  off on an exposed console without sign-in. --allow-target PATTERN (repeatable; fnmatch,
  '*' crosses '/') limits it to matching targets: a folder's real path, s3://bucket/prefix,
  or an http(s):// URL, e.g. --allow-target '/srv/lance/*' --allow-target
  'https://lance.example.com/*'. Link-local and cloud-metadata addresses are refused unless
  a pattern names that host in full.

maintenance:
  lance-console maintain TARGET [--dry-run] [--namespace NS] applies the namespaces'
  maintenance policies once and exits (for cron or a Kubernetes CronJob); see
  lance-console maintain --help. (A folder named "maintain" is ./maintain.)

sign-in:
  The launcher prints whether sign-in is on (with the provider's host) or off, and why. An
  [auth] section that is incomplete (a key missing, a short cookie_secret, a redirect_uri
  that is not http(s)) or a roles file with unknown roles stops it with exit code 2.
"""


def repo_dir() -> Path:
    import backend

    return Path(backend.__file__).resolve().parent.parent


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lance-console",
        description="Browser admin console for Lance namespaces (local directory or REST).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "target",
        nargs="?",
        help="directory, file:// / memory:// / s3:// URI, or http(s):// URL of a REST "
        "namespace; default: the demo namespace",
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="HTTP port (default 8501)")
    parser.add_argument(
        "--host",
        default=DEFAULT_HOST,
        metavar="ADDRESS",
        help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: every "
        "interface)",
    )
    parser.add_argument(
        "--demo-dir",
        default=None,
        help=f"where to build the demo when no TARGET is given (default ./{DEFAULT_DEMO_DIR})",
    )
    parser.add_argument(
        "--rebuild-demo",
        action="store_true",
        help="build the demo tables that are missing (dropped or renamed) again; nothing else "
        "in the folder is touched",
    )
    parser.add_argument(
        "--read-only",
        action="store_true",
        help="every write refused for the life of the server",
    )
    parser.add_argument(
        "--allow-anonymous-writes",
        action="store_true",
        help="exposed (--host) without sign-in: accept writes anyway (every page warns)",
    )
    parser.add_argument(
        "--allow-target",
        action="append",
        default=[],
        metavar="PATTERN",
        type=_allow_pattern,
        help="a target the Connect dialog may open (repeatable; fnmatch pattern on a folder's "
        "real path, s3://bucket/prefix or an http(s) URL); without one, any (admins only)",
    )
    add_access_options(parser)
    parser.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDRESS",
        type=_ray_address,
        help="the Ray cluster maintenance jobs run on with the Ray executor (host:6379, "
        "ray://host:10001 or auto; needs the [ray] extra); default: a local Ray when asked",
    )
    parser.add_argument(
        "--no-browser", action="store_true", help="do not open a browser window (headless)"
    )
    return parser


def _ray_address(text: str) -> str:
    from backend.services.ray_executor import address_problem

    problem = address_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text.strip()


def _allow_pattern(text: str) -> str:
    from backend.config.targets import pattern_problem

    problem = pattern_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


DEMO_OPERATION = "build_demo"  # the demo's build (or its check) in the audit log


def demo_gate(directory: Path) -> Any:
    """The write gate the demo is built through: the OS user who launches (an admin), the
    demo folder as target and connection, the audit log of every write; not read-only (a
    read-only launch makes the console read-only, after the launcher built its demo)."""
    import dataclasses

    from backend import audit
    from backend.gate import Actor, gate

    actor = dataclasses.replace(Actor.os_user(), source="launcher")
    name = audit.target_name(str(directory))
    return gate(None, actor=actor, connection=name, target=str(directory), log=audit.AuditLog())


def resolve_target(
    target: str | None, demo_dir: str | None, *, echo=print, rebuild_demo: bool = False
) -> str:
    """The target to open; builds the demo when there is none (never deletes anything),
    through the write gate (:func:`demo_gate`: checked and recorded in the audit log), once,
    before the console starts: the console itself never builds it."""
    if target:
        from backend import is_rest_target

        if is_rest_target(target) or "://" in target:
            return target
        return str(Path(target).expanduser().resolve())
    from backend.demo.data import create_demo_namespace, is_foreign_directory

    directory = Path(demo_dir).expanduser() if demo_dir else DEFAULT_DEMO_DIR
    directory = directory.resolve()
    if is_foreign_directory(directory):
        raise SystemExit(
            f"lance-console: {directory} holds files but no demo namespace, so the demo is not "
            "built there. Open it as a namespace with `lance-console "
            f"{directory}`, or build the demo elsewhere with `lance-console --demo-dir "
            "<empty or new folder>`."
        )

    def say(message: str) -> None:
        echo(f"[demo] {message}")

    with demo_gate(directory).record(DEMO_OPERATION, {"path": str(directory)}, long=True):
        summary = create_demo_namespace(directory, rebuild_missing=rebuild_demo, progress=say)
    if summary.created:
        tables = ", ".join(ids.display_id(t) for t in summary.tables)
        echo(f"[demo] tables: {tables}")
    if summary.missing:
        names = ", ".join(ids.display_id(t) for t in summary.missing)
        echo(
            f"[demo] demo tables not in the catalog (dropped or renamed): {names}. The folder "
            "is opened as it is; `lance-console --rebuild-demo` builds them again (nothing "
            "else is touched)."
        )
    return str(directory)


# -- the launch policy --------------------------------------------------------------------------
@dataclass(frozen=True)
class Mode:
    """How the console starts: read-only (and why), anonymous writes allowed (on which
    address), and what the launcher says about it."""

    read_only_reason: str | None
    anonymous_writes: str | None
    messages: tuple[str, ...] = ()


def launch_mode(
    host: str,
    *,
    read_only: bool = False,
    allow_anonymous_writes: bool = False,
    signed_in: bool | None = None,
    env: Mapping[str, str] | None = None,
) -> Mode:
    """The rule: loopback is writable; another address needs sign-in (``signed_in``: default
    :func:`launch.sign_in_configured`) or ``--allow-anonymous-writes``; ``--read-only`` or
    ``LANCE_CONSOLE_READ_ONLY`` always wins."""
    env = os.environ if env is None else env
    inherited = launch.launch_read_only({READ_ONLY_ENV: env.get(READ_ONLY_ENV, "")})
    if read_only or inherited:
        why = "started with --read-only" if read_only else f"{READ_ONLY_ENV} is set"
        return Mode(why, None)
    if launch.is_loopback(host):
        return Mode(None, None)
    if signed_in is None:
        signed_in = launch.sign_in_configured()
    if signed_in:
        return Mode(None, None)
    if allow_anonymous_writes:
        return Mode(
            None,
            host,
            (
                f"WARNING: the console listens on {host} without sign-in and accepts writes "
                "from anyone who can reach it (--allow-anonymous-writes).",
            ),
        )
    why = f"it listens on {host} and no sign-in is configured"
    return Mode(
        why,
        None,
        (
            f"The console is read-only: {why}. To allow writes, configure sign-in (an [auth] "
            "section in .streamlit/secrets.toml, see Streamlit's st.login), or listen on "
            "127.0.0.1 (the default), or pass --allow-anonymous-writes.",
        ),
    )


def build_command(
    target: str,
    port: int,
    *,
    no_browser: bool,
    read_only: bool = False,
    host: str = DEFAULT_HOST,
    mode: Mode | None = None,
    storage: StorageOptions | None = None,
    api_key_env: str | None = None,
    settings: Mapping[str, Any] | None = None,
    ray_address: str | None = None,
) -> tuple[list[str], dict[str, str]]:
    """``(argv, env)`` of the streamlit process. ``argv`` holds no target and no secret; it
    sets every Streamlit setting the console needs (``settings``, by default
    :func:`~backend.launcher.streamlit_settings.streamlit_settings` for ``host``)."""
    app = repo_dir() / "app" / "main.py"
    argv = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(app),
        "--server.address",
        host,
        "--server.port",
        str(port),
        # The project's .streamlit/config.toml and the settings that always hold (headless:
        # the browser is opened by us instead, see main), wherever the launcher is started.
        *as_flags(streamlit_settings(host) if settings is None else settings),
    ]
    if mode is None:
        mode = Mode("started with --read-only" if read_only else None, None)
    storage = storage or StorageOptions()
    env = {k: v for k, v in os.environ.items() if k not in _LAUNCH_VARS}
    env[TARGET_ENV] = target
    if mode.read_only_reason:
        env[READ_ONLY_ENV] = "1"
        env[launch.READ_ONLY_REASON_ENV] = mode.read_only_reason
    if mode.anonymous_writes:
        env[launch.ANONYMOUS_WRITES_ENV] = mode.anonymous_writes
    if storage.public:
        env[launch.STORAGE_ENV] = json.dumps(storage.public)
    if storage.secret_env:
        env[launch.STORAGE_SECRETS_ENV] = json.dumps(storage.secret_env)
    env.update(storage.child_env)
    if api_key_env:
        env[launch.API_KEY_ENV_NAME] = api_key_env
    if ray_address:
        env[launch.RAY_ADDRESS_ENV] = ray_address
    root = str(repo_dir())
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return argv, env


def browser_url(host: str, port: int) -> str:
    """Where this machine reaches the console (an any-address bind: via localhost)."""
    name = "localhost" if host in ANY_ADDRESS else host
    name = f"[{name}]" if ":" in name else name
    return f"http://{name}:{port}"


# -- sign-in and roles --------------------------------------------------------------------------
def access_settings() -> tuple[launch.AuthSettings, str | None]:
    """The sign-in settings of the secrets files the console will read, and why the console
    must not start (``None``: it may): an ``[auth]`` section present but incomplete or invalid
    (sign-in would be off without a word, every visitor an admin), or a roles file with bad
    entries (an unknown role such as ``"Admin"``)."""
    from lance_namespace.errors import LanceNamespaceError

    from backend import access

    settings = launch.auth_settings(launch.secrets_files(script_dir=repo_dir() / "app"))
    if settings.invalid:
        return settings, (
            f"{settings.summary()}. Complete it (see Sign-in in the README) or remove the "
            "[auth] section to run without sign-in; nothing was started"
        )
    try:
        access.RoleMap.load()
    except LanceNamespaceError as exc:
        return settings, f"{exc}; nothing was started"
    return settings, None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["maintain"]:  # ``lance-console maintain TARGET``: a folder named so: ./maintain
        return maintain.main(argv[1:])
    args = build_parser().parse_args(argv)
    if not 0 < args.port < 65536:
        print(f"lance-console: invalid port {args.port}", file=sys.stderr)
        return 2
    try:
        storage = parse_storage(args.storage)
    except ValueError as exc:
        print(f"lance-console: {exc}", file=sys.stderr)
        return 2
    if storage.public or storage.secret_env:
        from backend import is_rest_target

        if args.target and is_rest_target(args.target):
            print(
                "lance-console: --storage is for folders and object stores (s3://, gs://, "
                "az://); a REST server keeps its own storage settings",
                file=sys.stderr,
            )
            return 2
    problem = storage_problem(args.target, storage)
    if problem:  # refused before anything is started or created, as the page would refuse it
        print(f"lance-console: {problem}", file=sys.stderr)
        return 2
    if args.api_key_env and not os.environ.get(args.api_key_env):
        print(f"lance-console: --api-key-env: {args.api_key_env} is not set", file=sys.stderr)
        return 2
    try:  # before anything is created: the console does not start without its settings
        settings = streamlit_settings(args.host)
    except Exception as exc:
        print(f"lance-console: the console's Streamlit settings: {exc}", file=sys.stderr)
        return 2
    sign_in, refused = access_settings()
    if refused:
        print(f"lance-console: {refused}", file=sys.stderr)
        return 2
    try:
        target = resolve_target(args.target, args.demo_dir, rebuild_demo=args.rebuild_demo)
    except KeyboardInterrupt:
        return 130
    except SystemExit as exc:  # a refusal with advice
        print(str(exc), file=sys.stderr)
        return 2
    except Exception as exc:  # show a one-line reason instead of a traceback
        from backend.redaction import redact_text

        print(f"lance-console: {redact_text(str(exc))}", file=sys.stderr)
        return 1
    mode = launch_mode(
        args.host,
        read_only=args.read_only,
        allow_anonymous_writes=args.allow_anonymous_writes,
        signed_in=sign_in.enabled,
    )
    command, env = build_command(
        target,
        args.port,
        no_browser=args.no_browser,
        host=args.host,
        mode=mode,
        storage=storage,
        api_key_env=args.api_key_env,
        settings=settings,
        ray_address=args.ray_address,
    )
    env.update(launch.targets_env(args.allow_target, args.host))
    for message in (*storage.warnings, *mode.messages):
        print(f"lance-console: {message}", file=sys.stderr)
    url = browser_url(args.host, args.port)
    state = " (read-only)" if mode.read_only_reason else ""
    print(f"lance-console: opening {display_target(target)}{state} on {url}", flush=True)
    print(f"lance-console: {sign_in.summary()}", flush=True)
    if storage.public or storage.secret_env:
        print(f"lance-console: storage options {storage.shown()}", flush=True)
    if args.ray_address:
        print(f"lance-console: Ray executor: jobs run on Ray join {args.ray_address}", flush=True)

    def start() -> subprocess.Popen:
        proc = subprocess.Popen(command, env=env)
        if not args.no_browser:
            _open_browser_when_ready(url, proc)
        return proc

    return _supervise(start)


def _open_browser_when_ready(url: str, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    """Open ``url`` in the user's browser once streamlit answers its health check."""

    def wait_and_open() -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                    if resp.status == 200:
                        webbrowser.open(url)
                        return
            except OSError:
                pass
            time.sleep(0.3)

    threading.Thread(target=wait_and_open, name="open-browser", daemon=True).start()


def _supervise(start: Callable[[], subprocess.Popen]) -> int:
    """Start streamlit (``start``), wait for it and return its exit code; SIGTERM is forwarded
    to it, also one that arrives while it is being started (passed on once it exists).

    Ctrl-C in a terminal reaches both processes; if only this one got it, it is passed on
    (one that arrives while streamlit is being started, once it exists).
    Streamlit gets a few seconds to stop, then SIGTERM, then SIGKILL; the exit code is
    streamlit's own when it stopped by itself, 130 otherwise.
    """
    started: list[subprocess.Popen] = []
    early: list[int] = []

    def forward(signum: int, _frame: Any) -> None:
        if started:
            started[0].send_signal(signum)
        else:
            early.append(signum)

    interrupted: list[int] = []

    def note_interrupt(signum: int, _frame: Any) -> None:
        interrupted.append(signum)

    previous = previous_int = None
    with contextlib.suppress(ValueError):  # not the main thread: leave the signals alone
        previous = signal.signal(signal.SIGTERM, forward)
        # a Ctrl-C while streamlit is being started is kept until it exists (an ignored
        # SIGINT stays ignored)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            previous_int = signal.signal(signal.SIGINT, note_interrupt)
    try:
        proc = start()
        started.append(proc)
        try:  # Ctrl-C raises again from here, and is handled below
            if previous_int is not None:
                signal.signal(signal.SIGINT, previous_int)
            for signum in early:
                proc.send_signal(signum)
            if interrupted:
                raise KeyboardInterrupt
            return _exit_code(proc.wait())
        except KeyboardInterrupt:
            pass
        for action, grace in ((None, 2), (signal.SIGINT, 8), (signal.SIGTERM, 5)):
            if action is not None and proc.poll() is None:
                proc.send_signal(action)
            try:
                code = proc.wait(timeout=grace)
                return code if code in (0, 130) else 130
            except (subprocess.TimeoutExpired, KeyboardInterrupt):
                continue
        proc.kill()
        proc.wait()
        return 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        if previous_int is not None:
            signal.signal(signal.SIGINT, previous_int)


def _exit_code(code: int) -> int:
    """A child killed by signal N (``-N``) exits like a shell reports it: 128 + N."""
    return 128 - code if code < 0 else code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
