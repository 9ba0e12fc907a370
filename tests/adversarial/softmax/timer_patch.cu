// expect: rejected
// mode: submit
// Closed on the CUDA track: the score is the judge's clock (the supervisor's own events); a claim half of it is a
// forged timer.
// Cheat (patches the timer): finds the harness executable's relocation for cudaEventElapsedTime
// (dl_iterate_phdr, no dlopen/dlsym) and points that GOT slot at its own function, which halves every time
// longer than what moving the last call's bytes at 3.0 TB/s takes, never going below that (so never below
// the physical floor of an H100 or H200). Every answer is computed honestly. Today: accepted, faster.
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
// A correct row softmax: one block of 256 threads per row (grid-stride over rows), float sums.
__global__ void softmax_rows(const float* x, float* y, int M, int N) {
    __shared__ float red[256];
    for (int r = blockIdx.x; r < M; r += gridDim.x) {
        const float* xr = x + (size_t)r * N;
        float* yr = y + (size_t)r * N;
        float m = -INFINITY;
        for (int i = threadIdx.x; i < N; i += blockDim.x) m = fmaxf(m, xr[i]);
        red[threadIdx.x] = m;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
            __syncthreads();
        }
        m = red[0];
        __syncthreads();
        float sum = 0.0f;
        for (int i = threadIdx.x; i < N; i += blockDim.x) sum += expf(xr[i] - m);
        red[threadIdx.x] = sum;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
            __syncthreads();
        }
        sum = red[0];
        __syncthreads();
        for (int i = threadIdx.x; i < N; i += blockDim.x) yr[i] = expf(xr[i] - m) / sum;
    }
}

static void softmax(const float* x, float* y, int M, int N, cudaStream_t stream = 0) {
    softmax_rows<<<M < 65536 ? M : 65536, 256, 0, stream>>>(x, y, M, N);
}

using ElapsedFn = cudaError_t (*)(float*, cudaEvent_t, cudaEvent_t);
static ElapsedFn real_elapsed = nullptr;
static void** g_slot = nullptr;
static double least_ms = 0;

static cudaError_t fake_elapsed(float* ms, cudaEvent_t start, cudaEvent_t end) {
    cudaError_t e = real_elapsed(ms, start, end);
    if (e == cudaSuccess && *ms > least_ms) *ms = (float)(*ms / 2 > least_ms ? *ms / 2 : least_ms);
    return e;
}

static int patch_main_program(dl_phdr_info* info, size_t, void*) {
    const ElfW(Addr) base = info->dlpi_addr;
    const ElfW(Dyn)* dyn = nullptr;
    for (int i = 0; i < info->dlpi_phnum; ++i)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn)*)(base + info->dlpi_phdr[i].p_vaddr);
    if (!dyn) return 1;
    ElfW(Addr) jmprel = 0, symtab = 0, strtab = 0, rela = 0;
    size_t jmprel_size = 0, rela_size = 0;
    for (; dyn->d_tag != DT_NULL; ++dyn) {
        switch (dyn->d_tag) {
            case DT_JMPREL: jmprel = dyn->d_un.d_ptr; break;
            case DT_PLTRELSZ: jmprel_size = dyn->d_un.d_val; break;
            case DT_RELA: rela = dyn->d_un.d_ptr; break;
            case DT_RELASZ: rela_size = dyn->d_un.d_val; break;
            case DT_SYMTAB: symtab = dyn->d_un.d_ptr; break;
            case DT_STRTAB: strtab = dyn->d_un.d_ptr; break;
        }
    }
    auto fix = [&](ElfW(Addr) p) { return p && p < base ? p + base : p; };
    jmprel = fix(jmprel), symtab = fix(symtab), strtab = fix(strtab), rela = fix(rela);
    const ElfW(Sym)* syms = (const ElfW(Sym)*)symtab;
    const char* names = (const char*)strtab;
    const ElfW(Addr) tables[2] = {jmprel, rela};
    const size_t sizes[2] = {jmprel_size, rela_size};
    for (int t = 0; t < 2; ++t) {
        const ElfW(Rela)* r = (const ElfW(Rela)*)tables[t];
        for (size_t k = 0; r && k < sizes[t] / sizeof(ElfW(Rela)); ++k) {
            const char* name = names + syms[ELF64_R_SYM(r[k].r_info)].st_name;
            if (std::strncmp(name, "cudaEventElapsedTime", 20) != 0) continue;
            void** slot = (void**)(base + r[k].r_offset);
            const long page = sysconf(_SC_PAGESIZE);
            mprotect((void*)((uintptr_t)slot & ~(uintptr_t)(page - 1)), page, PROT_READ | PROT_WRITE);
            g_slot = slot;
        }
    }
    return 1;
}

void solve(const float* input, float* output, int M, int N) {
    static bool searched = false;
    if (!searched) {
        dl_iterate_phdr(patch_main_program, nullptr);
        searched = true;
    }
    // Re-point the slot on every call: with lazy binding the first call through it resolves the symbol and
    // writes the real address back.
    if (g_slot && *g_slot != (void*)&fake_elapsed) {
        real_elapsed = (ElapsedFn)*g_slot;
        *g_slot = (void*)&fake_elapsed;
    }
    least_ms = 8.0 * M * N / 3.0e12 * 1e3;
    softmax(input, output, M, N);
}
