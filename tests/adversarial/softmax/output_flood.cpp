// expect: wrong_answer
// message: never written
// Hostile (11): floods its output streams. stdout and stderr are files in the grader's temp dir (not the
// run's working directory), limited only by RLIMIT_FSIZE (4 GiB each) and not counted by the disk watchdog;
// it reserves 3 GiB of real blocks in each (fallocate: instant, no data written). The output is computed
// only if both reservations succeeded, so today it is accepted. With stdout/stderr as pipes read into a
// bounded tail, fallocate fails and the output stays unwritten.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>

void solve(const float* input, float* output, int M, int N) {
    static bool flooded = [] {
        signal(SIGXFSZ, SIG_IGN);
        return fallocate(1, 0, 0, 3ll << 30) == 0 && fallocate(2, 0, 0, 3ll << 30) == 0;
    }();
    if (!flooded) return;
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
