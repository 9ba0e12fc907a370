// expect: wrong_answer
// message: never written
// Hostile (other users' work): looks for what other runs and the grader keep on the host: the other run
// folders and the supervisors' trusted folders beside its own (`..`), the build cache with every user's
// compiled library and compile log (the usual places of KERNELJUDGE_CACHE), and the working folders and open
// files of every other process it can name in /proc (cwd, root, fd). The output is computed only if it
// could list or read any of it. Closed by folder modes (runs base 0711, trusted folders 0700 of the grader,
// the cache private to the grader), the run's own uid, a non-dumpable supervisor and the PID namespace.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

static bool lists(const std::string& path) {
    DIR* d = opendir(path.c_str());
    if (!d) return false;
    int seen = 0;
    while (dirent* e = readdir(d))
        if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) ++seen;
    closedir(d);
    return seen > 0;
}

static bool reads(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) return false;
    char c;
    bool ok = read(fd, &c, 1) == 1;
    close(fd);
    return ok;
}

static bool other_processes() {
    bool any = false;
    const int self = getpid();
    DIR* proc = opendir("/proc");
    if (!proc) return false;
    while (dirent* e = readdir(proc)) {
        int pid = std::atoi(e->d_name);
        if (pid <= 1 || pid == self) continue;
        std::string base = "/proc/" + std::string(e->d_name);
        any |= lists(base + "/cwd") || lists(base + "/root/var/lib/kerneljudge/runs") || lists(base + "/fd");
    }
    closedir(proc);
    return any;
}

static bool stolen() {
    // In a container `..` of /work is the image's own root, not the host's folder of runs: listing it steals
    // nothing, so that one look is the local sandbox's alone (the host's runs folder is looked for by name).
    const bool in_container = access("/.dockerenv", F_OK) == 0;
    bool any = (!in_container && lists("..")) || lists("/var/lib/kerneljudge/runs");
    for (const char* cache : {"/root/.cache/kerneljudge", "/var/cache/kerneljudge", "/var/lib/kerneljudge/cache",
                              "/home/kerneljudge/.cache/kerneljudge", "/tmp/kerneljudge-cache"}) {
        any |= lists(std::string(cache) + "/builds") || lists(std::string(cache) + "/supervised");
    }
    any |= reads("../progress") || reads("../../progress");
    return any | other_processes();
}

void solve(const float* input, float* output, int M, int N) {
    static bool escaped = stolen();
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
