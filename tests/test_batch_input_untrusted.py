"""A batch (a manifest or a folder) is untrusted input: `grader grade-many` names problems by slug only, opens
files inside the batch's folder through no symbolic link, and as root reads them only where the batch's owner
could. Each hostile batch here is refused with a message that says why, and nothing of it is graded, imported
or quoted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MINI_PROBLEM as PROBLEM

from grader.problems import catalog
from grader.scale.batch import files as batch_files
from grader.scale.batch import inputs as batch_input

REPO = Path(__file__).resolve().parents[1]
SOURCE = "void solve(const float* input, float* output, int M, int N) {}\n"
SECRET = "kerneljudge-batch-secret-93f1"
NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="reading with the batch owner's rights needs root")


def manifest(folder: Path, *records: dict) -> Path:
    path = folder / "batch.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def hostile_problem(root: Path) -> tuple[Path, Path]:
    """A folder that looks like a problem, whose reference.py leaves a mark when it is imported."""
    folder = root / "evil"
    folder.mkdir()
    mark = root / "imported"
    (folder / "problem.yaml").write_text((REPO / "problems" / "softmax" / "problem.yaml").read_text())
    (folder / "statement.md").write_text("evil\n")
    (folder / "reference.py").write_text(f"open({str(mark)!r}, 'w').write('imported')\n")
    return folder, mark


def test_a_problem_named_by_a_folder_path_is_a_usage_error_and_nothing_is_imported(mini_problem, tmp_path):
    folder, mark = hostile_problem(tmp_path)
    (tmp_path / "k.cpp").write_text(SOURCE)
    batch = manifest(tmp_path, {"problem": str(folder), "file": "k.cpp", "user": "ann"})
    command = [sys.executable, "-m", "grader.cli.scale", "grade-many", str(batch), "--no-db", "--track", "cpu"]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    said = " ".join(result.stderr.split())
    assert "is not a problem's name: name a problem by its slug" in said, said
    assert not mark.exists(), "the folder's reference.py was imported"


@pytest.mark.parametrize("name", ["../softmax", "softmax/", ".", "Softmax", "soft max", 7, "softmax\n"])
def test_only_a_slug_names_a_problem(mini_problem, tmp_path, name):
    (tmp_path / "k.cpp").write_text(SOURCE)
    with pytest.raises(batch_input.InputError, match="name a problem by its slug"):
        batch_input.collect(manifest(tmp_path, {"problem": name, "file": "k.cpp"}), tracks=["cpu"])
    with pytest.raises(batch_input.InputError, match="name a problem by its slug"):
        batch_input.collect(tmp_path, problem=str(name), tracks=["cpu"])


def test_a_known_slug_in_the_working_folder_is_still_the_problems_own(mini_problem, tmp_path, monkeypatch):
    """A folder named like a problem in the grader's working folder is not the problem."""
    hostile_problem(tmp_path)
    (tmp_path / "evil").rename(tmp_path / PROBLEM)
    monkeypatch.chdir(tmp_path)
    assert catalog.load_slug(PROBLEM).folder == catalog.problems_root() / PROBLEM


@pytest.mark.parametrize(
    ("file", "why"),
    [
        ("/etc/passwd", "never by an absolute path"),
        ("../outside.cpp", "no `..`"),
        ("sub/../../outside.cpp", "no `..`"),
        ("", "never by an absolute path"),
        ("k\u0000.cpp", "a NUL character"),
    ],
)
def test_a_manifest_path_outside_its_folder_is_a_usage_error(mini_problem, tmp_path, file, why):
    inner = tmp_path / "inner"
    inner.mkdir()
    (tmp_path / "outside.cpp").write_text(SOURCE)
    with pytest.raises(batch_input.InputError, match=why):
        batch_input.collect(manifest(inner, {"problem": PROBLEM, "file": file}), tracks=["cpu"])


def secret_file(tmp_path: Path) -> Path:
    """A file only root may read, outside the batch."""
    secret = tmp_path / "root-only.cpp"
    secret.write_text(f"// {SECRET}\n{SOURCE}")
    secret.chmod(0o600)
    return secret


def test_a_symbolic_link_in_a_folder_is_refused_not_followed(mini_problem, tmp_path):
    folder = tmp_path / "in" / PROBLEM
    folder.mkdir(parents=True)
    (folder / "good.cpp").write_text(SOURCE)
    (folder / "link.cpp").symlink_to(secret_file(tmp_path))
    (tmp_path / "in" / "linked").symlink_to(tmp_path)  # a linked folder is not walked into
    batch = batch_input.collect(tmp_path / "in", tracks=["cpu"])
    assert [Path(item.file).name for item in batch.items] == ["good.cpp"]
    assert batch.refused == [f"{folder / 'link.cpp'}: the file is a symbolic link: not followed"]
    assert not any(SECRET in item.job.source for item in batch.items)


def test_a_symbolic_link_on_a_manifests_path_is_refused(mini_problem, tmp_path):
    inner = tmp_path / "inner"
    inner.mkdir()
    secret_file(tmp_path)
    (inner / "sub").symlink_to(tmp_path)
    (inner / "k.cpp").symlink_to(tmp_path / "root-only.cpp")
    batch = batch_input.collect(
        manifest(inner, {"problem": PROBLEM, "file": "sub/root-only.cpp"}, {"problem": PROBLEM, "file": "k.cpp"}),
        tracks=["cpu"],
    )
    assert batch.items == []
    assert [refusal.split(": ", 1)[1] for refusal in batch.refused] == [
        f"{inner / 'sub/root-only.cpp'}: sub is a symbolic link: not followed",
        f"{inner / 'k.cpp'}: the file is a symbolic link: not followed",
    ]


@needs_root
def test_as_root_a_batch_reads_only_what_its_owner_could(mini_problem, tmp_path):
    folder = tmp_path / "in" / PROBLEM
    folder.mkdir(parents=True)
    (folder / "theirs.cpp").write_text(SOURCE)
    (folder / "roots.cpp").write_text(f"// {SECRET}\n{SOURCE}")
    (folder / "roots.cpp").chmod(0o600)  # root's, in the owner's folder: root may read it, the owner may not
    for path in (tmp_path / "in", folder, folder / "theirs.cpp"):
        os.chown(path, NOBODY, NOBODY)
    tmp_path.chmod(0o755)
    batch = batch_input.collect(tmp_path / "in", tracks=["cpu"])
    assert [Path(item.file).name for item in batch.items] == ["theirs.cpp"]
    assert batch.refused == [f"{folder / 'roots.cpp'}: the batch's owner (uid {NOBODY}) may not read the file"]


def test_the_owners_rights_are_the_permission_bits_for_that_user():
    reader = batch_files.Reader(1000, frozenset({50}))
    stat = os.stat_result
    assert reader.may(stat((0o100400, 0, 0, 1, 1000, 0, 0, 0, 0, 0)), 4)  # owner r--
    assert not reader.may(stat((0o100044, 0, 0, 1, 1000, 0, 0, 0, 0, 0)), 4)  # owner ---, others may: not the owner
    assert reader.may(stat((0o100040, 0, 0, 1, 0, 50, 0, 0, 0, 0)), 4)  # one of its groups
    assert not reader.may(stat((0o100040, 0, 0, 1, 0, 51, 0, 0, 0, 0)), 4)
    assert reader.may(stat((0o040001, 0, 0, 1, 0, 0, 0, 0, 0, 0)), 1)  # a folder others may enter
    assert batch_files.Reader(None).may(stat((0o100000, 0, 0, 1, 0, 0, 0, 0, 0, 0)), 4)  # the grader's own rights


def test_a_queued_job_or_a_warm_request_naming_a_folder_is_refused_unimported(mini_problem, tmp_path, monkeypatch):
    from grader.scale import jobs
    from grader.scale.warm import worker as warm_worker

    folder, mark = hostile_problem(tmp_path)
    with pytest.raises(ValueError, match="a problem is named by its slug"):
        jobs.Job(problem=str(folder), track="cpu", filename="k.cpp", source=SOURCE)
    monkeypatch.chdir(tmp_path)  # _grade moves into the client's folder
    request = {"problem": str(folder), "filename": "k.cpp", "track": "cpu", "mode": "test", "source": SOURCE}
    request["cwd"] = str(tmp_path)
    answer = warm_worker._grade(request, connection=None, log=lambda _said: None)  # type: ignore[arg-type]
    assert "a problem is named by its slug" in answer["usage_error"]
    assert not mark.exists()
