// expect: runtime_error
// memory_limit_gib: 2
// Hostile (11): allocates and touches host memory, 256 MiB at a time, up to 64 GiB. The test grades it with
// the harness's memory limit lowered to 2 GiB (memory_limit_gib; the real 32 GiB is more than a CI machine
// has, see docs/security.md). The output is computed only if all 64 GiB were granted; a refused allocation
// aborts. So the run must die: by the memory watchdog ("memory limit exceeded"), or by its own abort() once
// RLIMIT_AS refuses more (CPU track). It volunteers to be the OOM killer's first choice (oom_score_adj 1000),
// which the sandbox should set itself.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

static bool hog() {
    if (FILE* f = std::fopen("/proc/self/oom_score_adj", "w")) {
        std::fputs("1000", f);
        std::fclose(f);
    }
    const size_t chunk = size_t(256) << 20;
    for (size_t got = 0; got < (size_t(64) << 30); got += chunk) {
        char* p = static_cast<char*>(std::malloc(chunk));
        if (!p) std::abort();
        std::memset(p, 1, chunk);
    }
    return true;
}

void solve(const float* input, float* output, int M, int N) {
    static bool granted = hog();
    if (!granted) return;
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
