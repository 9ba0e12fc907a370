"""Start-up bytecode (grader/cli/bytecode.py): a library without cached bytecode gets it under the grader's cache,
so the next command imports it without recompiling; a library with its own bytecode is left alone."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def _start(tmp_path: Path, package: str) -> str:
    program = textwrap.dedent(f"""
        import sys
        sys.dont_write_bytecode = True  # as PYTHONDONTWRITEBYTECODE or a read-only site-packages would have it
        from grader.cli.bytecode import keep_bytecode
        keep_bytecode({package!r})
        import {package}
        print(sys.pycache_prefix)
    """)
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": f"{tmp_path / 'site'}:{Path.cwd()}",
        "KERNELJUDGE_CACHE": str(tmp_path / "cache"),
    }
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, check=True)
    return done.stdout.strip()


def _package(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / "site" / name
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("VALUE = 42\n")
    return folder


def test_a_library_without_bytecode_gets_it_under_the_cache(tmp_path):
    folder = _package(tmp_path, "nobytecode")
    assert _start(tmp_path, "nobytecode") == str(tmp_path / "cache" / "pycache")
    kept = list((tmp_path / "cache" / "pycache").rglob("__init__*.pyc"))
    assert kept and not (folder / "__pycache__").exists()  # kept in the cache, never beside the sources


def test_a_library_with_its_own_bytecode_is_left_alone(tmp_path):
    folder = _package(tmp_path, "withbytecode")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(folder)], check=True)
    assert _start(tmp_path, "withbytecode") == "None"
    assert not (tmp_path / "cache").exists()
