"""``lance-console maintain TARGET [--dry-run] [--namespace NS]``: apply the namespaces'
maintenance policies once (for cron or a Kubernetes CronJob).

For every namespace of TARGET (the root and every namespace under it; only ``NS`` with
``--namespace``), the namespace's saved policy, else the default policy
(``backend.services.maintenance``), is planned and run: per table, what it did (or, with
``--dry-run``, would do) and why is printed on stdout, one line per action. Every write goes
through the console's write gate as the OS user (admin) and is recorded in the audit log, as
the console records it; ``LANCE_CONSOLE_READ_ONLY`` refuses them.

With ``--job`` each namespace's run is recorded as one job of kind ``plan``
(``backend.services.jobs``, beside the namespace's other job records): the Jobs and
Maintenance pages of every console on the namespace list it with its progress and its
per-table results, a second run on the same namespace is refused while it runs, and if this
process dies (a CronJob's deadline) the job reads interrupted. A namespace with nothing to do
records no job. Without ``--job`` nothing is recorded but the audit log (a nightly run leaves
no job records behind).

TARGET is what the launcher takes (a folder, ``file://`` / ``s3://`` / ``gs://`` / ``az://``
URI, ``http(s)://`` URL), with the same ``--storage`` and ``--api-key-env`` options; a folder
that does not exist is refused (nothing is created).

Exit codes: 0 when every action ran (or none was needed; a dry run that could read every
table); 1 when an action failed, was refused or cannot run on this backend (over REST the
spec has no maintenance operation), or a table could not be read; 2 for bad input: options,
a target that cannot be opened, a namespace that does not exist, a saved policy that is not
valid or names tables the namespace no longer has.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from backend.config import launch
from backend.launcher import options
from backend.launcher.options import parse_storage, storage_problem
from backend.redaction import display_target

PROG = "lance-console maintain"
OK, FAILED, BAD_INPUT = 0, 1, 2

EPILOG = """\
Without --namespace every namespace of TARGET is maintained (the root first), each by its
saved policy (the Maintenance page) or, where none is saved, the default policy: compact
tables with more than 20% small fragments or 10% deleted rows, optimize indexes missing more
than 5% of the rows, clean up versions older than 7 days (never the latest or a tagged one).

Exit codes: 0 done (or nothing to do); 1 an action failed, was refused, cannot run on this
backend, or a table could not be read; 2 bad input (options, target, namespace, policy).

A CronJob (nightly at 03:00):
  lance-console maintain s3://bucket/lake --storage aws_region=us-east-1 \\
    --storage aws_secret_access_key=env:AWS_SECRET_ACCESS_KEY ...
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Apply the maintenance policies of a Lance namespace once (compaction, "
        "index optimization, cleanup of old versions).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "target",
        help="directory, file:// / memory:// / s3:// / gs:// / az:// URI, or http(s):// URL of "
        "a REST namespace",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print what would be done and why; change nothing",
    )
    parser.add_argument(
        "--namespace",
        metavar="NS",
        default=None,
        help="only this namespace (its parts joined by the delimiter, e.g. 'sales$eu', or "
        "'sales › eu'; '' for the root); default: every namespace",
    )
    parser.add_argument(
        "--job",
        action="store_true",
        help="record each namespace's run as a job (kind plan) that the consoles' Jobs and "
        "Maintenance pages list; ignored with --dry-run",
    )
    options.add_access_options(parser)
    return parser


def _connect(args: argparse.Namespace, err: TextIO) -> Any:
    """The gated namespace of ``args.target`` (``None`` when it cannot be opened: said on
    ``err``)."""
    import backend
    from backend import audit
    from backend.gate import Actor, gate

    try:
        storage = parse_storage(args.storage)
    except ValueError as exc:
        print(f"{PROG}: {exc}", file=err)
        return None
    rest = backend.is_rest_target(args.target)
    if rest and storage.values:
        print(f"{PROG}: --storage is for folders and object stores, not a REST server", file=err)
        return None
    problem = storage_problem(args.target, storage)
    if problem:
        print(f"{PROG}: {problem}", file=err)
        return None
    missing = None if rest else backend.missing_local_directory(args.target)
    if missing is not None:
        print(f"{PROG}: {missing} does not exist; nothing was created", file=err)
        return None
    options: dict[str, Any] = {}
    if rest:
        key_env = args.api_key_env or launch.API_KEY_ENV
        if args.api_key_env and not os.environ.get(key_env):
            print(f"{PROG}: --api-key-env: {key_env} is not set", file=err)
            return None
        if os.environ.get(key_env):
            options["api_key"] = os.environ[key_env]
    elif storage.values:
        options["storage_options"] = dict(storage.values)
    try:
        ns = backend.connect(args.target, audit=False, **options)
    except Exception as exc:  # noqa: BLE001 - any failure to open, as one line
        print(f"{PROG}: cannot open {display_target(args.target)}: {_said(exc)}", file=err)
        return None
    actor = Actor.os_user()
    return gate(
        ns,
        actor=Actor(actor.user, actor.role, source="cli"),
        connection=audit.target_name(args.target),
        read_only=launch.launch_read_only(),
        log=audit.AuditLog(),
    )


def _said(exc: BaseException) -> str:
    from backend.errors import describe_error
    from backend.redaction import redact_text

    found = describe_error(exc)
    return redact_text(f"{found['title']}: {found['message']}")


def _namespaces(ns: Any, wanted: str | None, out: TextIO) -> list[list[str]]:
    """The namespaces to maintain: ``wanted`` parsed (``''``: the root), else the whole tree
    (the root first)."""
    from backend.rules import ids
    from backend.services import namespaces as nsv

    if wanted is not None:
        if not wanted.strip():
            return [[]]
        delimiter = ids.delimiter_of(ns)
        return [ids.parse_id(wanted, delimiter, what="namespace")]
    tree = nsv.namespace_tree(ns)
    note = tree.capped_note()
    if note:
        print(f"{PROG}: {note}", file=out)
    return [[], *[list(node.path) for _depth, node in tree.rows()]]


def _would(step: Any) -> str:
    """A dry run's line for one step the policy calls for."""
    from backend.rules import ids

    line = f"  {ids.display_id(step.table_id)}  {step.kind}: would run. Why: {step.reason}."
    if step.effect:
        line += f" Expected: {step.effect}."
    if step.blocked:
        line += f" Cannot run here: {step.blocked}."
    return line


def _run_as_job(ns: Any, plan: Any, out: TextIO) -> tuple[Any, bool]:
    """Run ``plan`` as a job of kind ``plan`` and wait for it: ``(the steps' report or None,
    whether the job succeeded)``; a refusal or another end is said on ``out``."""
    from backend.services import jobs
    from backend.services import maintenance as mt

    try:
        job = mt.submit_plan(ns, plan)
    except Exception as exc:  # noqa: BLE001 - a refusal, a plan already running
        print(f"  not run: {_said(exc)}", file=out)
        return None, False
    print(f"  recorded as job {job.id}", file=out, flush=True)
    job = jobs.wait(ns, job.id, timeout=float("inf"))
    if job.state != jobs.SUCCEEDED:
        print(f"  job {job.id} {job.state}: {job.error_text or job.interrupted}", file=out)
    return mt.report_of(job), job.state == jobs.SUCCEEDED


def _maintain_namespace(
    ns: Any, nsid: list[str], *, dry_run: bool, out: TextIO, err: TextIO, job: bool = False
) -> tuple[int, int]:
    """Plan (and run) one namespace; ``(actions that ran or would run, problems)``."""
    from lance_namespace.errors import LanceNamespaceError

    from backend.rules import ids
    from backend.services import maintenance as mt

    shown = ids.display_id(nsid)
    try:
        saved = mt.load_policy(ns, nsid)
        plan = mt.plan(ns, nsid, saved)
    except LanceNamespaceError as exc:
        print(f"{PROG}: namespace {shown}: {_said(exc)}", file=err)
        raise _BadInput from None
    print(saved.describe(), file=out)
    problems = 0
    for figures in plan.tables:
        if figures.error:
            print(
                f"  {ids.display_id(figures.table_id)}: cannot be read: {figures.error}", file=out
            )
            problems += 1
    todo = plan.todo
    by_table = {s.table_id for s in todo}
    for figures in plan.tables:
        if figures.table_id not in by_table and not figures.error:
            print(f"  {ids.display_id(figures.table_id)}: nothing to do", file=out)
    if dry_run:
        for step in todo:
            print(_would(step), file=out)
            problems += bool(step.blocked)
        return len(todo), problems
    if job and todo:  # a namespace with nothing to do records no job
        report, succeeded = _run_as_job(ns, plan, out)
        problems += not succeeded
        if report is None:
            return len(todo), problems
    else:
        report = mt.run_plan(ns, plan)
    for result in report.results:
        print(
            f"  {ids.display_id(result.table_id)}  {result.kind}: {result.status}: "
            f"{result.message}",
            file=out,
        )
        problems += result.status != mt.DONE
    return len(report.results), problems


class _BadInput(Exception):
    """A namespace or policy the run cannot go on with (said already)."""


def main(
    argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return int(exc.code or 0)
    ns = _connect(args, err)
    if ns is None:
        return BAD_INPUT
    mode = "dry run, nothing is changed" if args.dry_run else "maintaining"
    print(f"{PROG}: {display_target(args.target)} ({mode})", file=out, flush=True)
    try:
        spaces = _namespaces(ns, args.namespace, out)
    except Exception as exc:  # noqa: BLE001 - a bad --namespace, an unreachable target
        print(f"{PROG}: {_said(exc)}", file=err)
        return BAD_INPUT
    actions = problems = 0
    bad = False
    for nsid in spaces:
        try:
            done, found = _maintain_namespace(
                ns, nsid, dry_run=args.dry_run, out=out, err=err, job=args.job
            )
        except _BadInput:
            bad = True
            continue
        actions += done
        problems += found
        out.flush()
    verb = "would run" if args.dry_run else "ran"
    tail = f"; {problems} problem{'s' if problems != 1 else ''}" if problems else ""
    print(
        f"{PROG}: {actions} action{'s' if actions != 1 else ''} {verb} in "
        f"{len(spaces)} namespace{'s' if len(spaces) != 1 else ''}{tail}",
        file=out,
        flush=True,
    )
    if bad:
        return BAD_INPUT
    return FAILED if problems else OK
