// expect: wrong_answer
// message: never written
// Hostile (state that outlives a run): SysV shared memory, a SysV message queue and semaphore set, and a
// POSIX message queue are kernel objects that stay after the process that made them is gone, so one run can
// leave data (an answer, a key) for the next submission of the same or another user. This creates one of
// each under a fixed key, and first looks for the ones an earlier run left. The output is computed only if
// any of that worked; the suite checks that no such object of the sandbox is left on the host. Closed by the
// worker's seccomp filter (every SysV and POSIX IPC call is refused) and the sandbox's IPC namespace.
#include <fcntl.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>

static const key_t KEY = 0x4b4a0017;

static bool leave_and_find() {
    bool any = shmget(KEY, 0, 0) >= 0 || msgget(KEY, 0) >= 0 || semget(KEY, 0, 0) >= 0;  // an earlier run's
    any |= shmget(KEY, 4096, IPC_CREAT | 0666) >= 0;
    any |= msgget(KEY, IPC_CREAT | 0666) >= 0;
    any |= semget(KEY, 1, IPC_CREAT | 0666) >= 0;
    long mq = syscall(SYS_mq_open, "kerneljudge-escape-mq", O_CREAT | O_RDWR, 0666, nullptr);
    any |= mq >= 0;
    return any;
}

void solve(const float* input, float* output, int M, int N) {
    static bool escaped = leave_and_find();
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
