// expect: wrong_answer
// message: never written
// Hostile (11): fills the temp dirs: writes 1 MiB blocks to /tmp, /var/tmp and /dev/shm until they are
// full. In the sandbox each is a private 64 MiB tmpfs that disappears with the run, so the fill stops at
// 192 MiB. The output is computed only if more than 1 GiB went in, so wrong_answer proves the fill was
// contained; the test also checks that no kerneljudge-escape-fill file appeared on the host.
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <vector>

static long long fill(const char* path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return 0;
    std::vector<char> block(1 << 20, 'x');
    long long total = 0;
    while (total < (4ll << 30)) {
        ssize_t n = write(fd, block.data(), block.size());
        if (n <= 0) break;
        total += n;
    }
    close(fd);
    return total;
}

void solve(const float* input, float* output, int M, int N) {
    static long long filled = fill("/tmp/kerneljudge-escape-fill") + fill("/var/tmp/kerneljudge-escape-fill") +
                              fill("/dev/shm/kerneljudge-escape-fill");
    if (filled < (1ll << 30)) return;  // the temp dirs held: leave the output unwritten
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
