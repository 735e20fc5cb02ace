// Skinny float32 matrix products for one-thread CPU training: a few rows times a large matrix.
//
// A general GEMM copies ("packs") its large operand into a blocked layout before multiplying;
// with 20 rows on the other side, that copy costs about as much as the multiplication, and at
// d = 2000 the matrix (16 MB) is read from memory on every call. These kernels read the large
// matrix once, in place, with the small operand and the products held in cache and registers.
//
//   skinny_nn: C = A B     (A: M x K small, B: K x N large), C tiles in registers, B rows
//              prefetched (row stride is large, so the hardware prefetcher does not follow).
//   skinny_nt: C = A B^T   (B: N x K large, read row by row), dot products of rows.
//
// Each output element is summed in a fixed order that depends only on the shapes, so results
// are reproducible run to run. Built at first use with the machine's own instruction set
// (see benign/native/__init__.py).
#include <cstdint>
#include <cstring>

#if defined(__AVX512F__)
constexpr int VW = 16;  // floats per vector register
#else
constexpr int VW = 8;
#endif
typedef float vec __attribute__((vector_size(VW * 4), aligned(4)));

static inline vec loadu(const float* p) { vec v; std::memcpy(&v, p, sizeof(vec)); return v; }
static inline void storeu(float* p, vec v) { std::memcpy(p, &v, sizeof(vec)); }
static inline vec splat(float x) { return vec{} + x; }

// ---------------------------------------------------------------- C = A B
constexpr int KC = 256;  // rows of B per pass (a KC x (2 VW) piece of B stays in L1)
constexpr int PD = 32;   // prefetch distance, in rows of B

// C[MR, NV vectors] (+)= A[MR, kc] B[kc, NV vectors], the C tile held in registers.
template <int MR, int NV>
static inline void tile(int kc, const float* A, int64_t lda, const float* B, int64_t ldb, float* C, int64_t ldc,
                        bool first, const float* pf) {
    vec acc[MR][NV];
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[i][v] = first ? vec{} : loadu(C + i * ldc + v * VW);
    for (int k = 0; k < kc; ++k) {
        __builtin_prefetch(pf + k * ldb);
        if (NV * VW > 16) __builtin_prefetch(pf + k * ldb + 16);
        vec b[NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) b[v] = loadu(B + k * ldb + v * VW);
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i) {
            const vec a = splat(A[i * lda + k]);
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v) acc[i][v] += a * b[v];
        }
    }
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) storeu(C + i * ldc + v * VW, acc[i][v]);
}

// The last r < R rows of A, as one tile of exactly r rows.
template <int R, int NV>
static inline void tail_tile(int r, int kc, const float* A, int64_t lda, const float* B, int64_t ldb, float* C,
                             int64_t ldc, bool first) {
    if constexpr (R > 0) {
        if (r == R)
            tile<R, NV>(kc, A, lda, B, ldb, C, ldc, first, B + PD * ldb);
        else
            tail_tile<R - 1, NV>(r, kc, A, lda, B, ldb, C, ldc, first);
    }
}

template <int NV>
static void tile_rows(int M, int kc, const float* A, int64_t lda, const float* B, int64_t ldb, float* C, int64_t ldc,
                      bool first) {
    // As many rows as the registers hold: MR * NV accumulators plus NV + 1 operands.
    constexpr int MR = (VW == 16) ? (NV == 2 ? 10 : 12) : (NV == 2 ? 5 : 10);
    int i = 0;
    for (; i + MR <= M; i += MR) {
        // the first tile prefetches PD rows ahead in this block; the others, the next block
        const float* pf = (i == 0) ? B + PD * ldb : B + NV * VW;
        tile<MR, NV>(kc, A + i * lda, lda, B, ldb, C + i * ldc, ldc, first, pf);
    }
    tail_tile<MR - 1, NV>(M - i, kc, A + i * lda, lda, B, ldb, C + i * ldc, ldc, first);
}

static void nn_one(int M, int N, int K, const float* A, int64_t lda, const float* B, int64_t ldb, float* C,
                   int64_t ldc, float* scratch) {
    const int N2 = N - N % (2 * VW), N1 = N - N % VW, tail = N - N1;
    for (int k0 = 0; k0 < K; k0 += KC) {
        const int kc = (K - k0 < KC) ? K - k0 : KC;
        const bool first = k0 == 0;
        for (int n = 0; n < N2; n += 2 * VW) tile_rows<2>(M, kc, A + k0, lda, B + k0 * ldb + n, ldb, C + n, ldc, first);
        for (int n = N2; n < N1; n += VW) tile_rows<1>(M, kc, A + k0, lda, B + k0 * ldb + n, ldb, C + n, ldc, first);
        if (tail) {  // the last N % VW columns: through a zero-padded copy, one vector wide
            float* Bt = scratch;            // kc x VW
            float* Ct = scratch + KC * VW;  // M x VW
            for (int k = 0; k < kc; ++k) {
                std::memset(Bt + k * VW, 0, sizeof(float) * VW);
                std::memcpy(Bt + k * VW, B + (k0 + k) * ldb + N1, sizeof(float) * tail);
            }
            for (int i = 0; i < M; ++i) {
                std::memset(Ct + i * VW, 0, sizeof(float) * VW);
                if (!first) std::memcpy(Ct + i * VW, C + i * ldc + N1, sizeof(float) * tail);
            }
            tile_rows<1>(M, kc, A + k0, lda, Bt, VW, Ct, VW, first);
            for (int i = 0; i < M; ++i) std::memcpy(C + i * ldc + N1, Ct + i * VW, sizeof(float) * tail);
        }
    }
}

// ---------------------------------------------------------------- C = A B^T
constexpr int RB = (VW == 16) ? 6 : 4;  // rows of B at a time
constexpr int QB = (VW == 16) ? 4 : 2;  // rows of A at a time (RB * QB accumulators)

static inline float hsum(vec v) {
    float s = 0;
    for (int j = 0; j < VW; ++j) s += v[j];
    return s;
}

template <int R, int Q>
static inline void dots(int K, const float* A, int64_t lda, const float* B, int64_t ldb, float* C, int64_t ldc) {
    const int Kv = K - K % VW;
    vec acc[R][Q] = {};
    for (int k = 0; k < Kv; k += VW) {
        vec b[R], a[Q];
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) b[r] = loadu(B + r * ldb + k);
#pragma GCC unroll 8
        for (int q = 0; q < Q; ++q) a[q] = loadu(A + q * lda + k);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
            for (int q = 0; q < Q; ++q) acc[r][q] += a[q] * b[r];
    }
    for (int r = 0; r < R; ++r)
        for (int q = 0; q < Q; ++q) {
            float s = hsum(acc[r][q]);
            for (int k = Kv; k < K; ++k) s += A[q * lda + k] * B[r * ldb + k];
            C[q * ldc + r] = s;
        }
}

static void nt_one(int M, int N, int K, const float* A, int64_t lda, const float* B, int64_t ldb, float* C,
                   int64_t ldc) {
    int r0 = 0;
    for (; r0 + RB <= N; r0 += RB) {
        int q0 = 0;
        for (; q0 + QB <= M; q0 += QB) dots<RB, QB>(K, A + q0 * lda, lda, B + r0 * ldb, ldb, C + q0 * ldc + r0, ldc);
        for (; q0 < M; ++q0) dots<RB, 1>(K, A + q0 * lda, lda, B + r0 * ldb, ldb, C + q0 * ldc + r0, ldc);
    }
    for (; r0 < N; ++r0)
        for (int q0 = 0; q0 < M; ++q0) dots<1, 1>(K, A + q0 * lda, lda, B + r0 * ldb, ldb, C + q0 * ldc + r0, ldc);
}

extern "C" {
// Batched over `batch` independent products: product b uses A + b*sa, B + b*sb, C + b*sc.
// C must not overlap A or B. `scratch` holds (KC + M) * VW floats (skinny_scratch_floats).
void skinny_nn(int batch, int M, int N, int K, const float* A, int64_t lda, int64_t sa, const float* B, int64_t ldb,
               int64_t sb, float* C, int64_t ldc, int64_t sc, float* scratch) {
    for (int b = 0; b < batch; ++b) nn_one(M, N, K, A + b * sa, lda, B + b * sb, ldb, C + b * sc, ldc, scratch);
}
void skinny_nt(int batch, int M, int N, int K, const float* A, int64_t lda, int64_t sa, const float* B, int64_t ldb,
               int64_t sb, float* C, int64_t ldc, int64_t sc) {
    for (int b = 0; b < batch; ++b) nt_one(M, N, K, A + b * sa, lda, B + b * sb, ldb, C + b * sc, ldc);
}
int64_t skinny_scratch_floats(int M) { return (int64_t)(KC + M) * VW; }
int skinny_vector_width() { return VW; }
}
