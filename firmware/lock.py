"""One referee per journal: an exclusive ``fcntl.flock`` on a lock file beside the journal.

Two referees writing one journal would interleave their moves, and the next start would resume a
game nobody played. :meth:`JournalLock.acquire` takes the lock (without waiting) on
``DIRECTORY/current.lock`` and writes the process id into it, so that a second referee is refused
at once with a :class:`JournalBusy` naming the first one's pid. The lock is the kernel's: it goes
away with the process, however the process ends (``kill -9`` included), so a stale lock file never
blocks a restart. The lock file, not the journal itself, is locked because a new game replaces the
journal file (:meth:`~firmware.journal.Journal.create` renames a new file over it).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from pathlib import Path

#: The lock file's name in the journal's directory.
LOCK_FILE = "current.lock"


class JournalLockError(RuntimeError):
    """The journal's directory cannot be used; the message says which and why."""


class JournalBusy(JournalLockError):
    """Another process holds the journal; ``pid`` is that process (``None`` if unknown)."""

    def __init__(self, message: str, pid: int | None) -> None:
        super().__init__(message)
        self.pid = pid


class JournalLock:
    """The exclusive lock of one journal directory, held until :meth:`release` (or exit)."""

    def __init__(self, directory: Path, fd: int) -> None:
        self.directory = directory
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, directory: str | Path) -> JournalLock:
        """Create ``directory`` if needed and lock it for this process; :class:`JournalBusy`
        when another process holds it, :class:`JournalLockError` when it cannot be written."""
        directory = Path(directory)
        path = directory / LOCK_FILE
        try:
            directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise JournalLockError(_unwritable(directory, exc)) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise JournalLockError(_unwritable(directory, exc)) from None
            pid = holder(directory)
            who = f"pid {pid}" if pid is not None else "another process"
            raise JournalBusy(
                f"another referee ({who}) is using the journal in {directory}: stop it first "
                "(or give this one its own [journal] directory)",
                pid,
            ) from None
        try:
            pid = f"{os.getpid()}\n".encode()
            os.pwrite(fd, pid, 0)
            os.ftruncate(fd, len(pid))
        except OSError as exc:
            os.close(fd)
            raise JournalLockError(_unwritable(directory, exc)) from None
        return cls(directory, fd)

    def release(self) -> None:
        """Let the journal go (again: nothing)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> JournalLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def holder(directory: str | Path) -> int | None:
    """The pid written in ``directory``'s lock file (``None`` if there is none to read)."""
    try:
        text = (Path(directory) / LOCK_FILE).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


def claim(journal: str | Path, records: str | Path) -> JournalLock:
    """What a referee needs before its game: the journal's lock and a records folder it can
    write (:class:`JournalLockError` otherwise, with nothing held)."""
    lock = JournalLock.acquire(journal)
    try:
        check_writable(records, "records")
    except JournalLockError:
        lock.release()
        raise
    return lock


def check_writable(directory: str | Path, what: str) -> None:
    """Create ``directory`` if needed and make sure a file can be written there;
    :class:`JournalLockError` naming ``what`` (e.g. "records") otherwise."""
    directory = Path(directory)
    probe = directory / f".write-test-{os.getpid()}"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise JournalLockError(_unwritable(directory, exc, what)) from None


def _unwritable(directory: Path, exc: OSError, what: str = "journal") -> str:
    reason = exc.strerror or str(exc)
    return (
        f"cannot write the {what} in {directory}: {reason}; choose a writable folder with "
        f"[journal] {'records' if what == 'records' else 'directory'} in your config file"
    )
