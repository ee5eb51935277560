"""A persistent cache of layout-search results, shared by every process and run on this machine.

A search's answer depends only on the estimator's code, the model's shape, the method, the cluster
and the layout constraints, so it is stored under a digest of exactly those (the code by the hash of
its source files, the GPU by its whole catalog entry) and reused by later solves, Pareto walks and
batch
variants: scenarios that differ only in budget or deadline share every estimate.

SQLite in WAL mode lets batch workers read and write it concurrently. New results are buffered and
written in one transaction by `flush()` (at the end of candidate building, and at exit). The file is
kept under `MAX_CACHE_MIB` by dropping the oldest rows. Any failure (an unwritable folder, a corrupt
file, a row from another version) turns the cache off or into a miss: it can make a run faster,
never wrong and never fail.

Location: `$PLAN_CACHE_DIR`, else the user's cache folder (platformdirs); `PLAN_CACHE_DIR=off` or
`plan --no-cache` turns it off.

Rows hold data only: JSON text (no NaN or infinity), stored under the digest of the code version and
the search's inputs, with a checksum over that digest and the text. A row whose checksum does not
match (torn, edited, copied under another key) is a miss; the caller checks the values themselves
(stored_search.py). The folder is made private (0700); a folder or file that another user owns or
may write is not used, said in one line on stderr: its rows could have been planted.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import sqlite3
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from plan.models.said import say_as
from plan.planner import i18n
from plan.planner.i18n.said import local

CACHE_ENV = "PLAN_CACHE_DIR"
OFF_VALUES = frozenset({"", "0", "off", "none", "false"})
MAX_CACHE_MIB = 256
"""Size above which the oldest rows are dropped, down to three quarters of it (checked at open
and flush)."""

_FILE_NAME = "estimates.sqlite3"
# The code a search's answer depends on: the estimator and the models modules it reads (the method
# vocabulary decides reference copies and passes; platforms only reach it as values in the cluster
# key).
_SOURCES = ("planner/estimate", "models/layout.py", "models/model_card.py", "models/gpu.py",
            "models/methods.py")


def code_version() -> str:
    """Digest of the estimator's source: any edit to it invalidates every stored result."""
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for name in _SOURCES:
        path = root / name
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for file in files:
            digest.update(file.relative_to(root).as_posix().encode())
            with contextlib.suppress(OSError):
                digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def cache_dir() -> Path | None:
    """Where the cache lives, or None when it is turned off."""
    configured = os.environ.get(CACHE_ENV)
    if configured is not None:
        return None if configured.strip().lower() in OFF_VALUES else Path(configured).expanduser()
    import platformdirs  # only when the cache is used

    return Path(platformdirs.user_cache_dir("plan", appauthor=False))


_TABLE = "estimates"  # (spelled out in each query: SQL text is never built from values)
_OLD_TABLES = ("results",)  # pickled rows of earlier versions: dropped unread


def _opened(db: sqlite3.Connection, attempts: int = 10) -> None:
    """Switch a connection to WAL and create the table. Processes that open a new file at once
    (batch workers on an empty cache) race for both, and SQLite answers some of those races "locked"
    at once instead of waiting (a write upgrade from a stale read): each is retried, with the table
    created under a write lock taken first (which does wait), so no opener ends up with its cache
    off."""
    for attempt in range(attempts):
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            with db:
                db.execute("BEGIN IMMEDIATE")
                db.execute(f"CREATE TABLE IF NOT EXISTS {_TABLE} (key TEXT PRIMARY KEY, value TEXT "
                           "NOT NULL, checksum TEXT NOT NULL, stored REAL NOT NULL)")
                for old in _OLD_TABLES:
                    db.execute(f"DROP TABLE IF EXISTS {old}")
            return
        except sqlite3.OperationalError:
            if attempt == attempts - 1:
                raise
            time.sleep(0.02 * (attempt + 1))


def unsafe_reason(path: Path) -> str | None:
    """Why a cache folder or file must not be used (another user owns it or may write it), or None.
    Reads the entry itself, not what a symlink points at: a link is refused too."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return say_as("store.unchecked", "cannot be checked ({error})",
                      error=exc.strerror or str(exc))
    if stat.S_ISLNK(info.st_mode):
        return say_as("store.symlink", "is a symbolic link")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return say_as("store.other_owner", "belongs to another user")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return say_as("store.others_write", "may be written by other users")
    return None


def _refuse_constant(word: str) -> float:
    raise ValueError(f"{word} is not a stored figure")


def _checksum(digest: str, text: str) -> str:
    return hashlib.sha256(f"{digest}|{text}".encode()).hexdigest()


class EstimateStore:
    """Get and put JSON values by text key; every error turns into a miss or a no-op."""

    def __init__(self, folder: Path, max_mib: int = MAX_CACHE_MIB) -> None:
        self.path = folder / _FILE_NAME
        self.max_bytes = max_mib * 2**20
        self.version = code_version()
        self._pending: dict[str, str] = {}
        self._db: sqlite3.Connection | None = None
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            if unsafe_reason(folder) is None:
                # a folder made by an earlier version: its rows are nobody else's
                folder.chmod(0o700)
            for place in (folder, self.path):
                reason = unsafe_reason(place)
                if reason is not None:
                    line = say_as("store.unsafe", "estimate cache {place} {reason}; not used (it "
                                  "must be this user's alone: chmod 700 the folder, or set {env})",
                                  place=str(place), reason=reason, env=CACHE_ENV)
                    print(i18n.t("warning.frame", line=local(line)), file=sys.stderr)
                    return
            db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
            _opened(db)
            with contextlib.suppress(OSError):
                os.chmod(self.path, 0o600)
            self._db = db
            self._trim()
        except (OSError, sqlite3.Error):
            self._db = None

    @property
    def enabled(self) -> bool:
        return self._db is not None

    def digest(self, key_text: str) -> str:
        return hashlib.sha256(f"{self.version}|{key_text}".encode()).hexdigest()

    def get(self, key_text: str) -> Any | None:
        """The value stored under the key, or None: none stored, or a row that is not what was put
        under this key by this code version (its checksum does not match), or not plain JSON."""
        if self._db is None:
            return None
        digest = self.digest(key_text)
        text = self._pending.get(digest)
        try:
            if text is None:
                row = self._db.execute("SELECT value, checksum FROM estimates WHERE key = ?",
                                       (digest,)).fetchone()
                if (
                    row is None
                    or not isinstance(row[0], str)
                    or row[1] != _checksum(digest, row[0])
                ):
                    return None  # none, or torn, edited or moved: recompute (the put replaces it)
                text = row[0]
            return json.loads(text, parse_constant=_refuse_constant)
        except (sqlite3.Error, ValueError, RecursionError):
            return None

    def put(self, key_text: str, value: Any) -> None:
        """Keep a JSON value (finite numbers only) for the next flush; any other value is not
        kept."""
        if self._db is None:
            return
        try:
            text = json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError):
            return
        self._pending[self.digest(key_text)] = text

    @property
    def unflushed(self) -> int:
        """How many results wait for the next flush (candidates/searches_ahead.py: whether a build
        searched anything no store held)."""
        return len(self._pending)

    def flush(self) -> None:
        """Write buffered results in one transaction (other writers wait up to 10 s for the
        lock)."""
        if self._db is None or not self._pending:
            return
        now = time.time()
        rows = [(key, text, _checksum(key, text), now) for key, text in self._pending.items()]
        self._pending.clear()
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany("INSERT OR REPLACE INTO estimates VALUES (?, ?, ?, ?)", rows)
            self._trim()
        except sqlite3.Error:
            return  # the results stay correct in memory; only reuse is lost

    def _trim(self) -> None:
        """Over the bound, keep the newest rows that bring the file to three quarters of it and
        drop the rest. The rows' text is only part of the file (the key's index, checksums, page
        slack: a third of it with estimates' small rows), so the text kept is scaled by its share:
        counting the text alone kept a file over the bound, and every process then opened the
        store by rewriting it whole (VACUUM, 300 MB: 1.8 s of each solve)."""
        assert self._db is not None
        pages = self._db.execute("PRAGMA page_count").fetchone()[0]
        page_size = self._db.execute("PRAGMA page_size").fetchone()[0]
        size = pages * page_size
        if size <= self.max_bytes:
            return
        text = self._db.execute(
            "SELECT COALESCE(SUM(length(value) + length(key)), 0) FROM estimates").fetchone()[0]
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            dropped = self._db.execute(
                "DELETE FROM estimates WHERE key IN (SELECT key FROM (SELECT key, "
                "SUM(length(value) + length(key)) OVER (ORDER BY stored DESC, key) AS kept FROM "
                "estimates) WHERE kept > ?)",
                (int(0.75 * self.max_bytes * text / size),)).rowcount
        if dropped:
            self._db.execute("VACUUM")
            # (the rewrite goes through the write-ahead log: give its space back now)
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        self.flush()
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None


_store: EstimateStore | None = None
_opened_for: tuple[str | None, int, Path | None] | None = None
_private: Path | None = None  # (private_store's folder, while it lasts)
_inherited: list[EstimateStore] = []  # (`forked`: the parent's store, never closed in a child)


def store() -> EstimateStore | None:
    """The process's store for the current setting (reopened when PLAN_CACHE_DIR, the private
    folder or the pid changes, so a forked batch worker gets its own connection)."""
    global _store, _opened_for
    setting = (os.environ.get(CACHE_ENV), os.getpid(), _private)
    if setting != _opened_for:
        if _store is not None and _opened_for is not None and _opened_for[1] == os.getpid():
            _store.close()
        folder = _private if _private is not None else cache_dir()
        _store = EstimateStore(folder) if folder is not None else None
        _opened_for = setting
    return _store if _store is not None and _store.enabled else None


def flush() -> None:
    """Write what this process has computed since the last flush."""
    if _store is not None and _opened_for is not None and _opened_for[1] == os.getpid():
        _store.flush()


@contextlib.contextmanager
def private_store(folder: Path) -> Iterator[None]:
    """Within the block, this process and the processes it forks keep their searches in a store in
    `folder` (the caller's own, removed by it afterwards) whatever PLAN_CACHE_DIR says: where the
    store is off, the helpers of a cold build hand their searches back through it
    (candidates/searches_ahead.py). Closed, its rows written, when the block ends."""
    global _private
    flush()
    _private = folder
    try:
        yield
    finally:
        _private = None
        store()  # (closes the private store: the setting changed)


def forked() -> None:
    """In a child just forked from a process that had the store open: keep the parent's connection
    alive and unused (SQLite connections must not cross a fork; closing it here could release what
    the parent holds), so that `store()` opens this process's own."""
    global _store, _opened_for
    if _store is not None and _opened_for is not None and _opened_for[1] != os.getpid():
        _inherited.append(_store)
        _store, _opened_for = None, None


atexit.register(flush)
