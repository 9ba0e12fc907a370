// expect: wrong_answer|runtime_error
// message: one_element
// Hostile (11): fills the disk past the run's 8 GiB limit where the watchdog does not look: it creates files
// in its working directory, unlinks them at once and keeps them open, then reserves 3 GiB of real blocks in
// each of three (fallocate: instant, no data written), 9 GiB in all. The output is computed only if all of
// it was granted and the run is still alive 3 s later, so today it is accepted. The space comes back when
// the process dies. The working directory is now a tmpfs of the run's disk limit (grader/sandbox/workspace.py):
// the reservation fails with ENOSPC and the output stays unwritten (wrong_answer); a watchdog kill is also fine.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <string>
#include <vector>

static bool fill() {
    signal(SIGXFSZ, SIG_IGN);
    static std::vector<int> held;
    for (int i = 0; i < 3; ++i) {
        std::string path = "kerneljudge-hidden-" + std::to_string(i);
        int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0) return false;
        unlink(path.c_str());
        held.push_back(fd);
        if (fallocate(fd, 0, 0, 3ll << 30) != 0) return false;
    }
    sleep(3);
    return true;
}

void solve(const float* input, float* output, int M, int N) {
    static bool survived = fill();
    if (!survived) return;
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
