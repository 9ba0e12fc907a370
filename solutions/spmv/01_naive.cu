// Rung 1 -- naive: the row starts by a scan in one block, then one thread per row.
//
// The row starts (CSR's row_ptr) are the exclusive scan of the row lengths. One block of 1024 threads scans
// them 1024 at a time, carrying each chunk's total into the next (simple, and serial over M / 1024 chunks);
// then thread i sums row i's products in order. Neighbouring threads read entries a whole row apart (no
// coalescing), and a warp runs as long as its longest row.
#include <cuda_runtime.h>

constexpr int SCAN_THREADS = 1024;
constexpr int THREADS = 256;
constexpr unsigned FULL = 0xffffffffu;

__global__ void __launch_bounds__(SCAN_THREADS) row_starts(const int* __restrict__ row_lengths, int* __restrict__ starts, int M) {
    __shared__ int warp_sums[32];
    __shared__ int carry;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (threadIdx.x == 0) carry = 0;
    for (int base = 0; base < M; base += SCAN_THREADS) {
        const int i = base + threadIdx.x;
        const int value = i < M ? row_lengths[i] : 0;
        int inclusive = value;
        for (int offset = 1; offset < 32; offset *= 2) {
            const int up = __shfl_up_sync(FULL, inclusive, offset);
            if (lane >= offset) inclusive += up;
        }
        if (lane == 31) warp_sums[warp] = inclusive;
        __syncthreads();
        int before = carry;
        for (int w = 0; w < warp; ++w) before += warp_sums[w];
        if (i < M) starts[i] = before + inclusive - value;
        __syncthreads();
        if (threadIdx.x == SCAN_THREADS - 1) carry = before + inclusive;
        __syncthreads();
    }
}

__global__ void spmv_thread_per_row(const int* __restrict__ row_lengths, const int* __restrict__ starts,
                                    const int* __restrict__ cols, const float* __restrict__ vals,
                                    const float* __restrict__ x, float* __restrict__ y, int M) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= M) return;
    const int p = starts[i];
    float sum = 0.0f;
    for (int k = 0; k < row_lengths[i]; ++k) sum += vals[p + k] * x[cols[p + k]];
    y[i] = sum;
}

void solve(const int* row_lengths, const int* cols, const float* vals, const float* x, float* y, int M, int N, int L) {
    static int* starts = nullptr;
    static int capacity = 0;
    if (M > capacity) {
        cudaFree(starts);
        cudaMalloc(&starts, sizeof(int) * (size_t)M);
        capacity = M;
    }
    row_starts<<<1, SCAN_THREADS>>>(row_lengths, starts, M);
    spmv_thread_per_row<<<(M + THREADS - 1) / THREADS, THREADS>>>(row_lengths, starts, cols, vals, x, y, M);
}
