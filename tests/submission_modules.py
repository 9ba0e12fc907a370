"""A submission's source imported from a file, as the Python worker imports it (Triton reads a kernel's source
from its file, so the module must come from one)."""

from __future__ import annotations

import importlib.util
import textwrap
import types
from pathlib import Path


def import_from(path: Path, source: str) -> types.ModuleType:
    """`source` (dedented) written to `path` and imported from there as the module `submission`."""
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location("submission", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
