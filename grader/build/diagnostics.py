"""Compiler diagnostics as the submitter sees them: the submission's own files by their names, the toolchain's
headers by their path below the include folder, and nothing quoted from any other file of the host.

A submission can make the compiler read a host file it may read (`#include "/etc/passwd"`) and quote it in
an error. So a diagnostic located in a file that is neither the submission's nor the toolchain's is replaced
by one line that says so, with the source lines it quotes; any other path to such a file becomes
`<host file>`. (What the compile may read at all is the sandbox's business: uid, read-only mounts.)
"""

from __future__ import annotations

import re

SYSTEM_ROOTS = (
    "/usr/include/",
    "/usr/local/include/",
    "/usr/lib/gcc/",
    "/usr/lib64/gcc/",
    "/usr/local/cuda",
    "/usr/lib/cuda/",
    "/opt/cuda/",
    "/usr/lib/llvm",
)
PROGRAM_ROOTS = ("/usr/bin/", "/bin/", "/usr/local/bin/", "/usr/local/cuda/bin/", "/usr/lib/x86_64-linux-gnu/", "/tmp/")
HOST_FILE = "<host file>"
HIDDEN = f"{HOST_FILE}: (a diagnostic about a file outside the submission is not shown)"
_PATH = re.compile(r"(?<![\w.~<>-])/(?:[\w.+~-]+/)*[\w.+~-]+")
_LOCATION = re.compile(r"^(?P<lead>In file included from |\s+from )?(?P<path>/[^:()\s]+)(?::\d+|\(\d+\)|: )")


def _shown(path: str) -> str:
    """How a path outside the submission's folder is shown."""
    if path.startswith(SYSTEM_ROOTS):
        _head, found, tail = path.rpartition("/include/")
        return f"<system>/{tail if found else path.rsplit('/', 1)[-1]}"
    if path.startswith(PROGRAM_ROOTS):
        return path.rsplit("/", 1)[-1]
    return HOST_FILE


def _is_host_file(path: str) -> bool:
    return _shown(path) == HOST_FILE


def clean(log: str, folders: tuple[str, ...]) -> str:
    """`log` with each of `folders` (the working directory as the compiler saw it) made relative, the
    toolchain's paths shortened and host files hidden."""
    for folder in folders:
        log = log.replace(folder.rstrip("/") + "/", "").replace(folder, ".")
    kept: list[str] = []
    hidden = False
    for line in log.splitlines():
        found = _LOCATION.match(line)
        if found and _is_host_file(found.group("path")) and not found.group("lead"):
            if not hidden:
                kept.append(HIDDEN)
            hidden = True
            continue
        if found is None and hidden and line[:1].isspace():
            continue  # a source line the hidden diagnostic quotes, or its caret
        hidden = False
        kept.append(_PATH.sub(lambda m: _shown(m.group(0)), line))
    return "\n".join(kept).strip()
