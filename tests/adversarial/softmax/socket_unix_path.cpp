// expect: wrong_answer
// message: never written
// Closed on the CPU track: the worker's seccomp filter refuses socket() of every family.
// Hostile (12): connects to a Unix-domain socket bound to a path on the host, which the test listens on
// (mode 0666, as many daemons' sockets are), and sends a line. The output is computed only if that worked;
// the test checks the listener heard nothing.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmath>
#include <cstring>

static bool reach(const char* path) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path, sizeof a.sun_path - 1);
    const char line[] = "kerneljudge-escape: unix\n";
    bool ok = connect(fd, (sockaddr*)&a, sizeof a) == 0 &&
              send(fd, line, sizeof line - 1, 0) == (ssize_t)(sizeof line - 1);
    close(fd);
    return ok;
}

void solve(const float* input, float* output, int M, int N) {
    static bool escaped = reach("/var/lib/kerneljudge-sentinel/listener.sock");
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
