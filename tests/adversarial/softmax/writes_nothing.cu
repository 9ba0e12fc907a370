// expect: wrong_answer
// message: never written
// Cheat (1): launches nothing; the output keeps the NaN the harness poisoned it with.
void solve(const float* input, float* output, int M, int N) {}
