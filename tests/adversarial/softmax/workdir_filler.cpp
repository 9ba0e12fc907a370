// expect: runtime_error
// message: disk limit exceeded
// Hostile (11): fills its working directory (where it starts: the folder that outlives the run; $TMPDIR too in
// the local sandbox, the container's own small /tmp in a container): four files of almost 4 GiB each (the
// per-file RLIMIT_FSIZE), 16 GiB in all, twice the run's disk limit. The files are sparse, so this costs no
// real disk here, but the watchdog counts file sizes, as it must for a real fill. Then it waits 3 s for the
// watchdog (which looks every 0.5 s); the output is computed only if it is still alive after that.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <string>

static bool fill() {
    signal(SIGXFSZ, SIG_IGN);
    for (int i = 0; i < 4; ++i) {
        std::string path = "./kerneljudge-fill-" + std::to_string(i);
        int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) return false;
        bool ok = ftruncate(fd, (4ll << 30) - (1ll << 20)) == 0 && pwrite(fd, "x", 1, 0) == 1;
        close(fd);
        if (!ok) return false;
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
