// expect: rejected|wrong_answer
// mode: submit
// Closed on the CPU track: audits are the supervisor's, in its own folder, drawn from the samples.
// Cheat (audits): on the block_1k_4k benchmark it computes only the first call (call 0, a warm-up call)
// and keeps that answer; every other timed call does nothing (0.1 us). When the next benchmark starts it
// forges the first one's audit: deletes the audited outputs, writes call 0's answer as out/block_1k_4k.a0.1.bin
// and "0" as the list of audited calls. The grader regenerates call 0's inputs, finds the answer right, and
// today accepts a score made of empty calls.
#include <dirent.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
static void softmax(const float* input, float* output, int M, int N) {
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
static std::vector<float> first_answer;
static void forge() {
    if (DIR* d = opendir("out")) {
        while (dirent* e = readdir(d))
            if (std::strncmp(e->d_name, "block_1k_4k.a", 13) == 0) unlink(("out/" + std::string(e->d_name)).c_str());
        closedir(d);
    }
    if (FILE* f = std::fopen("out/block_1k_4k.a0.1.bin", "wb")) {
        std::fwrite(first_answer.data(), sizeof(float), first_answer.size(), f);
        std::fclose(f);
    }
    if (FILE* f = std::fopen("out/block_1k_4k.audits", "w")) {
        std::fputs("0\n", f);
        std::fclose(f);
    }
}
void solve(const float* input, float* output, int M, int N) {
    static long calls = 0;
    static bool forged = false;
    if (M == 1024 && N == 4096) {
        if (calls++ == 0) {
            softmax(input, output, M, N);
            first_answer.assign(output, output + (size_t)M * N);
        }
        return;
    }
    if (!forged && !first_answer.empty()) {
        forge();
        forged = true;
    }
    softmax(input, output, M, N);
}
