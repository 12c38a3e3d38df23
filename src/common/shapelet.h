/*
 * Shapelet math, once, for the CPU and (later) CUDA backends: the z-normalised distance of
 * eq. 2 from running sums (eqs. 5 to 7 of Chang et al. 2012), the information gain of a
 * split (eq. 3) and the order-line scan that finds a candidate's best split.
 * Conventions (constant windows, ties) are the ones include/tswarp.h documents.
 */
#ifndef TSW_COMMON_SHAPELET_H
#define TSW_COMMON_SHAPELET_H

#include "tsw_hd.h"

#ifndef TSW_SHAPELET_TIE
#define TSW_SHAPELET_TIE 1e-7
#endif

/* Mean and std of a window of length l from its sum and sum of squares (population std;
 * rounding can make the variance a hair negative, hence the clamp). */
TSW_HD void tsw_shp_stats(double sum, double sumsq, int64_t l, double *mean, double *sd)
{
    double m = sum / (double)l;
    double v = sumsq / (double)l - m * m;
    *mean = m;
    *sd = v > 0.0 ? sqrt(v) : 0.0;
}

/* Squared distances below 1e-12 (d < 1e-6) are exact matches: 0. The running-sum formula
 * leaves ~1e-16 of rounding in d^2 = 2 (1 - corr), i.e. ~1e-8 in d, where eq. 2 computed
 * directly gives ~1e-16; snapping both to 0 keeps a shapelet's match with itself (and with
 * identical windows) the same number in every implementation. */
TSW_HD double tsw_shp_snap(double d2) { return d2 < 1e-12 ? 0.0 : d2; }

/*
 * Squared eq. 2 distance between windows a and b of length l from their dot product and
 * stats: 2 (1 - corr) with corr = (dot - l ma mb) / (l sa sb) (eq. 5). fa, fb: the window is
 * constant (all its values equal, decided exactly by the caller, not from a rounded std).
 * Constant windows have z-normalised values 0: d^2 = 0 between two of them, 1 between one
 * and a varying one. A varying window whose std rounds to 0 counts as uncorrelated (d^2 2).
 * At most 4; snapped to 0 near 0 (rounding can push a perfect match a hair below 0).
 */
TSW_HD double tsw_shp_d2(double dot, int64_t l, double ma, double sa, int fa, double mb,
                         double sb, int fb)
{
    if (fa || fb)
        return fa && fb ? 0.0 : 1.0;
    double den = (double)l * sa * sb;
    if (!(den > 0.0))
        return 2.0;
    double d2 = 2.0 * (1.0 - (dot - (double)l * ma * mb) / den);
    return tsw_shp_snap(TSW_MIN(d2, 4.0));
}

/*
 * tsw_shp_d2 of the l-point windows a and b (values of standardised series) from their sums
 * (a_sum, b_sum) and sums of squares, and whether each is constant: the dot product summed
 * in order t = 0 .. l - 1. The fast path's distance of one pair of windows, as the distances
 * of shapelets to series and the windows of a shapelet against a shorter series take it.
 */
TSW_HD double tsw_shp_window_d2(const double *a, double a_sum, double a_sumsq, int fa,
                                const double *b, double b_sum, double b_sumsq, int fb, int64_t l)
{
    double dot = 0.0, ma, sa, mb, sb;
    for (int64_t t = 0; t < l; ++t)
        dot += a[t] * b[t];
    tsw_shp_stats(a_sum, a_sumsq, l, &ma, &sa);
    tsw_shp_stats(b_sum, b_sumsq, l, &mb, &sb);
    return tsw_shp_d2(dot, l, ma, sa, fa, mb, sb, fb);
}

/*
 * Windows that are not z-normalised (tsw_shapelet_params.raw): the squared length-normalised
 * Euclidean distance 1/l sum_t (a_t - b_t)^2 = (sa2 + sb2 - 2 dot) / l from the windows' sums
 * of squares sa2, sb2 and their dot product; clamped at 0 (rounding) and snapped as
 * tsw_shp_snap. The values are those of a collection shifted and scaled as a whole
 * (include/tswarp.h), so the snap and the order line's ties keep their meaning.
 */
TSW_HD double tsw_shp_raw_d2(double dot, int64_t l, double sa2, double sb2)
{
    double d2 = (sa2 + sb2 - 2.0 * dot) / (double)l;
    return tsw_shp_snap(TSW_MAX(d2, 0.0));
}

/* tsw_shp_raw_d2 of the l-point windows a and b, the dot product summed in order. */
TSW_HD double tsw_shp_window_raw_d2(const double *a, double a_sumsq, const double *b,
                                    double b_sumsq, int64_t l)
{
    double dot = 0.0;
    for (int64_t t = 0; t < l; ++t)
        dot += a[t] * b[t];
    return tsw_shp_raw_d2(dot, l, a_sumsq, b_sumsq);
}

/*
 * The smallest tsw_shp_raw_d2 of a candidate (its sum of squares sa2) over the windows of one
 * series, from the largest score dot - 0.5 W_b over them (W_b the window's sum of squares):
 * the z-normalised fast path's score (dot - ma S_b) inv_sd_b with ma = 0.5, S_b = W_b and
 * inv_sd_b = 1, so the same loops compute both.
 */
TSW_HD double tsw_shp_raw_d2_from_score(double best_score, int64_t l, double sa2)
{
    double d2 = (sa2 - 2.0 * best_score) / (double)l;
    return tsw_shp_snap(TSW_MAX(d2, 0.0));
}

/* 1 / std of a window from its sums, or 0 for a constant window (flat) and for a varying one
 * whose spread rounding lost: with 0 such a window scores 0 in tsw_shp_d2_from_score below,
 * the "uncorrelated" of tsw_shp_d2 (constant windows are accounted for by has_flat). */
TSW_HD double tsw_shp_inv_sd(double sum, double sumsq, int64_t l, int flat)
{
    double m, sd;
    tsw_shp_stats(sum, sumsq, l, &m, &sd);
    return flat || !(sd > 0.0) ? 0.0 : 1.0 / sd;
}

/*
 * The smallest tsw_shp_d2 of a candidate (mean ma, std sa, constant or not) over the windows
 * of one series, from the largest score (dot - ma S_b) * inv_sd_b over them (S_b the window's
 * sum; corr = score / (l sa)), and has_flat: the series has a constant window of length l.
 * This is how the fast path takes the minimum without a division per window.
 */
TSW_HD double tsw_shp_d2_from_score(double best_score, int64_t l, double sa, int flat_a,
                                    int has_flat)
{
    if (flat_a)
        return has_flat ? 0.0 : 1.0;
    if (!(sa > 0.0))
        return has_flat ? 1.0 : 2.0;
    double d2 = 2.0 * (1.0 - best_score / ((double)l * sa));
    d2 = tsw_shp_snap(TSW_MIN(TSW_MAX(d2, 0.0), 4.0));
    return has_flat ? TSW_MIN(d2, 1.0) : d2;
}

/*
 * Either distance, as the data asks (raw: tsw_shapelet_params.raw): the windows' distance
 * from their values, sums, sums of squares and constancy (the raw one reads the sums of
 * squares only), and a candidate's least distance over a series from its best score and
 * stats (sa_or_sumsq: the candidate's std, or raw its sum of squares).
 * The CPU and CUDA paths call these, so both kinds take one branch in one place.
 */
TSW_HD double tsw_shp_pair_d2(int raw, const double *a, double a_sum, double a_sumsq, int fa,
                              const double *b, double b_sum, double b_sumsq, int fb, int64_t l)
{
    return raw ? tsw_shp_window_raw_d2(a, a_sumsq, b, b_sumsq, l)
               : tsw_shp_window_d2(a, a_sum, a_sumsq, fa, b, b_sum, b_sumsq, fb, l);
}

TSW_HD double tsw_shp_best_d2(int raw, double best_score, int64_t l, double sa_or_sumsq,
                              int flat_a, int has_flat)
{
    return raw ? tsw_shp_raw_d2_from_score(best_score, l, sa_or_sumsq)
               : tsw_shp_d2_from_score(best_score, l, sa_or_sumsq, flat_a, has_flat);
}

/* Group k's squared distance on an order line: the least of its gd rows of m2 (a series'
 * phases under dilation gd, rows k gd .. k gd + gd - 1; the series itself when gd = 1). */
TSW_HD double tsw_shp_group_d2(const double *m2, int64_t k, int64_t gd)
{
    double m = m2[k * gd];
    for (int64_t p = 1; p < gd; ++p)
        m = TSW_MIN(m, m2[k * gd + p]);
    return m;
}

/* A series' class on a candidate's order line: its label lab, or, one-vs-rest (own >= 0,
 * the class of the candidate's series), 1 in own and 0 in any other class. */
TSW_HD int32_t tsw_shp_line_label(int32_t lab, int32_t own)
{
    return own < 0 ? lab : (int32_t)(lab == own);
}

/* x log x with 0 log 0 = 0: the entropy terms of class counts. */
TSW_HD double tsw_shp_xlogx(int64_t c) { return c > 0 ? (double)c * log((double)c) : 0.0; }

/*
 * n * E(D) for class counts cnt[0..C) summing to n: n log n - sum_c c log c (natural log).
 * The gain of a split of D (n series) into L and R is
 *     I = (nE(D) - nE(L) - nE(R)) / n,
 * every term written as sums of per-class pairs (f(cL) + f(cR)) so that a split and its
 * mirror image (L and R swapped) round identically. xlogx: (n + 1,) table of
 * tsw_shp_xlogx(0..n), so the order-line scan calls no log().
 */
TSW_HD double tsw_shp_nentropy(const int64_t *cnt, int C, int64_t n)
{
    double s = 0.0;
    for (int c = 0; c < C; ++c)
        s += tsw_shp_xlogx(cnt[c]);
    return tsw_shp_xlogx(n) - s;
}

TSW_HD double tsw_shp_gain(const double *xlogx, double n_entropy_all, const int64_t *left,
                           const int64_t *total, int C, int64_t n_left, int64_t n)
{
    double s = 0.0;
    for (int c = 0; c < C; ++c)
        s += xlogx[left[c]] + xlogx[total[c] - left[c]];
    double split = (xlogx[n_left] + xlogx[n - n_left]) - s;
    return (n_entropy_all - split) / (double)n;
}

/* Is quality (g1, p1) better than (g2, p2)? Gain first (an exact function of the class
 * counts, so equal splits give equal gains), then the separation gap compared on a grid of
 * 1e-9: gaps that are equal but for rounding (the reference and the fast path sum different
 * roundings of the same distances) tie, and the tie then goes the same way in both. */
TSW_HD double tsw_shp_gap_key(double gap) { return floor(gap * 1e9 + 0.5); }

TSW_HD int tsw_shp_better(double g1, double p1, double g2, double p2)
{
    return g1 > g2 || (g1 == g2 && tsw_shp_gap_key(p1) > tsw_shp_gap_key(p2));
}

/*
 * Best split of an order line: d (n,) ascending, lab (n,) the class of each. total (C,) the
 * class counts, nent = tsw_shp_nentropy(total, C, n), xlogx the (n + 1,) table of
 * tsw_shp_gain, left (C,) scratch. Returns 1 and the
 * split's gain, gap and threshold, or 0 when every neighbour pair is a tie (no split).
 */
TSW_HD int tsw_shp_best_split(const double *d, const int32_t *lab, int64_t n, int C,
                              const int64_t *total, double nent, const double *xlogx,
                              int64_t *left, double *gain,
                              double *gap, double *threshold)
{
    double sum_all = 0.0;
    for (int64_t k = 0; k < n; ++k)
        sum_all += d[k];
    for (int c = 0; c < C; ++c)
        left[c] = 0;
    int found = 0;
    double sum_left = 0.0, bg = 0.0, bp = 0.0, bt = 0.0;
    for (int64_t k = 0; k + 1 < n; ++k) {
        left[lab[k]] += 1;
        sum_left += d[k];
        if (!(d[k + 1] - d[k] > TSW_SHAPELET_TIE))
            continue;
        int64_t nl = k + 1;
        double g = tsw_shp_gain(xlogx, nent, left, total, C, nl, n);
        double p = (sum_all - sum_left) / (double)(n - nl) - sum_left / (double)nl;
        if (!found || tsw_shp_better(g, p, bg, bp)) {
            found = 1;
            bg = g;
            bp = p;
            bt = 0.5 * (d[k] + d[k + 1]);
        }
    }
    *gain = bg;
    *gap = bp;
    *threshold = bt;
    return found;
}

/*
 * tsw_shp_best_split of a candidate's sorted order line with the counts it is judged on: all
 * C classes (total, nent), or, one-vs-rest (own >= 0, the class of the candidate's series,
 * labels from tsw_shp_line_label), the two-class counts of own against the rest (btot + 2
 * own, bnent[own]).
 */
TSW_HD int tsw_shp_line_split(const double *d, const int32_t *lab, int64_t n, int32_t own,
                              int C, const int64_t *total, double nent, const int64_t *btot,
                              const double *bnent, const double *xlogx, int64_t *left,
                              double *gain, double *gap, double *threshold)
{
    if (own >= 0)
        return tsw_shp_best_split(d, lab, n, 2, btot + 2 * own, bnent[own], xlogx, left, gain,
                                  gap, threshold);
    return tsw_shp_best_split(d, lab, n, C, total, nent, xlogx, left, gain, gap, threshold);
}

#endif
