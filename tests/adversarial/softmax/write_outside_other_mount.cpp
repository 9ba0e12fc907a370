// expect: wrong_answer
// message: never written
// Hostile (12): writes a file into a world-writable folder on a filesystem mounted separately from the root,
// like /run/lock on most hosts (/run is a tmpfs there). The test mounts a small 1777 tmpfs at
// /var/lib/kerneljudge-sentinel/mnt to stand for it. The output is computed only if the file was created;
// the test checks it does not exist on the host afterwards.
#include <fcntl.h>
#include <unistd.h>

#include <cmath>

void solve(const float* input, float* output, int M, int N) {
    static bool escaped = [] {
        int fd = open("/var/lib/kerneljudge-sentinel/mnt/kerneljudge-escape", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) return false;
        bool ok = write(fd, "escaped\n", 8) == 8;
        close(fd);
        return ok;
    }();
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
