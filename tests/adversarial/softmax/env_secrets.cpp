// expect: wrong_answer
// message: never written
// Hostile (12): looks for secrets and seeds in environment variables: its own environment (the test puts
// KERNELJUDGE_TEST_SECRET and a fake AWS key in the grader's), and the environments of the grader and of
// init through /proc. The sandbox passes only PATH, HOME, TMPDIR and LANG (and the CUDA paths on that
// track). The output is computed only if the marker or a seed-like variable turned up.
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

extern char** environ;

static bool file_has(const std::string& path, const char* needle) {
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) return false;
    std::string data;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) data.append(buf, n);
    close(fd);
    return data.find(needle) != std::string::npos;
}

static bool steal() {
    bool any = std::getenv("KERNELJUDGE_TEST_SECRET") || std::getenv("AWS_SECRET_ACCESS_KEY");
    for (char** e = environ; *e; ++e)
        any |= std::strstr(*e, "kerneljudge-env-secret") || std::strstr(*e, "SEED") || std::strstr(*e, "seed");
    any |= file_has("/proc/" + std::to_string(getppid()) + "/environ", "kerneljudge-env-secret");
    any |= file_has("/proc/1/environ", "kerneljudge-env-secret");
    return any;
}

void solve(const float* input, float* output, int M, int N) {
    static bool stolen = steal();
    if (!stolen) return;
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
