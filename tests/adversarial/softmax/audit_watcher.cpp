// expect: wrong_answer
// mode: submit
// honest_floor_us: block_1k_4k 50
// Closed on the CPU track: the audit record is the supervisor's (never visible), and no draw uses an audit up.
// Cheat (audits): watches the harness's own audit record. On the block_1k_4k benchmark it computes honestly
// until out/block_1k_4k.audits appears (the CPU track audits one call per benchmark), and from then on does
// nothing: no later call can be audited, the final call included. Today that is accepted with a median made
// of empty calls. Either a final audit that the random picks cannot use up (then: wrong_answer) or an audit
// record the submission cannot see (then it must compute every call: accepted, with an honest time) closes it.
#include <unistd.h>

#include <cmath>
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
void solve(const float* input, float* output, int M, int N) {
    if (M == 1024 && N == 4096 && access("out/block_1k_4k.audits", F_OK) == 0) return;
    softmax(input, output, M, N);
}
