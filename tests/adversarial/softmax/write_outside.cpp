// expect: wrong_answer
// message: never written
// Hostile (12): writes files outside its working directory: into a world-writable (1777) folder the test
// made on the root filesystem, /run/lock and /var/lock (world-writable on most hosts), the runs folder
// above its working directory, /etc and root's home. The root filesystem is read-only in the sandbox and
// the rest belongs to root. The output is computed only if one of those files could be created. It also
// writes to /tmp, /var/tmp and /dev/shm, which succeeds inside the sandbox's private tmpfs and must not
// reach the host: the test checks that no kerneljudge-escape file exists anywhere it looks.
#include <fcntl.h>
#include <unistd.h>

#include <cmath>

static bool create(const char* path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return false;
    bool ok = write(fd, "escaped\n", 8) == 8;
    close(fd);
    return ok;
}

static bool escape() {
    create("/tmp/kerneljudge-escape");
    create("/var/tmp/kerneljudge-escape");
    create("/dev/shm/kerneljudge-escape");
    const char* outside[] = {"/var/lib/kerneljudge-sentinel/open/kerneljudge-escape", "/run/lock/kerneljudge-escape",
                             "/var/lock/kerneljudge-escape", "../kerneljudge-escape", "/etc/kerneljudge-escape",
                             "/root/kerneljudge-escape"};
    bool any = false;
    for (const char* p : outside) any |= create(p);
    return any;
}

void solve(const float* input, float* output, int M, int N) {
    static bool escaped = escape();
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
