/*
 * Step patterns of the alignment functions (tsw_dtw_path, tsw_subsequence_dtw): the one
 * definition of their cell, used by the CPU path kernels (cpu/path_impl.h) and meant for
 * the CUDA ones. See tswarp.h "Alignment" for the recurrence and the tie rule.
 *
 *   SYMMETRIC1  D(i,j) = min(D(i-1,j-1) + c, D(i,j-1) + c, D(i-1,j) + c)
 *   P05         D(i,j) = min(D(i-1,j-1) + 2c, D(i-1,j-2) + 3c, D(i-2,j-1) + 3c)
 *   P05_QUERY   D(i,j) = min(D(i-1,j-1) + c, D(i-1,j-2) + c, D(i-2,j-1) + 2c)
 * (P05 and P05_QUERY share their steps, "the p05 geometry"; only the weights differ.)
 *
 * Each cell records which step won as a 2-bit code: 0, 1, 2 in the pattern's order (the
 * order above), 3 = the path starts here (D(0,0), or row 0 of subsequence DTW). The first
 * minimal candidate wins (strict '<' in order), as librosa's accumulation loop does, and
 * every candidate is the predecessor plus the weighted cost, rounded, before comparing:
 * that is what makes the codes match librosa's on ties of the rounded sums.
 */
#ifndef TSW_COMMON_PATH_H
#define TSW_COMMON_PATH_H

#include "tsw_hd.h"

#define TSW_PATH_START 3 /* step code of a path's first cell */

/* Step s (0..2) of pattern p (tsw_step) as (di, dj). */
TSW_HD int tsw_path_di(int p, int s) { return p != 0 ? (s == 2 ? 2 : 1) : (s == 1 ? 0 : 1); }
TSW_HD int tsw_path_dj(int p, int s) { return p != 0 ? (s == 1 ? 2 : 1) : (s == 2 ? 0 : 1); }

/* Weight of step s (0..2) of pattern p: SYMMETRIC1 1, 1, 1; P05 2, 3, 3; P05_QUERY 1, 1, 2
 * (the rows a step advances, so every subsequence path of a query of n points weighs n). */
TSW_HD int tsw_path_weight(int p, int s)
{
    return p == 1 ? (s == 0 ? 2 : 3) : (p == 2 && s == 2 ? 2 : 1);
}

/*
 * The cell from its cost c and the three predecessors' D values d0, d1, d2 in the
 * pattern's order (+inf outside the grid or the window). The weights are exact small
 * integers, so w * c is one rounding, as librosa's weights_mul * C. A start cell (D(0,0);
 * row 0 of subsequence DTW) starts from c with code TSW_PATH_START, as librosa
 * initialises D there before its loop, and a candidate replaces it only when strictly
 * smaller (only possible with a negative rounded cosine cost; the path still starts in
 * row 0). Other cells start from +inf with code 0. Returns D; *step gets the code.
 * TSW_PATH_CELL_SEL is the comparison chain over selects so that vector code instantiates
 * the same rule (LT(a, b) a mask of a < b, SEL(mask, a, b) = mask ? a : b); for a cell
 * that is not a start, starting from (v0, 0) equals starting from (+inf, 0).
 */
#define TSW_PATH_CELL_SEL(v0, v1, v2, b1, best, code, LT, SEL, K0, K1, K2)                   \
    do {                                                                                      \
        b1 = SEL(LT((v1), (v0)), (v1), (v0));                                                 \
        best = SEL(LT((v2), b1), (v2), b1);                                                   \
        code = SEL(LT((v2), b1), (K2), SEL(LT((v1), (v0)), (K1), (K0)));                      \
    } while (0)

#define TSW__PATH_CELL_FN(T, SFX, INF)                                                        \
    TSW_HD T tsw_path_cell_##SFX(int p, T c, T d0, T d1, T d2, int start, int *step)          \
    {                                                                                         \
        T w0 = (T)tsw_path_weight(p, 0) * c, w1 = (T)tsw_path_weight(p, 1) * c;               \
        T v0 = d0 + w0, v1 = d1 + w1, v2 = d2 + (T)tsw_path_weight(p, 2) * c;                 \
        T best = start ? c : INF;                                                             \
        int code = start ? TSW_PATH_START : 0;                                                \
        if (v0 < best) {                                                                      \
            best = v0;                                                                        \
            code = 0;                                                                         \
        }                                                                                     \
        if (v1 < best) {                                                                      \
            best = v1;                                                                        \
            code = 1;                                                                         \
        }                                                                                     \
        if (v2 < best) {                                                                      \
            best = v2;                                                                        \
            code = 2;                                                                         \
        }                                                                                     \
        *step = code;                                                                         \
        return best;                                                                          \
    }
TSW__PATH_CELL_FN(double, f64, TSW_INF_F64)
TSW__PATH_CELL_FN(float, f32, TSW_INF_F32)
#undef TSW__PATH_CELL_FN

/* 1 when pattern p has a path from (0, 0) to (n-1, m-1) (no window). The p05 steps add
 * (1,1), (1,2) or (2,1): reaching (N, M) = (n-1, m-1) needs a + b + 2c = N and
 * a + 2b + c = M with a, b, c >= 0; for M >= N take c = 0, b = M - N, a = 2N - M, so
 * M <= 2N (and symmetrically N <= 2M) is necessary and sufficient. */
TSW_HD int tsw_path_reachable(int p, int64_t n, int64_t m)
{
    if (p == 0)
        return 1;
    return (m - 1) <= 2 * (n - 1) && (n - 1) <= 2 * (m - 1);
}

/* Subsequence DTW: a query of n points fits a reference of m points (some start, some end)
 * iff SYMMETRIC1, or the p05 geometry with n - 1 <= 2 (m - 1) (the steeper steps advance
 * the query by 2 per reference point). */
TSW_HD int tsw_path_subseq_reachable(int p, int64_t n, int64_t m)
{
    if (p == 0)
        return 1;
    return (n - 1) <= 2 * (m - 1);
}

/*
 * DTW's path back from (n - 1, m - 1) by step codes stored a cell (code[i * m + j]; DBA's
 * alignments on either backend): up where the code has a bit of `up`, else left where it
 * has one of `left`, else the diagonal, until (0, 0). Writes the path's (i, j) pairs into
 * p, which holds n + m - 1 pairs, from the front; returns its length.
 */
#define TSW_DEFINE_CODE_TRACE(CT, SFX)                                                        \
    TSW_HD int64_t tsw_path_trace_codes_##SFX(const CT *code, int64_t n, int64_t m,          \
                                              unsigned up, unsigned left, int64_t *p)        \
    {                                                                                         \
        int64_t i = n - 1, j = m - 1, pos = n + m - 2;                                        \
        p[2 * pos] = i;                                                                       \
        p[2 * pos + 1] = j;                                                                   \
        while (i > 0 || j > 0) {                                                              \
            const unsigned cd = code[i * m + j];                                              \
            if (cd & up) {                                                                    \
                --i;                                                                          \
            } else if (cd & left) {                                                           \
                --j;                                                                          \
            } else {                                                                          \
                --i;                                                                          \
                --j;                                                                          \
            }                                                                                 \
            --pos;                                                                            \
            p[2 * pos] = i;                                                                   \
            p[2 * pos + 1] = j;                                                               \
        }                                                                                     \
        const int64_t len = n + m - 1 - pos;                                                  \
        for (int64_t q = 0; q < 2 * len; ++q) /* to the front */                              \
            p[q] = p[q + 2 * pos];                                                            \
        return len;                                                                           \
    }
TSW_DEFINE_CODE_TRACE(uint8_t, u8)
TSW_DEFINE_CODE_TRACE(uint16_t, u16)
#undef TSW_DEFINE_CODE_TRACE

#endif
