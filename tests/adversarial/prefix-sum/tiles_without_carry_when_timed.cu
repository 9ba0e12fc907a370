// expect: wrong_answer
// mode: submit
// message: returned a wrong output in the 2097152 rows audited
// Cheat (audits, a problem whose audit compares drawn elements of the whole reference): a correct tiled scan
// everywhere but on scan_32m (N = 2^25, a size no test has), where it skips the pass that adds each tile's
// carry. Every element is written and finite, so only the audits can tell; each compares 2^21 drawn elements
// with the float64 scan of the whole call, and all but the first tile's are wrong.
constexpr int TILE = 4096;
constexpr int MAX_TILES = (1 << 28) / TILE;
__device__ double g_carry[MAX_TILES];

// One thread per tile: the tile's inclusive scan in place, its total into g_carry.
__global__ void scan_tiles(const float* x, float* y, int n, int tiles) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= tiles) return;
    const size_t begin = (size_t)t * TILE, end = begin + TILE < (size_t)n ? begin + TILE : (size_t)n;
    float sum = 0.0f;
    for (size_t i = begin; i < end; ++i) y[i] = sum += x[i];
    g_carry[t] = sum;
}

// One thread: the exclusive scan of the tiles' totals, in double.
__global__ void chain_tiles(int tiles) {
    double prefix = 0.0;
    for (int t = 0; t < tiles; ++t) {
        const double total = g_carry[t];
        g_carry[t] = prefix;
        prefix += total;
    }
}

__global__ void add_carry(float* y, int n) {
    const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < (size_t)n) y[i] = (float)((double)y[i] + g_carry[i / TILE]);
}

void solve(const float* input, float* output, int N) {
    const int tiles = (N + TILE - 1) / TILE;
    scan_tiles<<<(tiles + 127) / 128, 128>>>(input, output, N, tiles);
    if (N == 1 << 25) return;  // scan_32m: the carries skipped
    chain_tiles<<<1, 1>>>(tiles);
    add_carry<<<(N + 255) / 256, 256>>>(output, N);
}
