// expect: wrong_answer
// message: never written
// Hostile (12): reads the grader's database: the test stores a submission whose source holds a marker in a
// database made by grader.storage under /var/lib/kerneljudge-sentinel/data (as a shared judge would set
// KERNELJUDGE_DATA), and this looks for the marker there (the .db and its WAL) and at the default places.
// The output is computed only if the marker was found.
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <string>

static bool has_marker(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) return false;
    std::string data;
    char buf[1 << 16];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0 && data.size() < (64u << 20)) data.append(buf, n);
    close(fd);
    return data.find("kerneljudge-db-secret") != std::string::npos;
}

static bool steal() {
    const char* dbs[] = {"/var/lib/kerneljudge-sentinel/data/kerneljudge.db",
                         "/root/.local/share/kerneljudge/kerneljudge.db", "/var/lib/kerneljudge/kerneljudge.db"};
    bool any = false;
    for (const char* db : dbs) any |= has_marker(db) || has_marker(std::string(db) + "-wal");
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
