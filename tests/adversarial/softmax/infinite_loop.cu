// expect: timeout
// time_limit: 5
// message: time limit
// Hang (9): a kernel that never ends (clock64 keeps the compiler from removing the loop, which it did with a
// volatile local flag).
__global__ void spin(float* y) {
    while (clock64() >= 0) {}
    y[0] = 1.0f;
}
void solve(const float* input, float* output, int M, int N) { spin<<<1, 1>>>(output); }
