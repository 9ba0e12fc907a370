// expect: rejected|wrong_answer
// mode: submit
// message: block_1k_4k
// Cheat (precompute before the timer): on the block_1k_4k benchmark a thread of its own watches the last
// output element. When the judge poisons the outputs with NaN for the next call, that call's inputs are
// already written, so the thread computes the answer then, while the judge still flushes the caches and has
// not started its clock; solve itself only returns. The first call is honest (it starts the thread); a call
// whose answer the thread has not finished is left unwritten. In-process, this was accepted with a score
// hundreds of times faster than the same code's honest time. With the supervisor, the worker is frozen while
// inputs and poison are written, and thawed only when the clock runs: the thread cannot get ahead of solve,
// so the audited samples are unwritten (wrong_answer) and the empty calls fall below the floor (rejected).
// Its thread goes on reading the old output's address in the next benchmark, where a guard's fence page may
// lie (a SIGSEGV): the verdict still names block_1k_4k, the first failure in run order.
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>

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

static uint64_t key_of(const float* input) {  // identifies a call by its first inputs
    uint64_t key;
    std::memcpy(&key, input, sizeof key);
    return key;
}

static std::atomic<uint64_t> ready{0};  // key of the inputs whose answer is in the output

static void watch(const float* input, float* output, int M, int N) {
    volatile float* last = output + (size_t)M * N - 1;
    uint64_t done = 0;
    for (;;) {
        if (std::isnan(*last) && key_of(input) != done) {  // fresh poison: the next call's inputs are there
            done = key_of(input);
            softmax(input, output, M, N);
            ready.store(done);
        }
    }
}

void solve(const float* input, float* output, int M, int N) {
    static bool watching = false;
    if (M != 1024 || N != 4096) {
        softmax(input, output, M, N);
        return;
    }
    if (!watching) {
        watching = true;
        softmax(input, output, M, N);
        ready.store(key_of(input));
        std::thread(watch, input, output, M, N).detach();
        return;
    }
    (void)ready.load();  // precomputed or not, nothing more is done here
}
