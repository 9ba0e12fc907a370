// expect: rejected|wrong_answer
// mode: submit
// message: block_1k_4k
// Cheat (forged timer): tries every clock it can reach to make its calls look faster: the GOT slots of its
// own program for steady_clock::now and clock_gettime (what timer_patch does), the kernel's clocks
// (clock_settime, adjtimex to slow CLOCK_MONOTONIC), and the memory of every other process it can name in
// /proc (process_vm_writev, /proc/<pid>/mem, ptrace), where a timer of the judge could live. If any of that
// worked it computes honestly and the times lie; if none did it leaves the benchmark's outputs unwritten, so
// the verdict says the forgery failed: the audited samples are wrong (wrong_answer) or the empty calls
// are below the floor (rejected). The supervisor's clock (CLOCK_MONOTONIC_RAW, in a non-dumpable process of
// another uid) is out of its reach, the worker calls no clock at all, and the seccomp filter refuses the rest.
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/timex.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

static int g_patched = 0;

static long fake_clock() { return 0; }  // never called if nothing is patched

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
            if (std::strcmp(name, "_ZNSt6chrono3_V212steady_clock3nowEv") && std::strcmp(name, "clock_gettime"))
                continue;
            void** slot = (void**)(base + r[k].r_offset);
            const long page = sysconf(_SC_PAGESIZE);
            if (mprotect((void*)((uintptr_t)slot & ~(uintptr_t)(page - 1)), page, PROT_READ | PROT_WRITE) == 0) {
                *slot = (void*)&fake_clock;  // from now on the program's clock stands still
                ++g_patched;
            }
        }
    }
    return 1;  // the first object is the program itself
}

static bool other_process_writable() {
    const int self = getpid();
    bool any = false;
    DIR* proc = opendir("/proc");
    if (!proc) return false;
    while (dirent* e = readdir(proc)) {
        const int pid = std::atoi(e->d_name);
        if (pid <= 1 || pid == self) continue;
        char byte = 0;
        iovec local{&byte, 1}, remote{(void*)0x400000, 1};
        any |= process_vm_writev(pid, &local, 1, &remote, 1, 0) >= 0;
        int fd = open(("/proc/" + std::string(e->d_name) + "/mem").c_str(), O_RDWR);
        if (fd >= 0) any = true, close(fd);
        if (ptrace(PTRACE_ATTACH, pid, nullptr, nullptr) == 0) any = true, ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
    }
    closedir(proc);
    return any;
}

static bool forged() {
    dl_iterate_phdr(patch_main_program, nullptr);
    timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    bool any = g_patched > 0 || clock_settime(CLOCK_REALTIME, &now) == 0;
    timex slower{};
    slower.modes = ADJ_FREQUENCY;
    slower.freq = -(500l << 16);  // -500 ppm: CLOCK_MONOTONIC runs slow
    any |= adjtimex(&slower) >= 0;
    return any | other_process_writable();
}

static void softmax(const float* input, float* output, int M, int N) {
    for (int r = 0; r < M; ++r) {
        const float* x = input + (size_t)r * N;
        float* y = output + (size_t)r * N;
        float m = x[0];
        for (int i = 1; i < N; ++i) m = std::fmax(m, x[i]);
        double s = 0;
        for (int i = 0; i < N; ++i) s += std::exp((double)x[i] - m);
        for (int i = 0; i < N; ++i) y[i] = (float)(std::exp((double)x[i] - m) / s);
    }
}

void solve(const float* input, float* output, int M, int N) {
    if (M != 1024 || N != 4096) {
        softmax(input, output, M, N);
        return;
    }
    static bool worked = forged();
    if (worked) softmax(input, output, M, N);  // honest work, lying times
}
