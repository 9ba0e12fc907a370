// CPU rung 1 -- naive inclusive scan: one running sum, one thread.
//
// y[i] = y[i-1] + x[i], with the running sum kept in double: a float running sum makes one rounding per
// element at the size of the prefix, so its error grows like eps * N (past the tolerance at a few million
// elements, and with positive inputs it stops growing at 2^24). A double rounds 2^29 times finer. The loop
// carries a dependency from each element to the next: no SIMD, no threads.

void solve(const float* input, float* output, int N) {
    double sum = 0.0;
    for (int i = 0; i < N; ++i) {
        sum += input[i];
        output[i] = (float)sum;
    }
}
