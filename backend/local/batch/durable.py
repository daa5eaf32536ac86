"""Durability on a POSIX filesystem: fsync of files and directories, atomic writes, moves.

Nothing in the apply phase needs ordering among its own writes (the journal, durable before
the first change, says how to undo any subset of them); what matters is that all of them are
durable before the commit record (or, rolling back, before the FAILED record). So
:class:`Durable` collects what changed and fsyncs it all at that barrier, in parallel: cost
proportional to this batch's own writes (``syncfs(2)`` would also wait for every other
writer's dirty data).
"""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

FSYNC_THREADS = 16  # fsync releases the GIL; the filesystem journal batches concurrent ones


def fsync_path(path: Path, *, directory: bool = False) -> None:
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


def write_new(path: Path, data: bytes, *, sync: bool = True) -> None:
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


class Durable:
    """Files and directories changed since the last barrier; :meth:`flush` makes them durable."""

    def __init__(self) -> None:
        self.paths: dict[Path, bool] = {}  # path -> is a directory

    def file(self, path: Path) -> None:
        self.paths.setdefault(path, False)

    def dir(self, path: Path) -> None:
        self.paths[path] = True

    def flush(self) -> None:
        paths, self.paths = self.paths, {}
        if len(paths) < 4:
            for p, is_dir in paths.items():
                fsync_path(p, directory=is_dir)
            return
        with ThreadPoolExecutor(min(FSYNC_THREADS, len(paths))) as pool:
            for future in [
                pool.submit(fsync_path, p, directory=is_dir) for p, is_dir in paths.items()
            ]:
                future.result()


__all__ = ["Durable", "fsync_path", "move", "write_atomic", "write_new"]
