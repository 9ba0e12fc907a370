"""A broken problem folder is a SpecError at load that names the file and the field, and one broken
problem does not stop `scan` from loading the others.

Each test copies a real problem into its own temporary folder and breaks one thing in the copy.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from grader.problems import catalog
from grader.problems.catalog import load_problem
from grader.problems.spec import SpecError


def copy_problem(root: Path, slug: str = "matmul", mutate=None) -> Path:
    """A copy of a real problem's folder under `root`, its problem.yaml changed by `mutate` (a dict edit)."""
    folder = root / slug
    shutil.copytree(catalog.REPO_ROOT / "problems" / slug, folder)
    if mutate:
        data = yaml.safe_load((folder / "problem.yaml").read_text())
        mutate(data)
        (folder / "problem.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


def spec_error(folder: Path) -> str:
    with pytest.raises(SpecError) as error:
        load_problem(folder)
    return str(error.value)


def test_a_tolerance_that_divides_by_zero_is_named(tmp_path):
    folder = copy_problem(tmp_path, mutate=lambda d: d["tolerance"].update(rtol="1/0"))
    message = spec_error(folder)
    assert message.startswith(str(folder / "problem.yaml"))
    assert "tolerance.rtol: '1/0' divides by zero" in message


def test_a_negative_tolerance_is_named(tmp_path):
    folder = copy_problem(tmp_path, mutate=lambda d: d["tolerance"].update(atol="1e-6 - 1e-3"))
    assert "tolerance.atol: '1e-6 - 1e-3' is -0.000999, not a finite number >= 0" in spec_error(folder)


def test_a_shape_that_is_not_a_whole_number_fails_at_load(tmp_path):
    """N/3 passes the name check; before, it failed only after the whole run, when the outputs were read."""

    def third_of_n(data):
        data["signature"][2]["shape"] = ["M", "N/3"]

    message = spec_error(copy_problem(tmp_path, mutate=third_of_n))
    assert "shape of 'C': 'N/3' is 0.333333, not a whole number >= 0 (for tests.one_element: M=1, N=1, K=1)" in message


def test_a_shape_that_goes_negative_for_one_benchmark_is_named(tmp_path):
    def less_than_four_k(data):
        data["signature"][2]["shape"] = ["M", "4096 - N"]
        for test in data["tests"]:
            test["sizes"]["N"] = 1

    message = spec_error(copy_problem(tmp_path, mutate=less_than_four_k))
    assert "shape of 'C': '4096 - N' is -2048, not a whole number >= 0" in message
    assert "benchmarks.cuda.rect_8k_6k_4k" in message


def test_a_formula_with_an_unknown_name_names_its_field(tmp_path):
    message = spec_error(copy_problem(tmp_path, mutate=lambda d: d.update(flops="2 * M * N * L")))
    assert "flops: unknown name 'L' in '2 * M * N * L'" in message


def test_a_constraint_that_is_not_a_comparison_is_named(tmp_path):
    message = spec_error(copy_problem(tmp_path, mutate=lambda d: d["constraints"].append("M + 1")))
    assert "constraints: 'M + 1' is not a comparison" in message


def test_a_syntax_error_in_reference_py_is_named_with_its_line(tmp_path):
    folder = copy_problem(tmp_path)
    path = folder / "reference.py"
    lines = path.read_text().splitlines()
    lines.insert(3, "def reference(A, B, M, N, K)  # the colon is missing")
    path.write_text("\n".join(lines) + "\n")
    assert spec_error(folder) == f"{path}:4: syntax error: expected ':'"


def test_a_return_outside_a_function_in_reference_py_is_a_syntax_error_at_load(tmp_path):
    """Parsing alone lets it through; compiling (still without running anything) does not."""
    folder = copy_problem(tmp_path)
    path = folder / "reference.py"
    path.write_text(path.read_text() + "return None\n")
    line = len(path.read_text().splitlines())
    assert spec_error(folder) == f"{path}:{line}: syntax error: 'return' outside function"


def test_an_error_while_importing_reference_py_is_named_with_its_line_when_first_used(tmp_path):
    """Loading only compiles reference.py (importing it means importing PyTorch); the import, at first use,
    turns an error into the same kind of SpecError."""
    folder = copy_problem(tmp_path)
    path = folder / "reference.py"
    path.write_text(path.read_text() + "\nSCALE = 1 / undefined_name\n")
    line = len(path.read_text().splitlines())
    problem = load_problem(folder)
    with pytest.raises(SpecError) as error:
        problem.reference_module  # noqa: B018
    assert str(error.value).startswith(f"{path}:{line}: NameError while importing:")
    assert "undefined_name" in str(error.value)


def test_a_reference_py_without_a_reference_function_is_named(tmp_path):
    folder = copy_problem(tmp_path)
    (folder / "reference.py").write_text("def baseline(A, B, M, N, K):\n    return A @ B\n")
    assert spec_error(folder) == f"{folder / 'reference.py'}: defines no `reference` function"


@pytest.mark.parametrize(
    "source",
    [
        "reference = 3\n",  # bound at load, but not a function: caught at import
        "import torch\nif torch:\n    reference = None\n",
    ],
)
def test_a_reference_that_is_not_callable_is_named_when_first_used(tmp_path, source):
    folder = copy_problem(tmp_path)
    (folder / "reference.py").write_text(source)
    problem = load_problem(folder)
    with pytest.raises(SpecError) as error:
        problem.reference_module  # noqa: B018
    assert str(error.value) == f"{folder / 'reference.py'}: defines no `reference` function"


@pytest.mark.parametrize(
    "source",
    [
        "from torch import softmax as reference\n",
        "try:\n    def reference(A, B, M, N, K):\n        return A @ B\nexcept ImportError:\n    pass\n",
        "from math import *\n",
    ],
)
def test_a_reference_bound_by_import_or_in_a_block_is_found_at_load(tmp_path, source):
    folder = copy_problem(tmp_path)
    (folder / "reference.py").write_text(source)
    assert load_problem(folder).slug == "matmul"


def test_a_missing_reference_py_is_named(tmp_path):
    folder = copy_problem(tmp_path)
    (folder / "reference.py").unlink()
    assert spec_error(folder) == f"{folder / 'reference.py'}: missing: every problem needs a reference"


def test_a_missing_statement_is_named(tmp_path):
    folder = copy_problem(tmp_path)
    (folder / "statement.md").unlink()
    assert spec_error(folder) == f"{folder / 'statement.md'}: missing: every problem needs a statement"


def test_scan_returns_the_good_problems_and_the_errors_of_the_broken_ones(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELJUDGE_PROBLEMS", str(tmp_path))
    copy_problem(tmp_path, "softmax")
    broken = copy_problem(tmp_path, "matmul", mutate=lambda d: d["tolerance"].update(rtol="1/0"))
    (tmp_path / "attention").mkdir()  # a folder without problem.yaml is not a problem: not an error either

    problems, errors = catalog.scan()

    assert [p.slug for p in problems] == ["softmax"]
    assert [str(broken / "problem.yaml") in str(e) and "tolerance.rtol" in str(e) for e in errors] == [True]
    with pytest.raises(SpecError):  # load_all stays strict: selftest and grade-many must not skip a problem
        catalog.load_all()


def test_every_problem_of_the_repository_loads_with_no_error(monkeypatch):
    monkeypatch.delenv("KERNELJUDGE_PROBLEMS", raising=False)
    problems, errors = catalog.scan()
    assert errors == [] and len(problems) >= 4
    assert all(callable(p.reference_module.reference) for p in problems)


def test_grader_list_lists_the_good_problems_and_names_the_broken_one(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from grader.cli.main import app

    monkeypatch.setenv("KERNELJUDGE_PROBLEMS", str(tmp_path))
    copy_problem(tmp_path, "softmax")
    copy_problem(tmp_path, "matmul", mutate=lambda d: d["tolerance"].update(rtol="1/0"))
    result = CliRunner().invoke(app, ["list"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "softmax" in result.stdout and "left out" in result.output and "tolerance.rtol" in result.output
