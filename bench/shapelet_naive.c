/*
 * Straightforward exhaustive shapelet search, written for bench/shapelets_cpu.py as the
 * baseline: every candidate (i, s, l), every series j, every start u, eq. 2 computed
 * directly (each window z-normalised from its own two-pass mean and std), then the order
 * line sorted with qsort and scanned. O(N^2 L^3) per length set of size O(L) with O(l) per
 * window: no running sums, no reuse, one thread. The conventions are tswarp's (constant
 * windows -> zeros, d^2 < 1e-12 -> 0, ties within 1e-7 on the order line, gain then gap on a
 * 1e-9 grid, then the smaller (series, start, length)) so the answers can be compared.
 *
 * Build: cc -O2 -o shapelet_naive shapelet_naive.c -lm
 * Input (stdin, text): N C minl maxl step, then N lines "label length v0 v1 ...".
 * Output: "series start length threshold gain gap".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct { double d; int lab; } item;

static int cmp(const void *a, const void *b)
{
    double x = ((const item *)a)->d, y = ((const item *)b)->d;
    return (x > y) - (x < y);
}

static double xlogx(double c) { return c > 0 ? c * log(c) : 0.0; }

static double window_d2(const double *a, const double *b, int l)
{
    double ma = 0, mb = 0, va = 0, vb = 0;
    int fa = 1, fb = 1;
    for (int t = 0; t < l; ++t) {
        ma += a[t];
        mb += b[t];
        fa &= a[t] == a[0];
        fb &= b[t] == b[0];
    }
    ma /= l;
    mb /= l;
    for (int t = 0; t < l; ++t) {
        va += (a[t] - ma) * (a[t] - ma);
        vb += (b[t] - mb) * (b[t] - mb);
    }
    double sa = sqrt(va / l), sb = sqrt(vb / l);
    if (!fa && !fb && !(sa > 0 && sb > 0))
        return 2.0;
    double ia = fa ? 0 : 1 / sa, ib = fb ? 0 : 1 / sb, s = 0;
    for (int t = 0; t < l; ++t) {
        double e = (a[t] - ma) * ia - (b[t] - mb) * ib;
        s += e * e;
    }
    s /= l;
    return s < 1e-12 ? 0.0 : s;
}

int main(void)
{
    int N, C, minl, maxl, step;
    if (scanf("%d %d %d %d %d", &N, &C, &minl, &maxl, &step) != 5)
        return 1;
    double **x = malloc(N * sizeof(double *));
    int *len = malloc(N * sizeof(int)), *lab = malloc(N * sizeof(int));
    for (int i = 0; i < N; ++i) {
        if (scanf("%d %d", &lab[i], &len[i]) != 2)
            return 1;
        x[i] = malloc(len[i] * sizeof(double));
        for (int t = 0; t < len[i]; ++t)
            if (scanf("%lf", &x[i][t]) != 1)
                return 1;
    }
    int *total = calloc(C, sizeof(int)), *left = calloc(C, sizeof(int));
    for (int i = 0; i < N; ++i)
        total[lab[i]]++;
    double nent = xlogx(N);
    for (int c = 0; c < C; ++c)
        nent -= xlogx(total[c]);
    item *line = malloc(N * sizeof(item));
    double bg = 0, bp = 0, bt = 0;
    int bi = -1, bs = 0, bl = 0;
    for (int i = 0; i < N; ++i)
        for (int s = 0; s < len[i]; ++s)
            for (int l = minl; l <= maxl && s + l <= len[i]; l += step) {
                for (int j = 0; j < N; ++j) {
                    double best = INFINITY;
                    for (int u = 0; u + l <= len[j]; ++u) {
                        double v = window_d2(x[i] + s, x[j] + u, l);
                        best = v < best ? v : best;
                    }
                    line[j].d = sqrt(best);
                    line[j].lab = lab[j];
                }
                qsort(line, N, sizeof(item), cmp);
                double all = 0, sl = 0;
                for (int k = 0; k < N; ++k)
                    all += line[k].d;
                for (int c = 0; c < C; ++c)
                    left[c] = 0;
                for (int k = 0; k + 1 < N; ++k) {
                    left[line[k].lab]++;
                    sl += line[k].d;
                    if (!(line[k + 1].d - line[k].d > 1e-7))
                        continue;
                    int nl = k + 1;
                    double sum = 0;
                    for (int c = 0; c < C; ++c)
                        sum += xlogx(left[c]) + xlogx(total[c] - left[c]);
                    double g = (nent - ((xlogx(nl) + xlogx(N - nl)) - sum)) / N;
                    double p = (all - sl) / (N - nl) - sl / nl;
                    if (bi < 0 || g > bg || (g == bg && floor(p * 1e9 + 0.5) > floor(bp * 1e9 + 0.5))) {
                        bg = g, bp = p, bt = 0.5 * (line[k].d + line[k + 1].d);
                        bi = i, bs = s, bl = l;
                    }
                }
            }
    printf("%d %d %d %.17g %.17g %.17g\n", bi, bs, bl, bt, bg, bp);
    return 0;
}
