/*
 * Dispatch of nearest-neighbour work: tsw_envelope, tsw_lower_bound, tsw_knn, tsw_search.
 * Validates, makes the cosine cost's unit copies (as api.c does), then runs the CPU
 * backend (cpu/knn.c, cpu/search.c), or for tsw_knn on a GPU the CUDA batch kernels over
 * tiles of x with the top k merged here on the host.
 */
#include "internal.h"

#include <string.h>

static int tsw__nb_common(const tsw_params *params, tsw_dtype dtype, int64_t dim)
{
    int rc;
    if (!params)
        return TSW_EINVAL;
    if ((rc = tsw__check_params(params)))
        return rc;
    if (dtype != TSW_F32 && dtype != TSW_F64)
        return TSW_EDTYPE;
    if (dtype == TSW_F32 && (rc = tsw__check_params_f32(params)))
        return rc;
    if (dim < 1)
        return TSW_ESHAPE;
    return TSW_OK;
}

int tsw_envelope(const tsw_params *params, tsw_dtype dtype, int64_t dim, const tsw_series *s,
                 int s_is_b, int64_t other_length, void *lower, void *upper)
{
    tsw__clear_detail();
    int rc = tsw__nb_common(params, dtype, dim);
    if (rc)
        return rc;
    if (!lower || !upper || (s_is_b != 0 && s_is_b != 1))
        return TSW_EINVAL;
    if (other_length < 1)
        return TSW_ESHAPE;
    size_t bytes;
    if (tsw__mul_size((size_t)other_length, (size_t)dim, &bytes) ||
        tsw__mul_size(bytes, 8, &bytes) || bytes > (size_t)INT64_MAX)
        return TSW_EOVERFLOW;
    if ((rc = tsw__check_series(dtype, dim, s, 0)))
        return rc;
    return tsw__cpu_envelope(params, dtype, dim, s, s_is_b, other_length, lower, upper);
}

/* The bounds' own conditions: DTW, a kind, bands, a cost the box bounds hold for. */
static int tsw__check_lb(const tsw_params *params, tsw_lb kind, int64_t bands, int64_t dim)
{
    if (params->measure != TSW_DTW) {
        tsw__set_detail("lower bounds are those of DTW (metric='dtw')");
        return TSW_ENOTSUP;
    }
    if (kind < TSW_LB_KIM || kind > TSW_LB_WEBB) {
        tsw__set_detail("unknown lower bound %d", (int)kind);
        return TSW_EPARAM;
    }
    if (kind == TSW_LB_ENHANCED && bands < 1) {
        tsw__set_detail("bands must be >= 1, got %lld", (long long)bands);
        return TSW_EPARAM;
    }
    if (kind != TSW_LB_KIM && params->cost == TSW_COST_COSINE) {
        tsw__set_detail("LB_Keogh and the bounds built on it need a cost that grows with each "
                        "coordinate's distance; the cosine cost has only LB_Kim");
        return TSW_ENOTSUP;
    }
    if ((kind == TSW_LB_IMPROVED || kind == TSW_LB_WEBB) &&
        params->cost == TSW_COST_EUCLIDEAN && dim > 1) {
        tsw__set_detail("%s holds for the sqeuclidean and abs costs (and euclidean for dim 1), "
                        "not for the euclidean cost of dim > 1",
                        kind == TSW_LB_WEBB ? "LB_Webb" : "LB_Improved");
        return TSW_ENOTSUP;
    }
    return TSW_OK;
}

int tsw_lower_bound(const tsw_params *params, tsw_lb kind, int64_t bands, tsw_dtype dtype,
                    int64_t dim, const tsw_series *query, const tsw_collection *x, double *out,
                    const tsw_exec *exec)
{
    tsw__clear_detail();
    tsw_exec ex;
    int rc;
    if (exec)
        ex = *exec;
    else
        tsw_exec_default(&ex);
    if ((rc = tsw__check_batch(params, dtype, dim, &ex, out)) ||
        (rc = tsw__check_lb(params, kind, bands, dim)))
        return rc;
    if ((rc = tsw__check_series(dtype, dim, query, 0)) ||
        (rc = tsw__check_collection(dtype, dim, x, 0)))
        return rc;
    if (params->cost != TSW_COST_COSINE)
        return tsw__cpu_lower_bound(params, kind, bands, dtype, dim, query, x, out, &ex);
    tsw_series uq;
    tsw_collection ux;
    void *bq = NULL, *bx = NULL;
    rc = tsw__unit_series(dtype, dim, query, &uq, &bq);
    if (!rc)
        rc = tsw__unit_collection(dtype, dim, x, &ux, &bx);
    if (!rc)
        rc = tsw__cpu_lower_bound(params, kind, bands, dtype, dim, &uq, &ux, out, &ex);
    tsw__free(bq);
    tsw__free(bx);
    return rc;
}

#ifdef TSWARP_WITH_CUDA
/* The GPU's batch kernels over tiles of x, each tile's block of the matrix merged into the
 * rows' top k here: (value, index) order, as a stable sort of the row gives. */
static int tsw__knn_cuda(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                         const tsw_collection *q, const tsw_collection *x, int64_t k,
                         void *distance, int64_t *index, const tsw_exec *ex)
{
    const size_t esz = tsw__dtype_size(dtype);
    const int64_t nq = q->count;
    int64_t tile = (int64_t)((256u << 20) / esz) / nq;
    if (tile < 1)
        tile = 1;
    if (tile > x->count)
        tile = x->count;
    size_t block_bytes = (size_t)nq * (size_t)tile * esz;
    void *block = tsw__malloc(block_bytes);
    double *bv = tsw__malloc((size_t)nq * (size_t)k * sizeof(double));
    int64_t *bi = tsw__malloc((size_t)nq * (size_t)k * sizeof(int64_t));
    int64_t *have = tsw__malloc((size_t)nq * sizeof(int64_t));
    int64_t *offs = x->offsets ? NULL : tsw__malloc((size_t)tile * sizeof(int64_t));
    int rc = TSW_OK;
    if (!block || !bv || !bi || !have || (!x->offsets && !offs)) {
        rc = TSW_ENOMEM;
        goto out;
    }
    memset(have, 0, (size_t)nq * sizeof(int64_t));
    tsw_exec tex = *ex;
    tex.progress = NULL; /* reported here, per tile */
    for (int64_t j0 = 0; j0 < x->count; j0 += tile) {
        int64_t cnt = x->count - j0 < tile ? x->count - j0 : tile;
        tsw_collection sub = *x;
        sub.count = cnt;
        if (x->offsets) {
            sub.offsets = x->offsets + j0;
            sub.lengths = x->lengths ? x->lengths + j0 : NULL;
        } else {
            for (int64_t t = 0; t < cnt; ++t)
                offs[t] = (j0 + t) * x->length;
            sub.offsets = offs;
        }
        if ((rc = tsw__cuda_cdist(params, dtype, dim, q, &sub, block, &tex)))
            goto out;
        for (int64_t i = 0; i < nq; ++i) {
            double *rv = bv + i * k;
            int64_t *ri = bi + i * k;
            for (int64_t t = 0; t < cnt; ++t) {
                double v = dtype == TSW_F32 ? (double)((float *)block)[i * cnt + t]
                                            : ((double *)block)[i * cnt + t];
                if (v != v)
                    v = HUGE_VAL;
                int64_t h = have[i], j = j0 + t;
                if (h == k && !(v < rv[h - 1]))
                    continue; /* ties go to the earlier index, already in */
                int64_t pos = h < k ? h : h - 1;
                while (pos > 0 && rv[pos - 1] > v) {
                    rv[pos] = rv[pos - 1];
                    ri[pos] = ri[pos - 1];
                    --pos;
                }
                rv[pos] = v;
                ri[pos] = j;
                if (h < k)
                    have[i] = h + 1;
            }
        }
        if (ex->progress &&
            ex->progress(ex->progress_user, nq * (j0 + cnt), nq * x->count)) {
            rc = TSW_ECANCELED;
            goto out;
        }
    }
    for (int64_t t = 0; t < nq * k; ++t) {
        if (dtype == TSW_F32)
            ((float *)distance)[t] = (float)bv[t];
        else
            ((double *)distance)[t] = bv[t];
        index[t] = bi[t];
    }
out:
    tsw__free(block);
    tsw__free(bv);
    tsw__free(bi);
    tsw__free(have);
    tsw__free(offs);
    return rc;
}
#endif

#ifdef TSWARP_WITH_CUDA
/* knn on one GPU: the pruned DTW kernels, else the batch kernels over tiles of x. */
static int tsw__knn_gpu(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                        const tsw_collection *q, const tsw_collection *x, int64_t k,
                        void *distance, int64_t *index, const tsw_exec *ex)
{
    int rc = tsw__cuda_knn_dtw(params, dtype, dim, q, x, k, distance, index, ex);
    if (rc == TSW_ENOTSUP) {
        tsw__clear_detail();
        rc = tsw__knn_cuda(params, dtype, dim, q, x, k, distance, index, ex);
    }
    return rc;
}
#endif

static int tsw__knn(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                    const tsw_collection *q, const tsw_collection *x, int64_t k,
                    void *distance, int64_t *index, const tsw_exec *ex)
{
#ifdef TSWARP_WITH_CUDA
    /* AUTO and DTW: the GPU's pruned kernels on large work of one length per collection
     * (a tenth of the full grid's cells counted, as the CPU's cascade prunes too), else
     * the CPU's cascade */
    if (ex->device == TSW_DEVICE_AUTO && params->measure == TSW_DTW) {
        if (!q->lengths && !x->lengths && !q->offsets && !x->offsets &&
            tsw__cuda_auto(ex, 0.1 * (double)q->count * (double)q->length * (double)x->count *
                                   (double)x->length * (double)dim)) {
            int rc = tsw__multi(ex) ? tsw__multi_knn(params, dtype, dim, q, x, k, distance,
                                                     index, ex, tsw__knn_gpu)
                                    : tsw__cuda_knn_dtw(params, dtype, dim, q, x, k, distance,
                                                        index, ex);
            if (rc != TSW_ENOTSUP && !tsw__cuda_fallback(ex, rc))
                return rc;
            tsw__clear_detail();
        }
        return tsw__cpu_knn(params, dtype, dim, q, x, k, distance, index, ex);
    }
    if (ex->device == TSW_DEVICE_CUDA ||
        (ex->device == TSW_DEVICE_AUTO && params->measure != TSW_DTW &&
         tsw__cuda_auto(ex, (double)q->count * (double)x->count * (double)dim * 1024.0))) {
        int rc = tsw__multi(ex) ? tsw__multi_knn(params, dtype, dim, q, x, k, distance, index,
                                                 ex, tsw__knn_gpu)
                                : tsw__knn_gpu(params, dtype, dim, q, x, k, distance, index, ex);
        if (!tsw__cuda_fallback(ex, rc))
            return rc;
    }
#endif
    return tsw__cpu_knn(params, dtype, dim, q, x, k, distance, index, ex);
}

int tsw_knn(const tsw_params *params, tsw_dtype dtype, int64_t dim, const tsw_collection *q,
            const tsw_collection *x, int64_t k, void *distance, int64_t *index,
            const tsw_exec *exec)
{
    tsw__clear_detail();
    tsw_exec ex;
    int rc;
    if (exec)
        ex = *exec;
    else
        tsw_exec_default(&ex);
    if ((rc = tsw__check_batch(params, dtype, dim, &ex, distance)))
        return rc;
    if (!index || !q || !x)
        return TSW_EINVAL;
    if (q->count < 1 || x->count < 1)
        return TSW_ESHAPE;
    if (k < 1 || k > x->count) {
        tsw__set_detail("k must be in [1, %lld] (the series of x), got %lld",
                        (long long)x->count, (long long)k);
        return TSW_EPARAM;
    }
    size_t cells;
    if (tsw__mul_size((size_t)q->count, (size_t)k, &cells) ||
        tsw__mul_size(cells, 16, &cells))
        return TSW_EOVERFLOW;
    int twed = tsw__series_flags(params);
    if ((rc = tsw__check_collection(dtype, dim, q, twed)) ||
        (rc = tsw__check_collection(dtype, dim, x, twed)))
        return rc;
    if (!(params->measure == TSW_DTW && params->cost == TSW_COST_COSINE))
        return tsw__knn(params, dtype, dim, q, x, k, distance, index, &ex);
    tsw_collection uq, ux;
    void *bq = NULL, *bx = NULL;
    rc = tsw__unit_pair(dtype, dim, q, x, &uq, &ux, &bq, &bx);
    if (!rc)
        rc = tsw__knn(params, dtype, dim, &uq, &ux, k, distance, index, &ex);
    tsw__free(bq);
    tsw__free(bx);
    return rc;
}

#ifdef TSWARP_WITH_CUDA
/* The GPU finds the candidate windows; the CPU recomputes them exactly and chooses (the
 * same matches and distances as the CPU search). */
static int tsw__search_cuda(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                            const tsw_series *query, const tsw_series *series, int znorm,
                            int64_t exclusion, int64_t k, int on_device, int64_t *starts,
                            double *distances, int64_t *count, tsw_search_stats *stats,
                            const tsw_exec *ex)
{
    const size_t nd = (size_t)query->length * (size_t)dim;
    double *q = tsw__malloc(nd * 3 * sizeof(double)), *win = NULL;
    int64_t *cand = NULL, ncand = 0, r;
    tsw_search_stats st;
    if (!q)
        return TSW_ENOMEM;
    int rc = tsw__search_query(params, dtype, dim, query, znorm, q, q + nd, q + 2 * nd, &r);
    if (!rc)
        rc = tsw__multi(ex) && !on_device
                 ? tsw__multi_search(params, dtype, dim, q, q + nd, q + 2 * nd, query->length,
                                     r, series, znorm, exclusion, k, &cand, &ncand, &st, ex)
                 : tsw__cuda_search(params, dtype, dim, q, q + nd, q + 2 * nd, query->length,
                                    r, series, znorm, exclusion, k, on_device, &cand, &ncand,
                                    &st, ex);
    if (!rc && on_device) { /* the candidates' values, to the host for the exact choice */
        size_t bytes;
        if (tsw__mul_size((size_t)(ncand + 1), nd * sizeof(double), &bytes))
            rc = TSW_EOVERFLOW;
        else if (!(win = tsw__malloc(bytes)))
            rc = TSW_ENOMEM;
        else
            rc = tsw__cuda_search_windows(dtype, dim, series, query->length, cand, ncand, win,
                                          ex);
    }
    if (!rc)
        rc = tsw__search_exact(params, dtype, dim, q, query->length, r, series, win, znorm,
                               exclusion, k, cand, ncand, starts, distances, count);
    tsw__free(win);
    if (!rc && stats)
        *stats = st;
    if (!rc && ex->progress && ex->progress(ex->progress_user, st.windows, st.windows))
        rc = TSW_ECANCELED;
    tsw__free(q);
    tsw__free(cand);
    return rc;
}
#endif

/* tsw_search's and tsw_search_device's checks of everything but the series' values. */
static int tsw__search_check(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                             const tsw_series *query, const tsw_series *series, int znorm,
                             int64_t exclusion, int64_t k, int64_t *starts, double *distances,
                             int64_t *count, tsw_exec *ex)
{
    int rc;
    if ((rc = tsw__check_batch(params, dtype, dim, ex, starts)))
        return rc;
    if (!distances || !count || !query || !series || (znorm != 0 && znorm != 1))
        return TSW_EINVAL;
    if (params->measure != TSW_DTW) {
        tsw__set_detail("search() computes DTW (metric='dtw')");
        return TSW_ENOTSUP;
    }
    if (params->window == TSW_WINDOW_ITAKURA) {
        tsw__set_detail("search() takes a Sakoe-Chiba window (window or radius), not Itakura");
        return TSW_ENOTSUP;
    }
    if (params->cost == TSW_COST_COSINE) {
        tsw__set_detail("search() takes the sqeuclidean, euclidean or abs cost");
        return TSW_ENOTSUP;
    }
    if (k < 1) {
        tsw__set_detail("k must be >= 1, got %lld", (long long)k);
        return TSW_EPARAM;
    }
    if (exclusion < 1) {
        tsw__set_detail("exclusion must be >= 1, got %lld", (long long)exclusion);
        return TSW_EPARAM;
    }
    if ((rc = tsw__check_series(dtype, dim, query, 0)))
        return rc;
    if ((rc = tsw__check_series_shape(dim, series)))
        return rc;
    if (query->length > series->length) {
        tsw__set_detail("the query (%lld points) is longer than the series (%lld points)",
                        (long long)query->length, (long long)series->length);
        return TSW_ESHAPE;
    }
    if (k > series->length - query->length + 1) {
        tsw__set_detail("k = %lld is more than the series' %lld windows", (long long)k,
                        (long long)(series->length - query->length + 1));
        return TSW_EPARAM;
    }
    return TSW_OK;
}

int tsw_search(const tsw_params *params, tsw_dtype dtype, int64_t dim, const tsw_series *query,
               const tsw_series *series, int znorm, int64_t exclusion, int64_t k,
               int64_t *starts, double *distances, int64_t *count, tsw_search_stats *stats,
               const tsw_exec *exec)
{
    tsw__clear_detail();
    tsw_exec ex;
    int rc;
    if (exec)
        ex = *exec;
    else
        tsw_exec_default(&ex);
    if ((rc = tsw__search_check(params, dtype, dim, query, series, znorm, exclusion, k, starts,
                                distances, count, &ex)))
        return rc;
#ifdef TSWARP_WITH_CUDA
    const int64_t W = series->length - query->length + 1;
    if (ex.device == TSW_DEVICE_CUDA ||
        (ex.device == TSW_DEVICE_AUTO && tsw__cuda_auto(&ex, (double)W * (double)dim * 50))) {
        /* the GPU checks the series' values as each chunk arrives (a pass over them here
         * would take longer than their copy); a NaN or infinity found there is reported
         * by the host's check, with its detail */
        rc = tsw__search_cuda(params, dtype, dim, query, series, znorm, exclusion, k, 0,
                              starts, distances, count, stats, &ex);
        if (rc == TSW_ENONFINITE) {
            const int hrc = tsw__check_series(dtype, dim, series, 0);
            return hrc ? hrc : rc;
        }
        if (!tsw__cuda_fallback(&ex, rc))
            return rc;
    }
#endif
    if ((rc = tsw__check_series(dtype, dim, series, 0)))
        return rc;
    return tsw__cpu_search(params, dtype, dim, query, series, znorm, exclusion, k, starts,
                           distances, count, stats, &ex);
}

int tsw_search_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                      const tsw_series *query, const tsw_series *series, int znorm,
                      int64_t exclusion, int64_t k, int64_t *starts, double *distances,
                      int64_t *count, tsw_search_stats *stats, const tsw_exec *exec)
{
    tsw__clear_detail();
    tsw_exec ex;
    int rc;
    if (exec)
        ex = *exec;
    else
        tsw_exec_default(&ex);
    if ((rc = tsw__search_check(params, dtype, dim, query, series, znorm, exclusion, k, starts,
                                distances, count, &ex)))
        return rc;
#ifdef TSWARP_WITH_CUDA
    ex.device = TSW_DEVICE_CUDA;
    if ((rc = tsw__cuda_check_finite(dtype, series->values, series->length * dim, &ex))) {
        if (rc == TSW_ENONFINITE)
            tsw__set_detail("the series (device memory) contains NaN or infinity");
        return rc;
    }
    return tsw__search_cuda(params, dtype, dim, query, series, znorm, exclusion, k, 1, starts,
                            distances, count, stats, &ex);
#else
    (void)stats;
    tsw__set_detail("tswarp was built without its CUDA backend");
    return TSW_ENODEV;
#endif
}
