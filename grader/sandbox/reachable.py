"""Whether the sandbox's uid can reach a file of the host: that uid owns nothing and is in no group, so only the
permission bits for "others" let it through. Every folder on the way must be searchable by others and the file
itself readable (and, for a program, executable) by others. A Python interpreter under a private home (pyenv or
conda in a 0700 /root or /home/ada) fails this, and the Python tracks' worker would die before `solve` ran.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def blocked(path: Path, *, execute: bool = False) -> str:
    """'' when others can reach `path` (read it; run it if `execute`; search it if it is a folder), else what
    stops them, e.g. "/root is drwx------"."""
    target = Path(os.path.realpath(path))
    try:
        for folder in reversed(target.parents):  # from / down
            mode = folder.stat().st_mode
            if not mode & stat.S_IXOTH:
                return f"{folder} is {stat.filemode(mode)}"
        mode = target.stat().st_mode
    except OSError as error:
        return f"{error.filename or target}: {error.strerror}"
    need = stat.S_IROTH | (stat.S_IXOTH if execute or stat.S_ISDIR(mode) else 0)
    return "" if mode & need == need else f"{target} is {stat.filemode(mode)}"
