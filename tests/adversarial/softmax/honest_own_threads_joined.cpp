// expect: accepted
// Honest but unusual (the CPU's "own stream, synchronised"): starts its own std::threads, splits the rows
// among them, and joins every one before returning. Work on other threads is fine as long as it is over
// when solve returns.
#include <cmath>
#include <thread>
#include <vector>
static void rows(const float* input, float* output, int begin, int end, int N) {
    for (int r = begin; r < end; ++r) {
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
    const int workers = 3;
    std::vector<std::thread> pool;
    for (int w = 0; w < workers; ++w)
        pool.emplace_back(rows, input, output, (int)((long)M * w / workers), (int)((long)M * (w + 1) / workers), N);
    for (std::thread& t : pool) t.join();
}
