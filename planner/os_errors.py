"""An OS error's cause in words, and which errors are the machine's limits rather than a bug.

Kept apart and light (errno only): `plan`'s last-resort handler uses it when no file can be opened,
not even a module to import.
"""

from __future__ import annotations

import errno

_REASONS = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file too large (a file-size limit, e.g. `ulimit -f`, or the file system's)",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EMFILE: "too many open files (raise `ulimit -n`)",
    errno.ENFILE: "too many open files in the system",
    errno.ENOENT: "the folder does not exist",
    errno.ENOTDIR: "a part of the path is not a folder",
    errno.EISDIR: "is a folder",
    errno.ELOOP: "too many levels of symbolic links",
    errno.ENAMETOOLONG: "file name too long",
    errno.EIO: "input/output error",
}


# The machine's limits rather than a bug: a command that meets one ends in one line, exit 2.
SYSTEM_LIMITS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES,
                           errno.EPERM, errno.EMFILE, errno.ENFILE, errno.EIO})


def reason_of(exc: OSError) -> str:
    """An OS error's cause in words."""
    if exc.errno in _REASONS:
        return _REASONS[exc.errno]
    return exc.strerror or type(exc).__name__
