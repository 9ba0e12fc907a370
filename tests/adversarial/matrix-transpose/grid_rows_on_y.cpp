// expect: wrong_answer
// message: tall_skinny
// The CPU twin of grid_rows_on_y.cu: the same tiled transpose, run block by block over the grid the CUDA
// kernel asks for, except that, as on a GPU, a grid axis holds at most 65,535 blocks: the rows of tiles past
// 65,535 * 32 = 2,097,120 are never transposed (the GPU refuses the whole launch; here the last rows stay
// unwritten). Every test below that size passes; tall_skinny (M = 4,194,319) is the one that reaches it.
#include <algorithm>
#include <cstddef>

constexpr int TILE = 32;
constexpr long long GRID_Y_LIMIT = 65535;

void solve(const float* input, float* output, int M, int N) {
    const long long row_tiles = std::min<long long>((M + TILE - 1) / TILE, GRID_Y_LIMIT);
    for (long long by = 0; by < row_tiles; ++by)
        for (int col0 = 0; col0 < N; col0 += TILE)
            for (int r = (int)(by * TILE); r < std::min<long long>(M, (by + 1) * TILE); ++r)
                for (int c = col0; c < std::min(N, col0 + TILE); ++c)
                    output[(size_t)c * M + r] = input[(size_t)r * N + c];
}
