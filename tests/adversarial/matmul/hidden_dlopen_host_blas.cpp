// expect: runtime_error
// message: cannot open shared object file
// Hostile (rules): loads a BLAS from the host and calls its sgemm_. It imports neither dlopen nor dlsym (the
// compile stage's symbol scan finds nothing): it reads libc's own symbol table from the file /proc/self/maps
// names and calls libc's dlopen and dlsym at their addresses. It asks for the grader's own PyTorch
// (libtorch_cpu.so, which exports sgemm_; the suite puts that library's folder in place of the marker below),
// then system BLAS libraries by name. The minimal root has none of them, so every load fails with the loader's
// "cannot open shared object file", which the program prints before it aborts: runtime_error, with that text.
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using dlopen_fn = void* (*)(const char*, int);
using dlsym_fn = void* (*)(void*, const char*);
using dlerror_fn = char* (*)();
using sgemm_fn = void (*)(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
                          const int*, const float*, const int*, const float*, float*, const int*);

static const char* TORCH_LIB = "KERNELJUDGE_HOST_TORCH_LIB/libtorch_cpu.so";

// libc's path and load address, from the first mapping of libc.so.6 (offset 0).
static bool find_libc(std::string& path, uintptr_t& base) {
    FILE* maps = std::fopen("/proc/self/maps", "r");
    if (!maps) return false;
    char line[4096];
    bool found = false;
    while (std::fgets(line, sizeof line, maps)) {
        unsigned long start, offset;
        char file[4096] = "";
        if (std::sscanf(line, "%lx-%*lx %*s %lx %*s %*s %4095s", &start, &offset, file) == 3 && offset == 0 &&
            std::strstr(file, "/libc.so.6")) {
            path = file;
            base = start;
            found = true;
            break;
        }
    }
    std::fclose(maps);
    return found;
}

// The address of `name` in libc's dynamic symbol table (the file's section headers), or null.
static void* libc_symbol(const char* name) {
    std::string path;
    uintptr_t base = 0;
    if (!find_libc(path, base)) return nullptr;
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) return nullptr;
    struct stat info;
    fstat(fd, &info);
    auto* file = static_cast<const unsigned char*>(mmap(nullptr, info.st_size, PROT_READ, MAP_PRIVATE, fd, 0));
    close(fd);
    if (file == MAP_FAILED) return nullptr;
    auto* header = reinterpret_cast<const Elf64_Ehdr*>(file);
    auto* sections = reinterpret_cast<const Elf64_Shdr*>(file + header->e_shoff);
    void* found = nullptr;
    for (int i = 0; i < header->e_shnum && !found; ++i) {
        if (sections[i].sh_type != SHT_DYNSYM) continue;
        auto* symbols = reinterpret_cast<const Elf64_Sym*>(file + sections[i].sh_offset);
        auto* names = reinterpret_cast<const char*>(file + sections[sections[i].sh_link].sh_offset);
        for (size_t s = 0; s < sections[i].sh_size / sizeof(Elf64_Sym); ++s) {
            if (symbols[s].st_value && ELF64_ST_TYPE(symbols[s].st_info) == STT_FUNC &&
                std::strcmp(names + symbols[s].st_name, name) == 0) {
                found = reinterpret_cast<void*>(base + symbols[s].st_value);
                break;
            }
        }
    }
    munmap(const_cast<unsigned char*>(file), info.st_size);
    return found;
}

static sgemm_fn host_sgemm() {
    auto open_library = reinterpret_cast<dlopen_fn>(libc_symbol("dlopen"));
    auto find = reinterpret_cast<dlsym_fn>(libc_symbol("dlsym"));
    auto error = reinterpret_cast<dlerror_fn>(libc_symbol("dlerror"));
    if (!open_library || !find || !error) {
        std::fprintf(stderr, "could not find dlopen in libc's symbol table\n");
        std::abort();
    }
    const char* candidates[] = {TORCH_LIB, "libopenblas.so.0", "libblas.so.3", "libmkl_rt.so"};
    for (const char* name : candidates) {
        void* library = open_library(name, 2 /* RTLD_NOW */);
        if (!library) {
            std::fprintf(stderr, "%s\n", error());
            continue;
        }
        if (void* sgemm = find(library, "sgemm_")) return reinterpret_cast<sgemm_fn>(sgemm);
    }
    std::abort();  // the loader's last words above: no host BLAS could be loaded
}

void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static sgemm_fn sgemm = host_sgemm();
    const float one = 1.0f, zero = 0.0f;
    // Row-major C = A B is column-major C^T = B^T A^T.
    sgemm("N", "N", &N, &M, &K, &one, B, &N, A, &K, &zero, C, &N);
}
