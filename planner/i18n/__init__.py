"""The language of what people read: English or Chinese (`--lang`, a scenario's `lang:`, or the
locale). Messages live in one table per language (`messages_en`, `messages_zh`), looked up by key;
JSON output never goes through them (it is for programs, and stays English and numeric)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

from plan.planner.i18n import messages_en, messages_zh

LANGUAGES = ("en", "zh")
TABLES: dict[str, Mapping[str, str]] = {"en": messages_en.MESSAGES, "zh": messages_zh.MESSAGES}

_language: ContextVar[str] = ContextVar("plan_language", default="en")
_named: ContextVar[bool] = ContextVar("plan_language_named", default=False)


def language() -> str:
    """The language output is written in now."""
    return _language.get()


def locale_language(environ: Mapping[str, str] | None = None) -> str:
    """'zh' where the locale (LC_ALL, then LC_MESSAGES, then LANG: the first one set, as POSIX
    reads them) starts with zh; 'en' otherwise."""
    env = os.environ if environ is None else environ
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name)
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def choose(named: str | None, environ: Mapping[str, str] | None = None) -> None:
    """Speak `named` (a --lang value), else the locale's language; a scenario's `lang:` may still
    change the latter (`adopt`)."""
    _language.set(named.lower() if named else locale_language(environ))
    _named.set(bool(named))


def adopt(scenario_lang: str | None) -> None:
    """A scenario's `lang:`: it wins over the locale, not over --lang."""
    if scenario_lang and not _named.get():
        _language.set(scenario_lang)


@contextmanager
def kept_language() -> Iterator[None]:
    """Whatever a command chooses, the language before it comes back afterwards (tests run many
    commands in one process)."""
    before, named = _language.get(), _named.get()
    try:
        yield
    finally:
        _language.set(before)
        _named.set(named)


def t(key: str, **fields: object) -> str:
    """The message `key` in the current language, its {fields} filled in."""
    text = TABLES[language()][key]
    return text.format(**fields) if fields else text


def word(family: str, value: str) -> str:
    """A domain word (a status, a billing mode, an objective) in the current language; a word the
    table does not know is shown as it is (an id, a new mode)."""
    return TABLES[language()].get(f"{family}.{value}", value)


def speaks_chinese() -> bool:
    return language() == "zh"
