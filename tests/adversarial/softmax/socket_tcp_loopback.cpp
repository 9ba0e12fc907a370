// expect: wrong_answer
// message: never written
// Hostile (12): opens a TCP socket to the listener the test runs on 127.0.0.1:47111 (and [::1]:47111) and
// sends a line. The sandbox's network namespace has no route anywhere, loopback included. The output is
// computed only if a connection was made and the line sent; the test checks the listener heard nothing.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstring>

static bool reach(int family) {
    int fd = socket(family, SOCK_STREAM, 0);
    if (fd < 0) return false;
    bool ok = false;
    if (family == AF_INET) {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(47111);
        inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
        ok = connect(fd, (sockaddr*)&a, sizeof a) == 0;
    } else {
        sockaddr_in6 a{};
        a.sin6_family = AF_INET6;
        a.sin6_port = htons(47111);
        inet_pton(AF_INET6, "::1", &a.sin6_addr);
        ok = connect(fd, (sockaddr*)&a, sizeof a) == 0;
    }
    const char line[] = "kerneljudge-escape: tcp\n";
    ok = ok && send(fd, line, sizeof line - 1, 0) == (ssize_t)(sizeof line - 1);
    close(fd);
    return ok;
}

void solve(const float* input, float* output, int M, int N) {
    static bool escaped = reach(AF_INET) | reach(AF_INET6);
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
