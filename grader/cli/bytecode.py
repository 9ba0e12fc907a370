"""Start-up: keep the compiled bytecode of the heavy libraries where the next `grader` command finds it.

On an image whose site-packages holds no `__pycache__` and cannot get one (read-only, or PYTHONDONTWRITEBYTECODE),
every command recompiled PyTorch's Python sources: on the H100 image `import torch` took 3.5 s, 2.1 s of it in
`compile`. When PyTorch's own cached bytecode is missing, Python is told to keep bytecode under the grader's
cache instead (sys.pycache_prefix), so only the first command on a machine pays for it. Where the libraries
have their bytecode (a normal install), nothing changes.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from grader import settings


def keep_bytecode(probe: str = "torch") -> None:
    """Point sys.pycache_prefix at the cache when `probe`'s package has no cached bytecode beside it."""
    if sys.pycache_prefix is not None:
        return  # the user chose where bytecode goes
    spec = importlib.util.find_spec(probe)
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return
    if Path(importlib.util.cache_from_source(spec.origin)).exists():
        return
    sys.pycache_prefix = str(Path(settings.CACHE.get()) / "pycache")
    sys.dont_write_bytecode = False
