// CPU rung 1 -- naive sum, one thread, one double accumulator.
//
// One loop over the input. The running sum is a double: a float accumulator fed N values in order makes N
// roundings at the size of the whole sum (error ~ eps * N) and, with values in [0, 1), stops growing at 2^24;
// the tolerance rejects it on the large tests. A double has 29 more bits, so its rounding never shows in the
// float32 result. The loop is a serial dependency chain (one add in flight): slow, but the reference for
// correctness.

void solve(const float* input, float* output, int N) {
    double sum = 0.0;
    for (int i = 0; i < N; ++i) sum += input[i];
    output[0] = (float)sum;
}
