"""Shared by the GPU tests of the CUDA supervisor: small CUDA libraries (a copy, a copy that then keeps the GPU
busy, a timer patched through the worker's GOT), a run of one of them under the real supervisor and sandbox, and
the two clocks of its records. Needs a CUDA GPU and nvcc where it is used (tests marked gpu). The row audits of a
copy (row_audits) are read the same way for both supervisors.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from grader import tracks
from grader.judge import row_audit, supervisor_records
from grader.run import binaries, supervised
from grader.run import inputs as gen
from grader.sandbox import local as sandbox
from grader.toolchain import detect

# The copy, then one thread keeps the GPU busy SPIN_NS by its global timer. BEFORE_LAUNCH is empty for an honest
# kernel; TIMER_PATCH defines it to patch the worker's timer first.
SPIN_COPY = r"""
#include <cuda_runtime.h>
__global__ void copy_then_spin(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
    if (i != 0) return;
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); while (now - start < SPIN_NS);
}
extern "C" void kerneljudge_entry(void** p, const int* n) {
    BEFORE_LAUNCH
    copy_then_spin<<<(n[0] + 255) / 256, 256>>>((const float*)p[0], (float*)p[1], n[0]);
}
"""
HONEST = "#define BEFORE_LAUNCH\n"

# The worker's GOT slot for SYMBOL pointed at `scaled`, a function HOOK defines (dl_iterate_phdr, no dlopen/dlsym).
GOT_PATCH = r"""
#include <cuda_runtime.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>
#include <algorithm>
#include <cstring>
HOOK
static int patch(dl_phdr_info* info, size_t, void*) {
    const ElfW(Dyn)* dyn = nullptr;
    for (int i = 0; i < info->dlpi_phnum; ++i)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn)*)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn) return 1;
    ElfW(Addr) jmprel = 0, symtab = 0, strtab = 0; size_t size = 0;
    for (; dyn->d_tag != DT_NULL; ++dyn) {
        if (dyn->d_tag == DT_JMPREL) jmprel = dyn->d_un.d_ptr;
        if (dyn->d_tag == DT_PLTRELSZ) size = dyn->d_un.d_val;
        if (dyn->d_tag == DT_SYMTAB) symtab = dyn->d_un.d_ptr;
        if (dyn->d_tag == DT_STRTAB) strtab = dyn->d_un.d_ptr;
    }
    auto fix = [&](ElfW(Addr) p) { return p && p < info->dlpi_addr ? p + info->dlpi_addr : p; };
    const ElfW(Rela)* r = (const ElfW(Rela)*)fix(jmprel);
    const ElfW(Sym)* syms = (const ElfW(Sym)*)fix(symtab);
    const char* names = (const char*)fix(strtab);
    for (size_t k = 0; r && k < size / sizeof(ElfW(Rela)); ++k) {
        if (std::strcmp(names + syms[ELF64_R_SYM(r[k].r_info)].st_name, "SYMBOL") != 0) continue;
        void** slot = (void**)(info->dlpi_addr + r[k].r_offset);
        long page = sysconf(_SC_PAGESIZE);
        mprotect((void*)((uintptr_t)slot & ~(uintptr_t)(page - 1)), page, PROT_READ | PROT_WRITE);
        *slot = (void*)&scaled;
    }
    return 1;  // the first object is the worker itself
}
#define BEFORE_LAUNCH dl_iterate_phdr(patch, nullptr);
"""

# The worker's cudaEventElapsedTime patched to claim FORGED, an expression of what its events measured (`*ms`, in
# ms) and of how many times it was called (`calls`): a forged timer.
TIMER_PATCH = GOT_PATCH.replace("SYMBOL", "cudaEventElapsedTime").replace(
    "HOOK",
    """using ElapsedFn = cudaError_t (*)(float*, cudaEvent_t, cudaEvent_t);
static ElapsedFn real_elapsed = cudaEventElapsedTime;
static int calls = 0;
static cudaError_t scaled(float* ms, cudaEvent_t a, cudaEvent_t b) {
    cudaError_t e = real_elapsed(ms, a, b);
    ++calls;
    *ms = FORGED;
    return e;
}""",
)


def library_of(folder: Path, source: str) -> Path:
    (folder / "lib.cu").write_text(source)
    tools = detect()
    subprocess.run(
        [tools.nvcc, *tools.arch_flags, "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared", "-o",
         str(folder / "lib.so"), str(folder / "lib.cu")],
        check=True,
    )  # fmt: skip
    return folder / "lib.so"


def request_text(key: int, count: int, mode: str, rows: str = "rows 0 0") -> str:
    """One case "t" of `count` floats in and out; a benchmark's `rows`: its row audit's line (request.py)."""
    k0, k1 = gen.key_words(key)
    low, scale = gen.float32_bits(-1.0), gen.float32_bits(2.0)
    return (
        f"case t {mode.split()[0]} {k0:x} {k1:x} {' '.join(mode.split()[1:])}\nints 1 {count}\nbuffers 2\n"
        f"in f32 {count} {low} {scale}\nout f32 {count}\n" + (f"{rows}\n" if mode.startswith("bench") else "") + "end\n"
    )


def run(folder: Path, source: str, request: str) -> supervised.Result:
    library = library_of(folder, source)
    uid = sandbox.sandbox_uid()
    workdir = sandbox.new_workdir(uid)
    for path, name in ((binaries.worker("cuda"), "worker"), (library, "lib.so")):
        shutil.copyfile(path, workdir / name)
        (workdir / name).chmod(0o555)
    try:
        return supervised.run(
            request,
            0,
            "lib.so",
            workdir,
            sandbox_run=sandbox.run,
            limits=sandbox.Limits(wall_s=120, memory_bytes=16 << 30),
            uid=uid,
            env=tracks.get("cuda").environment(workdir),
            track="cuda",
        )
    finally:
        sandbox.remove_workdir(workdir)


def claim_and_judge(result: supervised.Result) -> tuple[float, float]:
    """(the worker's claimed median, the judge's clock's median), in ms."""
    parsed = supervisor_records.times(result.trusted, "t")
    assert parsed is not None
    judged = supervisor_records.judge_times_ms(result.trusted, "t")
    assert judged is not None, "no judge's clock record"
    return float(np.median([row[1] for row in parsed[1]])), float(np.median(judged))


def row_audits(
    trusted: Path, key: int, count: int, rows: int, width: int, drawn: int
) -> Iterator[tuple[dict[int, supervisor_records.Scan], np.ndarray, np.ndarray, np.ndarray]]:
    """For each of the 3 audited calls of a copy's row-audited benchmark "t" (its output, buffer 1, the input it
    was given, as [rows, width]): the supervisor's scan, the rows it kept, those rows of the input, the rows drawn
    (checked to be one of each run)."""
    audits = [int(w) for w in (trusted / "t.audits").read_text().split()]
    assert len(audits) == 3
    for call in audits:
        record = supervisor_records.audit_scan(trusted, f"t.a{call}")
        assert record is not None
        seed, scan = record
        picked = row_audit.drawn_rows(seed, rows, drawn).cpu().numpy()
        assert (picked // (rows // drawn) == np.arange(drawn)).all()
        kept = np.fromfile(trusted / f"t.a{call}.1.bin", dtype=np.float32).reshape(drawn, width)
        sent = gen.uniform(gen.tensor_seed(gen.call_seed(key, call), 0, 0), count, -1.0, 1.0).numpy()
        yield scan, kept, sent.reshape(rows, width)[picked], picked


def assert_a_copys_tests_kept(trusted: Path, key: int, count: int) -> None:
    """A copy's test "t" of two draws: each kept output is the input that draw was given, bit for bit the
    grader's generation; its input was checked in place, unchanged, and not kept; the two draws differ."""
    for draw in range(2):
        expected = gen.uniform(gen.tensor_seed(gen.call_seed(key, draw), 0, 0), count, -1.0, 1.0).numpy()
        got = np.fromfile(trusted / f"t.d{draw}.1.bin", dtype=np.float32)
        assert np.array_equal(got.view(np.uint32), expected.view(np.uint32))
        assert supervisor_records.input_changes(trusted, f"t.d{draw}") == {0: (0, -1)}
        assert not (trusted / f"t.d{draw}.0.bin").exists()
    assert (trusted / "t.d0.1.bin").read_bytes() != (trusted / "t.d1.1.bin").read_bytes()
