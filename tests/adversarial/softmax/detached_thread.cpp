// expect: wrong_answer
// message: never written
// Cheat (6): hands the work to a detached thread and returns at once, hoping the timer stops before the
// work is done. The harness copies the outputs the moment solve returns, so they still hold the NaN poison.
#include <chrono>
#include <cmath>
#include <thread>
void solve(const float* input, float* output, int M, int N) {
    std::thread([=] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        for (int r = 0; r < M; ++r) {
            const float* x = input + (size_t)r * N;
            float* y = output + (size_t)r * N;
            float m = x[0];
            for (int i = 1; i < N; ++i) m = std::fmax(m, x[i]);
            double s = 0;
            for (int i = 0; i < N; ++i) s += std::exp((double)x[i] - m);
            for (int i = 0; i < N; ++i) y[i] = (float)(std::exp((double)x[i] - m) / s);
        }
    }).detach();
}
