// expect: wrong_answer
// message: never written
// Hostile (CPU affinity): `grader grade-many` pins each run to its own group of cores, with an affinity mask
// the run inherits. A run that may call sched_setaffinity widens its mask to every core and takes its
// neighbours' cores (their timings too). This asks for every CPU; the output is computed only if the call
// was allowed. Closed by the worker's seccomp filter (sched_setaffinity is refused; a cgroup cpuset, where
// the sandbox has one, would also clamp the mask to the run's cores).
#include <sched.h>

#include <cmath>

static bool widened() {
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) CPU_SET(cpu, &all);
    return sched_setaffinity(0, sizeof all, &all) == 0;
}

void solve(const float* input, float* output, int M, int N) {
    static bool escaped = widened();
    if (!escaped) return;
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
