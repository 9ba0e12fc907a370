"""Compiler diagnostics quote no host file: the submission's own files by name, the toolchain's headers below
their include folder, and a diagnostic located in any other file of the host replaced by one line."""

from __future__ import annotations

from grader.build import diagnostics

WORK = "/var/lib/kerneljudge/runs/run-abc123"


def test_the_submissions_own_files_are_named_relative():
    log = f"{WORK}/sol.cpp:3:5: error: 'x' was not declared in this scope\n    3 |     x = 1;\n      |     ^"
    assert (
        diagnostics.clean(log, (WORK,))
        == "sol.cpp:3:5: error: 'x' was not declared in this scope\n    3 |     x = 1;\n      |     ^"
    )


def test_the_toolchains_headers_are_shown_below_their_include_folder():
    log = (
        "In file included from /usr/include/c++/12/vector:66,\n"
        f"                 from {WORK}/sol.cpp:1:\n"
        "/usr/include/c++/12/bits/stl_vector.h:1123:7: note: candidate: 'void push_back()'\n"
        "/usr/local/cuda-13.0/targets/x86_64-linux/include/cuda_runtime.h(12): warning: something\n"
        "/usr/bin/ld: cannot find -lfoo"
    )
    cleaned = diagnostics.clean(log, (WORK,))
    assert "<system>/c++/12/vector:66" in cleaned and "from sol.cpp:1" in cleaned
    assert "<system>/c++/12/bits/stl_vector.h:1123:7: note: candidate" in cleaned
    assert "<system>/cuda_runtime.h(12): warning" in cleaned
    assert cleaned.endswith("ld: cannot find -lfoo")
    assert "/usr/" not in cleaned


def test_a_diagnostic_in_a_host_file_is_not_quoted():
    log = (
        f"In file included from {WORK}/sol.cpp:2:\n"
        "/etc/passwd:1:5: error: found ':' in nested-name-specifier, expected '::'\n"
        "    1 | root:x:0:0:root:/root:/bin/bash\n"
        "      |     ^\n"
        "/etc/passwd:1:1: error: 'root' does not name a type\n"
        "    1 | root:x:0:0:root:/root:/bin/bash\n"
        '/srv/secret.cu(3): error: identifier "hunter2" is undefined\n'
        "      int a = hunter2;\n"
        "              ^\n"
        f"{WORK}/sol.cpp:5:1: error: expected ';' before '}}' token\n"
        "cc1plus: fatal error: /root/notes.txt: Permission denied"
    )
    cleaned = diagnostics.clean(log, (WORK,))
    for leaked in ("root:x", "'root'", "hunter2", "/etc/passwd", "/srv/secret", "/root/notes"):
        assert leaked not in cleaned
    assert cleaned.count(diagnostics.HIDDEN) == 1  # one line for the whole hidden run of diagnostics
    assert "sol.cpp:5:1: error: expected ';'" in cleaned
    assert "fatal error: <host file>: Permission denied" in cleaned


def test_the_containers_working_directory_is_relative_too():
    assert diagnostics.clean("/work/sol.cu(4): error: bad", (WORK, "/work")) == "sol.cu(4): error: bad"
