"""``lance-console [TARGET] [--port N] [--demo-dir DIR] [--read-only] [--no-browser]``.

Without TARGET the demo namespace is built (once) in ``./.lance-console/demo`` (or
``--demo-dir``) and opened; a folder there that is neither empty nor a demo is left alone, and
the launcher says what to do instead. ``--read-only`` starts the console with every write
disabled. TARGET may be a directory, any URI the local backend accepts, or
an ``http(s)://`` URL of a Lance REST namespace (passed through as is). The console itself is
``python -m streamlit run app/main.py`` with ``LANCE_CONSOLE_TARGET`` set; its exit code is
ours, and Ctrl-C stops it cleanly.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
import webbrowser
from collections.abc import Sequence
from pathlib import Path

TARGET_ENV = "LANCE_CONSOLE_TARGET"
READ_ONLY_ENV = "LANCE_CONSOLE_READ_ONLY"
DEFAULT_PORT = 8501
DEFAULT_DEMO_DIR = Path(".lance-console") / "demo"


def repo_dir() -> Path:
    import backend

    return Path(backend.__file__).resolve().parent.parent


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lance-console",
        description="Browser admin console for Lance namespaces (local directory or REST).",
    )
    parser.add_argument(
        "target",
        nargs="?",
        help="directory, file:// / memory:// / s3:// URI, or http(s):// URL of a REST "
        "namespace; default: the demo namespace",
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="HTTP port (default 8501)")
    parser.add_argument(
        "--demo-dir",
        default=None,
        help=f"where to build the demo when no TARGET is given (default ./{DEFAULT_DEMO_DIR})",
    )
    parser.add_argument("--read-only", action="store_true", help="start with every write disabled")
    parser.add_argument(
        "--no-browser", action="store_true", help="do not open a browser window (headless)"
    )
    return parser


def resolve_target(target: str | None, demo_dir: str | None, *, echo=print) -> str:
    """The target to open; builds the demo when there is none."""
    if target:
        from . import is_rest_target

        if is_rest_target(target) or "://" in target:
            return target
        return str(Path(target).expanduser().resolve())
    from .demo import create_demo_namespace, is_foreign_directory

    directory = Path(demo_dir).expanduser() if demo_dir else DEFAULT_DEMO_DIR
    directory = directory.resolve()
    if is_foreign_directory(directory):
        raise SystemExit(
            f"lance-console: {directory} holds files but no demo namespace, so the demo is not "
            "built there. Open it as a namespace with `lance-console "
            f"{directory}`, or build the demo elsewhere with `lance-console --demo-dir "
            "<empty or new folder>`."
        )
    summary = create_demo_namespace(directory, progress=lambda m: echo(f"[demo] {m}"))
    if summary.created:
        tables = ", ".join("$".join(t) for t in summary.tables)
        echo(f"[demo] tables: {tables}")
    return str(directory)


def build_command(
    target: str, port: int, *, no_browser: bool, read_only: bool = False
) -> tuple[list[str], dict[str, str]]:
    """``(argv, env)`` of the streamlit process."""
    app = repo_dir() / "app" / "main.py"
    argv = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(app),
        "--server.port",
        str(port),
        # Always headless: a non-headless first run asks for an e-mail address on stdin and
        # blocks a newcomer's terminal. The browser is opened by us instead (see main).
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
    ]
    env = dict(os.environ)
    env[TARGET_ENV] = target
    if read_only:
        env[READ_ONLY_ENV] = "1"
    else:
        env.pop(READ_ONLY_ENV, None)
    root = str(repo_dir())
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return argv, env


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not 0 < args.port < 65536:
        print(f"lance-console: invalid port {args.port}", file=sys.stderr)
        return 2
    try:
        target = resolve_target(args.target, args.demo_dir)
    except KeyboardInterrupt:
        return 130
    except SystemExit as exc:  # a refusal with advice
        print(str(exc), file=sys.stderr)
        return 2
    except Exception as exc:  # show a one-line reason instead of a traceback
        print(f"lance-console: {exc}", file=sys.stderr)
        return 1
    command, env = build_command(
        target, args.port, no_browser=args.no_browser, read_only=args.read_only
    )
    mode = " (read-only)" if args.read_only else ""
    print(f"lance-console: opening {target}{mode} on http://localhost:{args.port}")
    proc = subprocess.Popen(command, env=env)
    if not args.no_browser:
        _open_browser_when_ready(f"http://localhost:{args.port}", proc)
    return _supervise(proc)


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


def _supervise(proc: subprocess.Popen) -> int:
    """Wait for streamlit and return its exit code; SIGTERM is forwarded to it.

    Ctrl-C in a terminal reaches both processes; if only this one got it, it is passed on.
    Streamlit gets a few seconds to stop, then SIGTERM, then SIGKILL; the exit code is
    streamlit's own when it stopped by itself, 130 otherwise.
    """
    previous = None
    with contextlib.suppress(ValueError):  # not the main thread: leave SIGTERM alone
        previous = signal.signal(signal.SIGTERM, lambda signum, _frame: proc.send_signal(signum))
    try:
        try:
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


def _exit_code(code: int) -> int:
    """A child killed by signal N (``-N``) exits like a shell reports it: 128 + N."""
    return 128 - code if code < 0 else code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
