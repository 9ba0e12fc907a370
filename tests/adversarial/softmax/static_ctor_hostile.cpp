// expect: wrong_answer
// message: never written
// Hostile (13): does its damage in a static constructor, which runs when the harness loads the library,
// before any test: leaves a daemon behind (double fork, new session) that retries the escapes for a minute,
// connects to the test's listener on 127.0.0.1:47111, reads the sentinel secrets, writes files outside its
// working directory, and reads environment variables. The output is computed only if anything worked;
// the test checks that the daemon is gone after the run and that nothing reached the listener or the disk.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>

static bool connect_listener() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(47111);
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    const char line[] = "kerneljudge-escape: static constructor\n";
    bool ok = connect(fd, (sockaddr*)&a, sizeof a) == 0 && send(fd, line, sizeof line - 1, 0) > 0;
    close(fd);
    return ok;
}

static bool readable(const char* path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return false;
    char c;
    bool ok = read(fd, &c, 1) == 1;
    close(fd);
    return ok;
}

static bool create(const char* path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return false;
    close(fd);
    return true;
}

static bool attempt() {
    bool any = connect_listener();
    any |= readable("/tmp/kerneljudge-sentinel/secret") | readable("/var/lib/kerneljudge-sentinel/secret");
    any |= create("/var/lib/kerneljudge-sentinel/open/kerneljudge-escape-ctor") |
           create("/run/lock/kerneljudge-escape-ctor") | create("../kerneljudge-escape-ctor");
    any |= std::getenv("KERNELJUDGE_TEST_SECRET") != nullptr;
    return any;
}

static bool g_escaped = false;

__attribute__((constructor)) static void on_load() {
    g_escaped = attempt();
    if (fork() == 0) {  // the daemon: out of the process group, orphaned, retrying for a minute
        setsid();
        if (fork() != 0) _exit(0);
        for (int i = 0; i < 60; ++i) {
            attempt();
            sleep(1);
        }
        _exit(0);
    }
}

void solve(const float* input, float* output, int M, int N) {
    if (!g_escaped) return;
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
