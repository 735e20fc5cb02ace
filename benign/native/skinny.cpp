// Skinny float32 matrix products for one-thread CPU training: a few rows times a large matrix.
//
// A general GEMM copies ("packs") its large operand into a blocked layout before multiplying;
// with 20 rows on the other side, that copy costs about as much as the multiplication, and at
// d = 2000 the matrix (16 MB) is read from memory on every call. These kernels read the large
// matrix once, in place, with the small operand and the products held in cache and registers.
//
//   skinny_nn: C = A B     (A: M x K small, B: K x N large), C tiles in registers, B rows
//              prefetched (row stride is large, so the hardware prefetcher does not follow).
//   skinny_nt: C = A B^T   (B: N x K large, read row by row), as B A^T with A^T in a small
//              panel (dot products of rows for 1-3 rows of A).
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

// With 1-3 rows of A (bound by memory): C[i,:] = sum_k A[i,k] B[k,:], B streamed row by row,
// 8 rows at a time into each vector of C (C stays in L1).
constexpr int NN1_ROWS = 8;
static void nn_few(int M, int N, int K, const float* A, int64_t lda, const float* B, int64_t ldb, float* C,
                   int64_t ldc) {
    const int Nv = N - N % VW;
    for (int i = 0; i < M; ++i) {
        const float* a = A + i * lda;
        float* c = C + i * ldc;
        std::memset(c, 0, sizeof(float) * N);
        for (int k = 0; k < K; k += NN1_ROWS) {
            const int kr = (K - k < NN1_ROWS) ? K - k : NN1_ROWS;
            if (kr == NN1_ROWS) {
                vec x[NN1_ROWS];
#pragma GCC unroll 8
                for (int r = 0; r < NN1_ROWS; ++r) x[r] = splat(a[k + r]);
                for (int n = 0; n < Nv; n += VW) {
                    vec acc = loadu(c + n);
#pragma GCC unroll 8
                    for (int r = 0; r < NN1_ROWS; ++r) acc += x[r] * loadu(B + (k + r) * ldb + n);
                    storeu(c + n, acc);
                }
                for (int n = Nv; n < N; ++n)
                    for (int r = 0; r < NN1_ROWS; ++r) c[n] += a[k + r] * B[(k + r) * ldb + n];
            } else {
                for (int n = 0; n < N; ++n)
                    for (int r = 0; r < kr; ++r) c[n] += a[k + r] * B[(k + r) * ldb + n];
            }
        }
    }
}

static void nn_one(int M, int N, int K, const float* A, int64_t lda, const float* B, int64_t ldb, float* C,
                   int64_t ldc, float* scratch) {
    if (M < 4) return nn_few(M, N, K, A, lda, B, ldb, C, ldc);
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
// With 4 or more rows of A: A is transposed into a zero-padded K x (8 NV) panel (NV vectors of 8
// floats; 24 lanes for 17-24 rows), and C^T = B A^T is formed like a product of B's rows with
// that panel: a tile of MR rows of B times the panel's lanes in registers, B's elements
// broadcast, B read row by row in 256-column passes, partial sums kept in S (N x 8 NV).
typedef float vec8 __attribute__((vector_size(32), aligned(4)));
static inline vec8 load8(const float* p) { vec8 v; std::memcpy(&v, p, 32); return v; }
static inline void store8(float* p, vec8 v) { std::memcpy(p, &v, 32); }
constexpr int NT_KC = 256;
constexpr int NT_LANES = 24;  // rows of A per panel

template <int NV>
constexpr int nt_rows() {  // rows of B per tile: MR * NV accumulators plus NV operands
#if defined(__AVX512F__)
    return NV == 3 ? 8 : NV == 2 ? 12 : 16;
#else
    return NV == 3 ? 4 : NV == 2 ? 6 : 12;
#endif
}

template <int MR, int NV>
static inline void nt_tile(int kc, const float* B, int64_t ldb, const float* At, float* S, bool first, const float* pf) {
    vec8 acc[MR][NV];
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[i][v] = first ? vec8{} : load8(S + (i * NV + v) * 8);
    for (int k = 0; k < kc; ++k) {
        if ((k & 15) == 0)  // one cache line of each of the next tile's rows per 16 columns
            for (int i = 0; i < MR; ++i) __builtin_prefetch(pf + i * ldb + k);
        vec8 a[NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) a[v] = load8(At + (k * NV + v) * 8);
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i) {
            const vec8 b = vec8{} + B[i * ldb + k];
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v) acc[i][v] += b * a[v];
        }
    }
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) store8(S + (i * NV + v) * 8, acc[i][v]);
}

template <int R, int NV>  // the last r < R rows of B, as one tile of exactly r rows
static inline void nt_tail(int r, int kc, const float* B, int64_t ldb, const float* At, float* S, bool first) {
    if constexpr (R > 0) {
        if (r == R)
            nt_tile<R, NV>(kc, B, ldb, At, S, first, B);
        else
            nt_tail<R - 1, NV>(r, kc, B, ldb, At, S, first);
    }
}

template <int NV>
static void nt_panel(int M, int N, int K, const float* A, int64_t lda, const float* B, int64_t ldb, float* C,
                     int64_t ldc, float* At, float* S) {
    constexpr int MR = nt_rows<NV>(), L = NV * 8;
    for (int k = 0; k < K; ++k)
        for (int q = 0; q < L; ++q) At[k * L + q] = q < M ? A[q * lda + k] : 0.0f;
    for (int k0 = 0; k0 < K; k0 += NT_KC) {
        const int kc = (K - k0 < NT_KC) ? K - k0 : NT_KC;
        const bool first = k0 == 0;
        int r = 0;
        for (; r + MR <= N; r += MR) {
            const float* pf = B + ((r + 2 * MR <= N) ? r + MR : r) * ldb + k0;
            nt_tile<MR, NV>(kc, B + r * ldb + k0, ldb, At + k0 * L, S + r * L, first, pf);
        }
        nt_tail<MR - 1, NV>(N - r, kc, B + r * ldb + k0, ldb, At + k0 * L, S + r * L, first);
    }
    for (int r = 0; r < N; ++r)
        for (int q = 0; q < M; ++q) C[q * ldc + r] = S[r * L + q];
}

// With 1-3 rows of A (a matrix-vector product, bound by memory): B read one row at a time,
// a single sequential stream, which measured faster than several rows side by side.
static inline float hsum(vec v) {
    float s = 0;
    for (int j = 0; j < VW; ++j) s += v[j];
    return s;
}

static inline float dot(int K, const float* a, const float* b) {
    const int K4 = K - K % (4 * VW), Kv = K - K % VW;
    vec acc[4] = {};
    int k = 0;
    for (; k < K4; k += 4 * VW)
#pragma GCC unroll 4
        for (int u = 0; u < 4; ++u) acc[u] += loadu(a + k + u * VW) * loadu(b + k + u * VW);
    for (; k < Kv; k += VW) acc[0] += loadu(a + k) * loadu(b + k);
    float s = hsum((acc[0] + acc[1]) + (acc[2] + acc[3]));
    for (; k < K; ++k) s += a[k] * b[k];
    return s;
}

static void nt_one(int M, int N, int K, const float* A, int64_t lda, const float* B, int64_t ldb, float* C,
                   int64_t ldc, float* scratch) {
    if (M < 4) {
        for (int r = 0; r < N; ++r)
            for (int q = 0; q < M; ++q) C[q * ldc + r] = dot(K, A + q * lda, B + r * ldb);
        return;
    }
    float* At = scratch;
    float* S = scratch + (int64_t)K * NT_LANES;
    for (int q = 0; q < M; q += NT_LANES) {
        const int m = (M - q < NT_LANES) ? M - q : NT_LANES;
        const float* Aq = A + q * lda;
        float* Cq = C + q * ldc;
        if (m > 16)
            nt_panel<3>(m, N, K, Aq, lda, B, ldb, Cq, ldc, At, S);
        else if (m > 8)
            nt_panel<2>(m, N, K, Aq, lda, B, ldb, Cq, ldc, At, S);
        else
            nt_panel<1>(m, N, K, Aq, lda, B, ldb, Cq, ldc, At, S);
    }
}

extern "C" {
// Batched over `batch` independent products: product b uses A + b*sa, B + b*sb, C + b*sc.
// C must not overlap A or B. `scratch` holds skinny_scratch_floats(M, N, K) floats.
void skinny_nn(int batch, int M, int N, int K, const float* A, int64_t lda, int64_t sa, const float* B, int64_t ldb,
               int64_t sb, float* C, int64_t ldc, int64_t sc, float* scratch) {
    for (int b = 0; b < batch; ++b) nn_one(M, N, K, A + b * sa, lda, B + b * sb, ldb, C + b * sc, ldc, scratch);
}
void skinny_nt(int batch, int M, int N, int K, const float* A, int64_t lda, int64_t sa, const float* B, int64_t ldb,
               int64_t sb, float* C, int64_t ldc, int64_t sc, float* scratch) {
    for (int b = 0; b < batch; ++b) nt_one(M, N, K, A + b * sa, lda, B + b * sb, ldb, C + b * sc, ldc, scratch);
}
int64_t skinny_scratch_floats(int M, int N, int K) {
    const int64_t nn = (int64_t)(KC + M) * VW, nt = (int64_t)(K + N) * NT_LANES;
    return nn > nt ? nn : nt;
}
}
