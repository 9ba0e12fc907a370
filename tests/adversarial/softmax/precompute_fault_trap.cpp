// expect: rejected|wrong_answer
// mode: submit
// message: block_1k_4k
// Cheat (precompute before the timer): on the block_1k_4k benchmark, after each call solve write-protects the
// output's pages and arms a SIGSEGV handler. In-process, the judge's own NaN fill of the next call then
// faults into that handler, in the judge's thread, after the inputs were written and before its clock starts:
// the handler lifts the protection and computes the answer aside; solve only copies it. With the supervisor,
// the poison is written through the supervisor's own mapping of the buffers: nothing faults in the worker,
// solve finds no answer ready and leaves the output unwritten, so the audited samples are wrong
// (wrong_answer) and the empty calls fall below the floor (rejected). The first call is honest.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

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

static const float* g_input;
static float* g_output;
static int g_M, g_N;
static char *g_lo, *g_hi;  // the protected, page-aligned part of the output
static std::vector<float> g_answer;
static volatile sig_atomic_t g_ready = 0;

static void on_fault(int, siginfo_t* info, void*) {
    char* at = static_cast<char*>(info->si_addr);
    if (at < g_lo || at >= g_hi) _exit(66);  // a real crash
    mprotect(g_lo, g_hi - g_lo, PROT_READ | PROT_WRITE);
    softmax(g_input, g_answer.data(), g_M, g_N);  // the inputs are already there
    g_ready = 1;
}

static void arm() {
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    g_lo = (char*)(((uintptr_t)g_output + page - 1) & ~(page - 1));
    g_hi = (char*)(((uintptr_t)(g_output + (size_t)g_M * g_N)) & ~(page - 1));
    if (g_hi > g_lo) mprotect(g_lo, g_hi - g_lo, PROT_READ);
}

void solve(const float* input, float* output, int M, int N) {
    static bool armed = false;
    if (M != 1024 || N != 4096) {
        softmax(input, output, M, N);
        return;
    }
    if (!armed) {
        armed = true;
        g_input = input, g_output = output, g_M = M, g_N = N;
        g_answer.resize((size_t)M * N);
        struct sigaction action {};
        action.sa_sigaction = on_fault;
        action.sa_flags = SA_SIGINFO;
        sigaction(SIGSEGV, &action, nullptr);
        softmax(input, output, M, N);
        arm();
        return;
    }
    mprotect(g_lo, g_hi - g_lo, PROT_READ | PROT_WRITE);
    if (g_ready) std::memcpy(output, g_answer.data(), g_answer.size() * sizeof(float));
    g_ready = 0;
    arm();
}
