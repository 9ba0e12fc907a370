"""The `grader` command line as a user meets it: usage errors that say what is wrong (also as
JSON under --json), no CUDA run where there is no GPU, reference solutions recorded as such, readable help,
--version, and a start-up that imports nothing heavy.

Everything runs against temporary data, cache and run folders; nothing here needs a GPU.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner
from verdicts import verdict

from grader import toolchain
from grader.cli.main import app
from grader.problems import solutions
from grader.problems.catalog import REPO_ROOT as REPO
from grader.problems.catalog import list_slugs, load_problem
from grader.records import storage

runner = CliRunner()
KNOWN = ", ".join(list_slugs())


@pytest.fixture(autouse=True)
def private_folders(tmp_path, monkeypatch):
    for name in ("DATA", "CACHE", "RUNS"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(f"KERNELJUDGE_{name}", str(tmp_path / name))
    monkeypatch.setenv("COLUMNS", "80")


@pytest.fixture
def source(tmp_path):
    def write(name: str, text: str = "void solve(const float*, float*, int, int) {}\n"):
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


@pytest.mark.parametrize("arguments", [["nosuch"], ["nosuch", "solve.cpp"]])
def test_an_unknown_problem_is_named_with_the_known_ones(arguments, source):
    source("solve.cpp")
    result = runner.invoke(app, ["submit", *arguments])
    assert result.exit_code == 2, result.output
    assert f"unknown problem 'nosuch'; the known problems are: {KNOWN}" in " ".join(result.output.split())
    assert "Missing argument" not in result.output and "Traceback" not in result.output


def test_make_grade_of_an_unknown_problem_says_so():
    # `make grade PROBLEM=nosuch` runs `grader submit nosuch --reference --user ...`
    result = runner.invoke(app, ["submit", "nosuch", "--reference", "--user", "ada"])
    assert result.exit_code == 2, result.output
    assert f"unknown problem 'nosuch'; the known problems are: {KNOWN}" in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_a_missing_file_says_how_to_get_one():
    result = runner.invoke(app, ["submit", "softmax"])
    assert result.exit_code == 2
    assert "missing FILE" in result.output and "grader init softmax" in " ".join(result.output.split())


@pytest.mark.parametrize(
    "file,track",
    [
        ("solve.cu", "CUDA"),
        # On a machine without a GPU the Python tracks ran, and died as a runtime error charged to the solution
        ("solutions/softmax/02_triton_online.py", "Triton"),
        ("solutions/softmax/02_cupy_block_per_row.py", "CuPy"),
    ],
)
def test_a_gpu_track_file_without_a_gpu_is_a_usage_error(source, monkeypatch, file, track):
    no_gpu = toolchain.Toolchain("/usr/local/cuda/bin/nvcc", "13.0", "/usr/bin/g++", "13", None, "some CPU")
    monkeypatch.setattr(toolchain, "detect", lambda: no_gpu)
    path = REPO / file if "/" in file else source(file)
    for mode in ("test", "submit"):
        result = runner.invoke(app, [mode, "softmax", str(path), "--db", "sqlite:///:memory:"])
        assert result.exit_code == 2, result.output
        said = " ".join(result.output.split())
        assert f"no GPU (nvidia-smi found none), so a {track} solution cannot run here" in said
        assert ".cpp" in said and "--track cpu" in said and "one_element" not in said
    assert storage.list_submissions() == []


@pytest.mark.parametrize(
    "arguments",
    [
        ["submit", "--json"],  # found by the parser: a missing argument
        ["submit", "nosuch", "solve.cpp", "--json"],  # found by the command
        ["test", "softmax", "missing.cpp", "--json"],
        ["show-submission", "zzzz", "--json"],
        ["leaderboard", "nosuch", "--json"],
    ],
)
def test_usage_errors_under_json_are_json_on_stdout(arguments, source):
    source("solve.cpp")
    result = runner.invoke(app, arguments)
    assert result.exit_code == 2
    error = json.loads(result.stdout)
    assert error["status"] == "usage_error" and error["message"]


def test_a_reference_solution_is_recorded_as_one(monkeypatch, tmp_path):
    from grader.judge import pipeline

    def fake_grade(spec, source, filename, *, track, mode, user, **_):
        graded = verdict(user, [100.0, 200.0], problem=spec.slug)
        graded.track = track
        return graded

    monkeypatch.setattr(pipeline, "grade", fake_grade)
    db = f"sqlite:///{tmp_path / 'results.db'}"
    best = solutions.best("softmax", "cpu")
    copied = tmp_path / best.name
    copied.write_bytes(best.read_bytes())
    for arguments in (["--reference"], [str(best)], [str(copied)]):
        result = runner.invoke(app, ["submit", "softmax", *arguments, "--track", "cpu", "--user", "me", "--db", db])
        assert result.exit_code == 0, result.output
    users = [s.user for s in storage.list_submissions(db_url=db)]
    assert users == ["me", f"ref:{best.name}", f"ref:{best.name}"]  # newest first: a copy elsewhere is the user's


def test_help_reads_like_a_man_page():
    result = runner.invoke(app, ["submit", "--help"], prog_name="grader")
    assert result.exit_code == 0
    assert "grader submit [OPTIONS] PROBLEM [FILE]" in result.output
    assert "<bool>" not in result.output and "<str>" not in result.output and "{" not in result.output
    assert "--user" in result.output and "NAME" in result.output and "--track" in result.output
    top = runner.invoke(app, ["--help"], env={"COLUMNS": "120"})
    assert "--install-completion" in top.output and "--version" in top.output
    assert "<bool>" not in top.output  # grader's own flags read as flags too


def test_version():
    import grader
    from grader import identity

    result = runner.invoke(app, ["--version"])
    build = identity.grader_build()  # the version and a digest of the code: what each verdict records
    assert build.startswith(grader.__version__ + "+") and len(build) == len(grader.__version__) + 11
    assert result.exit_code == 0 and result.output.strip() == f"kerneljudge {grader.__version__} (build {build})"


def test_the_cli_modules_import_nothing_heavy():
    """What every command pays before it runs: no PyTorch, numpy, SQLAlchemy, matplotlib or pipeline; nor what test
    and submit use before they know whether a warm worker grades for them (tests/test_warm.py runs that path)."""
    modules = ["grader.cli.app", "grader.cli.grading", "grader.cli.bench", "grader.cli.results", "grader.cli.output"]
    modules += ["grader.cli.selftest", "grader.cli.warm", "grader.judge.intake", "grader.scale.warm.client"]
    heavy = ["torch", "numpy", "sqlalchemy", "alembic", "matplotlib", "grader.judge.pipeline", "grader.sandbox.local"]
    code = f"import sys, {', '.join(modules)}; print([m for m in {heavy!r} if m in sys.modules])"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_shell_completion_knows_the_problems(monkeypatch):
    monkeypatch.setenv("_GRADER_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", "grader submit so")
    monkeypatch.setenv("COMP_CWORD", "2")
    result = runner.invoke(app, [], prog_name="grader")
    assert result.output.split() == [slug for slug in list_slugs() if slug.startswith("so")]


def test_show_states_the_time_limit():
    from grader.problems.catalog import load_problem

    result = runner.invoke(app, ["show", "softmax"])
    assert result.exit_code == 0, result.output
    assert f"Time limit: {load_problem('softmax').time_limit_s:g} s for the tests" in result.output


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"void solve() {} // caf\xe9\n", "not UTF-8 text (byte 0xe9"),
        (b"void solve() {}\n\0\n", "a NUL byte at line 2"),
        (b"//" + b"x" * (1 << 20) + b"\n", "a source may be at most 1,048,576 bytes"),
    ],
    ids=["latin1", "nul", "too_big"],
)
def test_a_source_that_is_not_text_is_refused_at_intake(content, says, tmp_path):
    path = tmp_path / "solve.cpp"
    path.write_bytes(content)
    db = f"sqlite:///{tmp_path / 'results.db'}"
    result = runner.invoke(app, ["submit", "softmax", str(path), "--json", "--db", db])
    assert result.exit_code == 2, result.output
    assert json.loads(result.stdout)["status"] == "usage_error"
    assert says in " ".join(result.output.split())
    assert not (tmp_path / "results.db").exists()  # nothing compiled, run or stored


def test_an_option_whose_metavar_is_its_name_says_its_name():
    # typer 0.27 named such an option by its metavar: `port: int = typer.Option(8000, metavar="PORT")` became
    # --PORT, and `grader serve --port 0` a usage error on a GPU image that has that typer.
    import ast

    for path in (REPO / "grader" / "cli").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.arguments):
                continue
            for arg, default in zip(node.args[len(node.args) - len(node.defaults) :], node.defaults):
                if not (isinstance(default, ast.Call) and getattr(default.func, "attr", "") == "Option"):
                    continue
                metavar = next((k.value for k in default.keywords if k.arg == "metavar"), None)
                names = [a.value for a in default.args if isinstance(a, ast.Constant) and str(a.value).startswith("-")]
                if isinstance(metavar, ast.Constant) and metavar.value == arg.arg.upper():
                    assert names, f"{path.name}: option {arg.arg} has metavar {metavar.value} and no explicit name"


def test_validate_timing_prints_each_problem_as_it_is_timed(monkeypatch):
    """A run stopped in its second problem (here: interrupted) has already shown the first problem's table."""
    from grader.study import bench as study

    def rows(problem, track, progress=None, solution=None):
        if problem.slug == "attention":
            raise KeyboardInterrupt
        timed = {"kerneljudge_us": 176.9, "do_bench_us": 175.0, "ncu_us": 175.3, "bound_us": 176.0}
        return [{"problem": problem.slug, "benchmark": "square_8k", "who": "top rung", **timed}]

    monkeypatch.setattr(study, "validate_rows", rows)
    monkeypatch.setenv("COLUMNS", "200")
    result = runner.invoke(app, ["validate-timing", "softmax", "attention"])
    assert result.exit_code == 130  # the CLI's exit status for an interrupt
    assert "softmax: timings in" in result.output and "square_8k" in result.output
    assert "1.009" in result.output  # kerneljudge / ncu


def test_validate_timing_times_a_solution_file_on_the_track_it_implies(monkeypatch):
    from grader.study import bench as study

    timed = []

    def rows(problem, track, progress=None, solution=None):
        timed.append((problem.slug, track, solution))
        return []

    monkeypatch.setattr(study, "validate_rows", rows)
    rung = REPO / "solutions/softmax/02_triton_online.py"
    result = runner.invoke(app, ["validate-timing", "softmax", "--solution", str(rung)])
    assert result.exit_code == 0, result.output
    assert timed == [("softmax", "triton", rung)]  # the track its imports imply


@pytest.mark.parametrize(
    "arguments,said",
    [
        (["gemm-fp16", "--solution", "nosuch.py"], "no such file: nosuch.py"),
        (["--solution", "solutions/softmax/02_triton_online.py"], "--solution times one file: name its problem"),
        (["softmax", "--solution", "solutions/softmax/01_naive.cpp"], "GPU tracks: cuda, triton or cupy, not 'cpu'"),
    ],
)
def test_validate_timing_of_an_unusable_solution_is_a_usage_error(monkeypatch, arguments, said):
    from grader.study import bench as study

    monkeypatch.setattr(study, "validate_rows", lambda *a, **kw: pytest.fail("timed an unusable solution"))
    monkeypatch.chdir(REPO)
    result = runner.invoke(app, ["validate-timing", *arguments])
    assert result.exit_code == 2, result.output
    assert said in " ".join(result.output.split()) and "Traceback" not in result.output
    error = json.loads(runner.invoke(app, ["validate-timing", *arguments, "--json"]).stdout)
    assert error["status"] == "usage_error" and said in error["message"]


def test_validate_timing_documents_its_solution_option(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    result = runner.invoke(app, ["validate-timing", "--help"], prog_name="grader")
    assert result.exit_code == 0
    said = " ".join(result.output.split())
    assert "--solution FILE" in said and "Time this solution file instead of the top rung" in said


def test_validate_rows_grades_the_solution_it_is_given(monkeypatch, tmp_path):
    pytest.importorskip("triton")
    from grader.study import bench as study

    graded = []

    def fake_grade(problem, source, filename, *, track, mode, **_):
        graded.append((filename, source, track, mode))
        return verdict("me", [], status="wrong_answer", message="3 of 15 elements wrong")

    monkeypatch.setattr(study.pipeline, "grade", fake_grade)
    mine = tmp_path / "mine.py"
    mine.write_text("import triton\n")
    with pytest.raises(RuntimeError) as refused:
        study.validate_rows(load_problem("gemm-fp16"), "triton", solution=mine)
    assert str(refused.value) == "gemm-fp16: mine.py was not accepted: 3 of 15 elements wrong"
    assert graded == [("mine.py", b"import triton\n", "triton", "submit")]
