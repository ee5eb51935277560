"""The words a file error is made of (what was read, what kind of file it was, why the system
refused it), as keyed sentences (plan.models.said) that a reader's language can say again; the
English text is what these messages always said."""

from __future__ import annotations

import errno
import stat
from collections.abc import Callable

from plan.models.said import say_as

_WHAT: dict[str, Callable[[], str]] = {  # what the caller reads, in the words it names it
    "file": lambda: say_as("rule.what_file", "file"),
    "scenario file": lambda: say_as("rule.what_scenario", "scenario file"),
    "model card": lambda: say_as("rule.what_card", "model card"),
    "catalog overlay": lambda: say_as("rule.what_overlay", "catalog overlay"),
    "results file": lambda: say_as("rule.what_results", "results file"),
    "run description": lambda: say_as("rule.what_run_description", "run description"),
    "calibration file": lambda: say_as("rule.what_calibration", "calibration file"),
    "run file": lambda: say_as("rule.what_run_file", "run file"),
    "log": lambda: say_as("rule.what_log", "log"),
}


def what_word(what: str) -> str:
    """The name of what was read ('scenario file'), keyed where known, else as given."""
    return _WHAT[what]() if what in _WHAT else what


def file_kind(mode: int) -> str:
    """'a FIFO', 'a character device', ...: what a special file is."""
    for test, name in ((stat.S_ISFIFO, lambda: say_as("rule.kind_fifo", "a FIFO")),
                       (stat.S_ISCHR, lambda: say_as("rule.kind_chardev", "a character device")),
                       (stat.S_ISBLK, lambda: say_as("rule.kind_blockdev", "a block device")),
                       (stat.S_ISSOCK, lambda: say_as("rule.kind_socket", "a socket"))):
        if test(mode):
            return name()
    return say_as("rule.kind_other", "not a plain file")


# the system's own reason as glibc writes it, keyed by errno so Chinese can say it; another
# system's wording is shown as it is
_REASONS: dict[int, Callable[[], str]] = {
    errno.ELOOP: lambda: say_as("rule.os_loop", "Too many levels of symbolic links"),
    errno.EACCES: lambda: say_as("rule.os_access", "Permission denied"),
    errno.EPERM: lambda: say_as("rule.os_permission", "Operation not permitted"),
    errno.ENAMETOOLONG: lambda: say_as("rule.os_name_too_long", "File name too long"),
    errno.ENOTDIR: lambda: say_as("rule.os_not_dir", "Not a directory"),
    errno.EIO: lambda: say_as("rule.os_io", "Input/output error"),
}


def os_reason(exc: OSError) -> str:
    """Why the system refused: its own words (exc.strerror), keyed by errno where known."""
    text = exc.strerror or str(exc)
    build = _REASONS.get(exc.errno or 0)
    said = build() if build is not None else None
    return said if said is not None and said == text else text
