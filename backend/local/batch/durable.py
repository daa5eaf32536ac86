"""Durability on a POSIX filesystem: fsync of files and directories, atomic writes, moves.

Nothing in the apply phase needs ordering among its own writes (the journal, durable before
the first change, says how to undo any subset of them); what matters is that all of them are
durable before the commit record (or, rolling back, before the FAILED record). So
:class:`Durable` collects what changed and makes it all durable at that barrier:

* up to :data:`SYNCFS_FROM` paths: fsync of each, in parallel (cost proportional to this
  batch's own writes);
* more: one ``syncfs(2)`` per filesystem involved (Linux), which flushes that filesystem's
  data and metadata in one journal commit. It also waits for other writers' dirty data, which
  is cheaper than thousands of fsyncs once a batch is large (benchmarks/bench_batch_commit.py).
  Where ``syncfs`` is missing or fails, the paths are fsynced as above.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import sys
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

IO_THREADS = 16  # fsync, mkdir, create release the GIL; the filesystem journal batches them
SYNCFS_FROM = 64  # paths at a barrier from which one syncfs per filesystem replaces fsyncs


def _libc_syncfs() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.syncfs
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


_SYNCFS = _libc_syncfs()


def syncfs(path: str | os.PathLike[str]) -> bool:
    """``syncfs(2)`` of the filesystem holding ``path``; False when it is unavailable or
    fails (the caller then fsyncs)."""
    if _SYNCFS is None:
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        return int(_SYNCFS(fd)) == 0
    finally:
        os.close(fd)


def fsync_path(path: str | os.PathLike[str], *, directory: bool = False) -> None:
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    except OSError as e:  # some filesystems refuse fsync on directories
        if not directory or e.errno not in (errno.EINVAL, errno.EBADF, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


def write_new(path: str | os.PathLike[str], data: bytes, *, sync: bool = True) -> None:
    """Create ``path`` (it must not exist) with ``data``; fsynced unless ``sync=False``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically and durably (tmp, fsync, rename, dir fsync)."""
    tmp = path.with_name(f".tmp-{uuid.uuid4().hex}-{path.name}")
    try:
        write_new(tmp, data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_path(path.parent, directory=True)


def move(src: Path, dst: Path) -> None:
    """Move a file; an atomic rename on one filesystem, else copy + fsync + unlink."""
    try:
        os.rename(src, dst)
    except OSError as e:
        if e.errno != errno.EXDEV:
            raise
        with contextlib.suppress(FileNotFoundError):
            os.unlink(dst)
        write_new(dst, src.read_bytes())
        os.unlink(src)


def run_all(
    fn: Callable[[T], object],
    items: Sequence[T],
    *,
    threads: int = IO_THREADS,
    sliced: bool = False,
) -> None:
    """``fn(item)`` for every item; in threads when there are more than a few (file system
    calls release the GIL and their waits overlap; the journal batches concurrent ones).
    ``sliced``: each thread works through one slice of the items (for many short calls, where
    a task per item costs more than the call itself). Every item is attempted; then the first
    exception, if any, is raised."""
    if len(items) < 4:
        _each(fn, items)
        return
    workers = min(threads, len(items))
    if sliced:
        tasks: Sequence[Any] = [items[i::workers] for i in range(workers)]
        run: Callable[[Any], object] = functools.partial(_each, fn)
    else:
        tasks, run = items, fn
    with ThreadPoolExecutor(workers) as pool:
        futures = [pool.submit(run, task) for task in tasks]
    for future in futures:
        future.result()


def _each(fn: Callable[[T], object], items: Sequence[T]) -> None:
    """``fn`` on every item, then the first exception raised, if any."""
    first: BaseException | None = None
    for item in items:
        try:
            fn(item)
        except BaseException as exc:  # noqa: BLE001 - raised once the rest is attempted
            first = first or exc
    if first is not None:
        raise first


class Durable:
    """Files and directories changed since the last barrier; :meth:`flush` makes them durable.
    Paths are kept as strings: a batch registers thousands, and ``pathlib`` costs more per
    path than the ``mkdir`` that made it."""

    def __init__(self) -> None:
        self.paths: dict[str, bool] = {}  # path -> is a directory

    def file(self, path: str | os.PathLike[str]) -> None:
        self.paths.setdefault(os.fspath(path), False)

    def dir(self, path: str | os.PathLike[str]) -> None:
        self.paths[os.fspath(path)] = True

    def flush(self) -> None:
        paths, self.paths = self.paths, {}
        if len(paths) >= SYNCFS_FROM:
            paths = self._syncfs(paths)
        run_all(lambda item: fsync_path(item[0], directory=item[1]), list(paths.items()))

    @staticmethod
    def _syncfs(paths: dict[str, bool]) -> dict[str, bool]:
        """One syncfs per filesystem of ``paths``; returns the paths still to fsync. A file
        is on its directory's filesystem, so files are grouped by their directory's device
        (one ``stat`` per directory); a directory may be a mount point and is looked at."""
        devices: dict[str, int | None] = {}

        def device(path: str) -> int | None:
            if path not in devices:
                try:
                    devices[path] = os.stat(path).st_dev
                except FileNotFoundError:
                    devices[path] = None  # gone since: nothing to make durable
            return devices[path]

        by_device: dict[int, tuple[str, list[str]]] = {}  # device -> (a path on it, paths)
        for p, is_dir in paths.items():
            looked_at = p if is_dir else os.path.dirname(p) or "."
            dev = device(looked_at)
            if dev is not None:
                by_device.setdefault(dev, (looked_at, []))[1].append(p)
        left: dict[str, bool] = {}
        for opened, group in by_device.values():
            if not syncfs(opened):
                left.update({p: paths[p] for p in group})
        return left
