"""The learning path: `grader list` and the site's index follow problems/ORDER; a slug it names without a folder
is skipped, a problem it does not name comes after the named ones (easy before hard)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from typer.testing import CliRunner

from grader.cli.main import app
from grader.problems import order
from grader.problems.catalog import REPO_ROOT, scan


@dataclass
class P:
    slug: str
    difficulty: str


def test_the_order_file_decides_and_unlisted_problems_follow_easy_first(tmp_path):
    (tmp_path / "ORDER").write_text("# path\nb   # first\n\nghost\na\n")
    problems = [P("z-hard", "hard"), P("a", "easy"), P("y-easy", "easy"), P("b", "hard")]
    assert [p.slug for p in order.ordered(problems, tmp_path)] == ["b", "a", "y-easy", "z-hard"]


def test_without_an_order_file_problems_go_easy_to_hard(tmp_path):
    problems = [P("c", "hard"), P("b", "medium"), P("a", "hard"), P("d", "easy")]
    assert [p.slug for p in order.ordered(problems, tmp_path)] == ["d", "b", "a", "c"]


def test_the_repositorys_path_starts_with_vector_add_and_ends_with_the_attention_backward():
    slugs = order.read(REPO_ROOT / "problems")
    assert slugs[0] == "vector-add" and slugs[-1] == "attention-backward"
    for earlier, later in [("sum-reduction", "matmul"), ("matmul", "gemm-fp16"), ("softmax", "attention")]:
        assert slugs.index(earlier) < slugs.index(later)
    assert len(set(slugs)) == len(slugs)


def test_grader_list_follows_the_path():
    result = CliRunner().invoke(app, ["list", "--json"])
    assert result.exit_code == 0, result.output
    listed = [p["slug"] for p in json.loads(result.stdout)]
    problems, _ = scan()
    assert listed == [p.slug for p in order.ordered(problems)]
    path = [slug for slug in order.read(REPO_ROOT / "problems") if slug in listed]
    assert listed[: len(path)] == path
