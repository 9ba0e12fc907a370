// expect: wrong_answer
// message: never written
// Hostile (12): reads files outside its working directory: the sentinel secrets the test planted (mode
// 0600, root's) under /tmp (hidden by the sandbox's private /tmp) and under /var/lib (not hidden: the uid
// switch must stop it), the grader's environment and memory through /proc, root's home, /etc/shadow. The
// output is computed only if any of them gave up a byte. (The problem's reference.py and the solutions are
// readable, by design: they are public, and no expected output exists anywhere the sandbox can see.)
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <string>

static bool readable(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) return false;
    char c;
    bool ok = read(fd, &c, 1) == 1;
    close(fd);
    return ok;
}

static bool steal() {
    const std::string parent = std::to_string(getppid());
    const char* paths[] = {"/tmp/kerneljudge-sentinel/secret", "/var/lib/kerneljudge-sentinel/secret",
                           "/etc/shadow", "/root/.bash_history", "/root/.cache/kerneljudge"};
    bool any = false;
    for (const char* p : paths) any |= readable(p);
    // In a container the parent and pid 1 are the container's own init (docker-init, as the run's uid, with the
    // container's environment and nothing of the grader's, whose processes are not in its PID namespace at all):
    // reading them steals nothing, so these looks are the local sandbox's alone.
    if (access("/.dockerenv", F_OK) != 0) {
        any |= readable("/proc/1/environ");
        any |= readable("/proc/" + parent + "/environ");
        any |= readable("/proc/" + parent + "/mem");
    }
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
