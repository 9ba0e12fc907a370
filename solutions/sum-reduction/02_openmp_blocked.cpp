// CPU rung 2 -- OpenMP sum: float lanes over short blocks, blocks added in double, threads merged at the end.
//
// Over rung 1: the input is split between threads (a reduction clause merges their partial sums), and
// within a thread the serial dependency chain is broken: LANES independent float accumulators over a block
// of BLOCK values vectorise into SIMD adds, and each block's sum goes into a double. A float partial sum of
// BLOCK / LANES = 256 values stays small, so the result keeps tree-like accuracy at vector speed.

constexpr int LANES = 16;
constexpr long long BLOCK = 4096;

static float block_sum(const float* x, long long n) {
    float lane[LANES] = {};
    long long i = 0;
    for (; i + LANES <= n; i += LANES)
        #pragma omp simd
        for (int l = 0; l < LANES; ++l) lane[l] += x[i + l];
    for (; i < n; ++i) lane[0] += x[i];
    float s = 0.f;
    for (int l = 0; l < LANES; ++l) s += lane[l];
    return s;
}

void solve(const float* input, float* output, int N) {
    const long long blocks = (N + BLOCK - 1) / BLOCK;
    double sum = 0.0;
    #pragma omp parallel for reduction(+ : sum) schedule(static) if (N >= 65536)
    for (long long b = 0; b < blocks; ++b) {
        const long long first = b * BLOCK;
        sum += block_sum(input + first, (N - first < BLOCK) ? N - first : BLOCK);
    }
    output[0] = (float)sum;
}
