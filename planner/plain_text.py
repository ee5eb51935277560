"""Text from input shown as plain text: one helper wherever input reaches a terminal or a file.

A scenario's name, a path on the command line, a key in a YAML file or a cell of a run log may
carry control characters, terminal escape sequences (ESC [ 2 J clears the screen), newlines (a
forged second line of output) or bidirectional overrides (U+202E shows `txt.exe` as `exe.txt`).
Shown through `plain`, each such character is written as its Python escape (`\\x1b`, `\\n`,
`\\u202e`), so the text reads as what it is and cannot act on the terminal, a log or a spreadsheet.
"""

from __future__ import annotations

import html
import re

# C0 and C1 controls and DEL (tab and newline included: one message is one line), the bidirectional
# marks, embeddings, overrides and isolates (Unicode TR9), and the line and paragraph separators.
_MARKS = "\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
_UNSAFE = re.compile(f"[\x00-\x1f{_MARKS}]")


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    if char in "\n\t\r":
        return {"\n": "\\n", "\t": "\\t", "\r": "\\r"}[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def plain(text: object) -> str:
    """`text` (str() of it), every control, escape, newline and bidi character written escaped."""
    shown = str(text)
    return _UNSAFE.sub(_escaped, shown)


def has_unsafe(text: str) -> bool:
    """Whether `plain` would change `text`."""
    return _UNSAFE.search(text) is not None


def html_text(text: object) -> str:
    """`text` for an HTML page: `plain`, then HTML-escaped (quotes too, for attributes)."""
    return html.escape(plain(text))


_UNSAFE_IN_JSON = re.compile(f"[{_MARKS}]")


def json_text(text: str) -> str:
    """JSON text with every character `plain` would escape written as a JSON escape (`\\u202e`):
    the same value to any JSON reader, and inert on a terminal; other non-ASCII (Chinese names)
    stays as written."""
    # (json.dumps escapes C0 controls inside strings itself: a raw newline is the layout's)
    return _UNSAFE_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
