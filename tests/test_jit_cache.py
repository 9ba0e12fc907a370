"""The JIT cache kept per source (grader/run/jit_cache.py): copied into a run's folder before the run and out of
it after, by the grader, from a run folder that may hold anything a hostile run leaves there."""

from __future__ import annotations

import os
import shutil
import stat

import pytest

from grader.build import cache
from grader.run import jit_cache
from grader.toolchain import Toolchain

TOOLS = Toolchain(nvcc=None, nvcc_version="", gxx=None, gxx_version="", gpu=None, cpu_model="test cpu")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELJUDGE_CACHE", str(tmp_path / "cache"))


def _run_folder(tmp_path, name="run"):
    folder = tmp_path / name
    (folder / ".triton" / "abc").mkdir(parents=True)
    (folder / ".triton" / "abc" / "kernel.cubin").write_bytes(b"\x7fELF cubin")
    (folder / ".triton" / "abc" / "__grp__kernel.json").write_text('{"child_paths": {}}')
    return folder


def _files(root) -> dict[str, bytes]:
    found = {}
    for parent, _folders, files in os.walk(root):
        for name in files:
            path = os.path.join(parent, name)
            found[os.path.relpath(path, root)] = open(path, "rb").read()
    return found


def test_the_key_is_per_track_source_and_toolchain():
    a = jit_cache.key("triton", "0" * 64, TOOLS)
    assert a == jit_cache.key("triton", "0" * 64, TOOLS)
    assert a != jit_cache.key("triton", "1" * 64, TOOLS) and a != jit_cache.key("cupy", "0" * 64, TOOLS)
    other = Toolchain(nvcc=None, nvcc_version="", gxx=None, gxx_version="", gpu=None, cpu_model="another cpu")
    assert a != jit_cache.key("triton", "0" * 64, other)


def test_what_a_run_compiled_comes_back_to_the_next_run_of_the_same_source(tmp_path):
    key = jit_cache.key("triton", "0" * 64, TOOLS)
    assert jit_cache.copy_out("triton", key, _run_folder(tmp_path))
    entry = cache.entry(jit_cache.KIND, key)
    assert stat.S_IMODE(entry.parent.stat().st_mode) == 0o700
    fresh = tmp_path / "next"
    fresh.mkdir()
    assert jit_cache.copy_in("triton", key, fresh, None) == 2
    assert _files(fresh) == {
        ".triton/abc/kernel.cubin": b"\x7fELF cubin",
        ".triton/abc/__grp__kernel.json": b'{"child_paths": {}}',
    }
    assert stat.S_IMODE((fresh / ".triton" / "abc" / "kernel.cubin").stat().st_mode) == 0o600
    elsewhere = tmp_path / "other-source"
    elsewhere.mkdir()
    assert jit_cache.copy_in("triton", jit_cache.key("triton", "1" * 64, TOOLS), elsewhere, None) == 0
    assert _files(elsewhere) == {}


def test_a_run_replaces_its_entry_and_a_run_that_left_nothing_keeps_it(tmp_path):
    key = jit_cache.key("triton", "0" * 64, TOOLS)
    jit_cache.copy_out("triton", key, _run_folder(tmp_path))
    second = tmp_path / "second"
    (second / ".triton").mkdir(parents=True)
    (second / ".triton" / "new.bin").write_bytes(b"new")
    assert jit_cache.copy_out("triton", key, second)
    assert _files(cache.entry(jit_cache.KIND, key)) == {".triton/new.bin": b"new"}
    empty = tmp_path / "empty"
    empty.mkdir()
    assert not jit_cache.copy_out("triton", key, empty)
    assert _files(cache.entry(jit_cache.KIND, key)) == {".triton/new.bin": b"new"}
    assert not list(cache.entry(jit_cache.KIND, key).parent.glob(".*"))  # no staging folder left


def test_links_fifos_and_odd_names_are_never_followed_nor_copied(tmp_path):
    secret = tmp_path / "outside" / "secret"
    secret.parent.mkdir()
    secret.write_text("the grader's secret")
    run = _run_folder(tmp_path)
    (run / ".triton" / "link").symlink_to(secret)
    (run / ".triton" / "folder-link").symlink_to(secret.parent)
    (run / ".triton" / "..x").write_text("a name that only looks like a parent")
    os.mkfifo(run / ".triton" / "fifo")
    key = jit_cache.key("triton", "0" * 64, TOOLS)
    assert jit_cache.copy_out("triton", key, run)
    kept = _files(cache.entry(jit_cache.KIND, key))
    assert set(kept) == {".triton/abc/kernel.cubin", ".triton/abc/__grp__kernel.json", ".triton/..x"}
    assert b"the grader's secret" not in b"".join(kept.values())
    for name in (".", "..", "", "a/b", "a\0b", "x" * 256):
        assert not jit_cache._plain_name(name)


def test_a_cache_folder_that_is_a_link_is_not_followed(tmp_path):
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "file").write_text("not the run's")
    run = tmp_path / "run"
    run.mkdir()
    (run / ".triton").symlink_to(outside)
    assert not jit_cache.copy_out("triton", jit_cache.key("triton", "0" * 64, TOOLS), run)


def test_a_file_named_like_another_digest_stays_inside_its_own_entry(tmp_path):
    mine, theirs = (jit_cache.key("triton", digest * 64, TOOLS) for digest in "01")
    other = tmp_path / "theirs"
    (other / ".triton").mkdir(parents=True)
    (other / ".triton" / "honest.bin").write_bytes(b"honest")
    jit_cache.copy_out("triton", theirs, other)
    run = _run_folder(tmp_path)
    (run / ".triton" / theirs).mkdir()
    (run / ".triton" / theirs / ".triton").mkdir()
    (run / ".triton" / theirs / ".triton" / "honest.bin").write_bytes(b"poisoned")
    (run / ".triton" / jit_cache.KIND).mkdir()
    assert jit_cache.copy_out("triton", mine, run)
    assert _files(cache.entry(jit_cache.KIND, theirs)) == {".triton/honest.bin": b"honest"}
    assert f".triton/{theirs}/.triton/honest.bin" in _files(cache.entry(jit_cache.KIND, mine))


def test_a_track_copies_only_its_own_cache_folders(tmp_path):
    run = _run_folder(tmp_path)
    (run / ".cupy").mkdir()
    (run / ".cupy" / "kernel.cubin").write_bytes(b"cupy")
    key = jit_cache.key("cupy", "0" * 64, TOOLS)
    assert jit_cache.copy_out("cupy", key, run)
    assert _files(cache.entry(jit_cache.KIND, key)) == {".cupy/kernel.cubin": b"cupy"}
    assert not jit_cache.copy_out("cuda", key, run)  # a track without JIT caches


@pytest.mark.parametrize("bound", ["bytes", "files", "depth"])
def test_a_tree_beyond_the_bounds_is_not_kept(tmp_path, monkeypatch, bound):
    monkeypatch.setattr(jit_cache, "MAX_BYTES", 4096)
    monkeypatch.setattr(jit_cache, "MAX_FILES", 20)
    monkeypatch.setattr(jit_cache, "MAX_DEPTH", 4)
    run = _run_folder(tmp_path)
    if bound == "bytes":
        with open(run / ".triton" / "huge", "wb") as file:
            file.truncate(1 << 30)  # sparse: a gigabyte that costs nothing to make
    elif bound == "files":
        for i in range(30):
            (run / ".triton" / f"f{i}").write_bytes(b"x")
    else:
        deep = run / ".triton"
        for i in range(8):
            deep = deep / f"d{i}"
        deep.mkdir(parents=True)
        (deep / "f").write_bytes(b"x")
    key = jit_cache.key("triton", "0" * 64, TOOLS)
    assert not jit_cache.copy_out("triton", key, run)
    assert not cache.entry(jit_cache.KIND, key).exists()


def test_an_entry_is_evicted_with_the_builds(tmp_path):
    key = jit_cache.key("triton", "0" * 64, TOOLS)
    jit_cache.copy_out("triton", key, _run_folder(tmp_path))
    assert cache._size(cache.entry(jit_cache.KIND, key)) == len(b"\x7fELF cubin") + len('{"child_paths": {}}')
    assert cache.evict(limit=0) == 1 and not cache.entry(jit_cache.KIND, key).exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="only root gives a run's files to its uid")
def test_the_copied_cache_belongs_to_the_runs_uid(tmp_path):
    key = jit_cache.key("triton", "0" * 64, TOOLS)
    jit_cache.copy_out("triton", key, _run_folder(tmp_path))
    fresh = tmp_path / "next"
    fresh.mkdir()
    jit_cache.copy_in("triton", key, fresh, 61999)
    owners = {path.stat().st_uid for path in (fresh / ".triton").rglob("*")} | {(fresh / ".triton").stat().st_uid}
    assert owners == {61999}


def test_triton_finds_in_the_next_run_what_an_earlier_run_of_the_same_source_compiled(tmp_path, monkeypatch):
    """Triton's group file names a compiled kernel's files by absolute path, in the run's own folder: once that
    folder is gone, Triton's own lookup in the next run's folder finds the files copied there."""
    triton_cache = pytest.importorskip("triton.runtime.cache")
    first, second = tmp_path / "first", tmp_path / "second"
    monkeypatch.setenv("TRITON_CACHE_DIR", str(first / ".triton"))
    compiled = triton_cache.FileCacheManager("kernelhash")
    group = {name: compiled.put(data, name) for name, data in (("add.cubin", b"\x7fELF cubin"), ("add.json", "{}"))}
    compiled.put_group("add.json", group)
    key = jit_cache.key("triton", "0" * 64, TOOLS)
    assert jit_cache.copy_out("triton", key, first)
    shutil.rmtree(first)
    second.mkdir()
    assert jit_cache.copy_in("triton", key, second, None) == 3
    monkeypatch.setenv("TRITON_CACHE_DIR", str(second / ".triton"))
    found = triton_cache.FileCacheManager("kernelhash").get_group("add.json")
    assert found == {name: str(second / ".triton" / "kernelhash" / name) for name in ("add.cubin", "add.json")}
    assert open(found["add.cubin"], "rb").read() == b"\x7fELF cubin"


def test_a_group_file_that_is_not_tritons_json_is_copied_as_it_was(tmp_path):
    run = _run_folder(tmp_path)
    odd = {"__grp__a.json": b"not json", "__grp__b.json": b'{"child_paths": [1, 2]}', "__grp__c.json": b"[]"}
    for name, data in odd.items():
        (run / ".triton" / "abc" / name).write_bytes(data)
    key = jit_cache.key("triton", "0" * 64, TOOLS)
    assert jit_cache.copy_out("triton", key, run)
    fresh = tmp_path / "next"
    fresh.mkdir()
    jit_cache.copy_in("triton", key, fresh, None)
    assert {name: (fresh / ".triton" / "abc" / name).read_bytes() for name in odd} == odd
