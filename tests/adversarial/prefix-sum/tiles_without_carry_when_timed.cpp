// expect: wrong_answer
// mode: submit
// message: returned a wrong output in the 1048576 rows audited
// Cheat (audits, a problem whose audit compares drawn elements of the whole reference): the CPU twin of
// tiles_without_carry_when_timed.cu. A correct scan everywhere but on scan_16m (N = 2^24, a size no CPU test
// has), where it scans each tile of 4096 on its own and skips the carries. Every element is written and finite,
// so only the audits can tell; each compares 2^20 drawn elements with the float64 scan of the whole call.
void solve(const float* input, float* output, int N) {
    const bool skip_carries = N == 1 << 24;  // scan_16m
    double sum = 0.0;
    for (int i = 0; i < N; ++i) {
        if (skip_carries && i % 4096 == 0) sum = 0.0;
        sum += input[i];
        output[i] = (float)sum;
    }
}
