"""Text from users as the web judge shows it and takes it in: names, sources, messages and file names.

Every value a page prints goes through `visible` (the templates' finalize) before Jinja's escaping: characters
that reorder or hide text (the bidirectional overrides and isolates, zero-width marks, other controls but tab
and newline) are shown as their code point, e.g. ⟦U+202E⟧, so a name or a source line reads on the page as it
is stored (a "Trojan Source" line cannot hide code). Long values wrap within their cell (the stylesheet's
overflow-wrap). A submitted file's name is cut to its last path part, its characters kept to a safe set.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import PurePosixPath, PureWindowsPath

from markupsafe import Markup

MAX_FILENAME = 100
_FILENAME_OK = re.compile(r"[^A-Za-z0-9._+-]")


def _hidden(c: str) -> bool:
    return c not in "\t\n\r" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")


def visible(value):
    """`value` with every hidden or reordering character shown as ⟦U+XXXX⟧ (Markup stays Markup)."""
    if not isinstance(value, str) or not any(_hidden(c) for c in value):
        return value
    shown = "".join(f"⟦U+{ord(c):04X}⟧" if _hidden(c) else c for c in value)
    return Markup(shown) if isinstance(value, Markup) else shown


def safe_filename(name: str, default: str) -> str:
    """A file name a user sent, as stored and shown: its last path part, characters outside [A-Za-z0-9._+-]
    as '_', at most MAX_FILENAME characters with its extension kept; `default` when nothing is left."""
    base = PureWindowsPath(PurePosixPath(name or "").name).name
    base = _FILENAME_OK.sub("_", base).lstrip(".")
    if not base.strip("_"):
        return default
    if len(base) > MAX_FILENAME:
        stem, dot, suffix = base.rpartition(".")
        base = (
            (stem[: MAX_FILENAME - len(suffix) - 1] + dot + suffix) if dot and len(suffix) < 10 else base[:MAX_FILENAME]
        )
    return base
