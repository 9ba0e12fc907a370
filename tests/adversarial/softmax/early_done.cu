// expect: rejected|wrong_answer
// mode: submit
// Cheat (returns before its work is done): patches the worker's GOT slots for cudaDeviceSynchronize,
// cudaEventSynchronize and cudaEventElapsedTime (dl_iterate_phdr, no dlopen/dlsym), so the worker answers
// DONE while the kernel still runs and claims 1 ns per call; the answers are computed honestly, by a kernel
// that goes on after DONE. The judge's clock stops only when the worker's stream writes the DONE word, after
// the kernel on that stream, so the kernel's time is inside it (or the snapshot holds unfinished outputs), and
// a claim of 1 ns against it is a forged timer: rejected.
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

// The worker's own calls that wait for the device, and its timer, made to return at once.
static cudaError_t no_wait() { return cudaSuccess; }
static cudaError_t no_wait_event(cudaEvent_t) { return cudaSuccess; }
static cudaError_t tiny_elapsed(float* ms, cudaEvent_t, cudaEvent_t) {
    *ms = 0.001f;
    return cudaSuccess;
}
struct Patch {
    const char* name;
    void* fake;
    void** slot;
};
static Patch g_patches[] = {{"cudaDeviceSynchronize", (void*)&no_wait, nullptr},
                            {"cudaEventSynchronize", (void*)&no_wait_event, nullptr},
                            {"cudaEventElapsedTime", (void*)&tiny_elapsed, nullptr}};

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
            for (Patch& p : g_patches) {
                if (std::strcmp(name, p.name) != 0) continue;
                void** slot = (void**)(base + r[k].r_offset);
                const long page = sysconf(_SC_PAGESIZE);
                mprotect((void*)((uintptr_t)slot & ~(uintptr_t)(page - 1)), page, PROT_READ | PROT_WRITE);
                p.slot = slot;
            }
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
    for (Patch& p : g_patches)
        if (p.slot) *p.slot = p.fake;  // again on every call: lazy binding writes the real address back once
    softmax(input, output, M, N);
}
