/*
 * Shapelets' public entry points (include/tswarp.h, "Shapelets"): defaults, validation,
 * the standardised data and the job (shapelet_job.h), then one backend: the GPU
 * (cuda/shapelet.cu, through tsw__shp_gpu_job; TSW_DEVICE_AUTO falls back to the CPU when
 * it is missing or too small) or the CPU (cpu/shapelet.c). Both give the same candidates
 * bit for bit, so everything after them (the best of all, the merged per-series lists, the
 * one-vs-rest balance, raw data's units) is done here once.
 */
#include "shapelet_job.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void tsw_shapelet_params_default(tsw_shapelet_params *p)
{
    memset(p, 0, sizeof(*p));
    p->min_length = 3;
    p->max_length = 0;
    p->length_step = 1;
    p->n_classes = 0;
    p->logic = TSW_LOGIC_NONE;
    p->partner = NULL;
    p->dilation = 1;
    p->one_vs_rest = 0;
    p->raw = 0;
}

/* ---- standardised data ------------------------------------------------------------------ */

/* (tsw__shp_data: shapelet_job.h) */

static void shp_data_free(tsw__shp_data *d)
{
    tsw__free(d->off);
    tsw__free(d->z);
    tsw__free(d->P);
    tsw__free(d->run);
    d->off = d->len = d->run = NULL;
    d->z = d->P = d->Q = NULL;
}

static double shp_value(tsw_dtype dt, const void *v, int64_t k)
{
    return dt == TSW_F32 ? (double)((const float *)v)[k] : ((const double *)v)[k];
}

/* Mean and population std of all the values of a collection (std 0 -> 1): the shift and
 * scale of raw data. */
/* 2^-e with max |x| = f 2^e (f in [0.5, 1)): multiplying by it is exact, brings the values
 * near 1, and keeps sums of squares finite for values near 1e154 and normal near 1e-160
 * (z-normalisation is scale invariant, so the result is the same bits where nothing
 * overflowed or underflowed). 1 for all-zero values. */
static double shp_pow2_scale(double amax)
{
    int e = 0;
    if (!(amax > 0.0) || !(amax <= DBL_MAX))
        return 1.0;
    (void)frexp(amax, &e);
    return ldexp(1.0, -e);
}

static void shp_coll_stats(tsw_dtype dt, const tsw_collection *c, double *shift, double *scale)
{
    const size_t esz = tsw__dtype_size(dt);
    double sum = 0.0, var = 0.0, amax = 0.0;
    int64_t rows = 0;
    for (int64_t i = 0; i < c->count; ++i) {
        const int64_t n = tsw__coll_len(c, i);
        const char *src = (const char *)c->values + (size_t)tsw__coll_off(c, i) * esz;
        for (int64_t t = 0; t < n; ++t)
            amax = fmax(amax, fabs(shp_value(dt, src, t)));
    }
    const double k = shp_pow2_scale(amax); /* sums of the values times k: no overflow */
    for (int64_t i = 0; i < c->count; ++i) {
        const int64_t n = tsw__coll_len(c, i);
        const char *src = (const char *)c->values + (size_t)tsw__coll_off(c, i) * esz;
        for (int64_t t = 0; t < n; ++t)
            sum += shp_value(dt, src, t) * k;
        rows += n;
    }
    const double mean = rows > 0 ? sum / (double)rows : 0.0;
    for (int64_t i = 0; i < c->count; ++i) {
        const int64_t n = tsw__coll_len(c, i);
        const char *src = (const char *)c->values + (size_t)tsw__coll_off(c, i) * esz;
        for (int64_t t = 0; t < n; ++t) {
            const double v = shp_value(dt, src, t) * k - mean;
            var += v * v;
        }
    }
    const double sd = rows > 0 ? sqrt(var / (double)rows) / k : 0.0;
    *shift = mean / k;
    *scale = sd > 0.0 && sd <= DBL_MAX ? sd : 1.0;
}

/* Checks the collection (univariate, finite, lengths >= 1) and standardises it: each series
 * on its own, or, raw, all of them by ref[0] (shift) and ref[1] (scale), or by the
 * collection's own when ref is NULL. */
static int shp_data_make(tsw_dtype dt, const tsw_collection *c, tsw__shp_data *d, int raw,
                         const double *ref)
{
    memset(d, 0, sizeof(*d));
    if (!c || !c->values)
        return TSW_EINVAL;
    if (c->count < 1)
        return TSW_ESHAPE;
    if (dt != TSW_F32 && dt != TSW_F64)
        return TSW_EDTYPE;
    if (tsw__check_extent(c, 1, tsw__dtype_size(dt)))
        return TSW_EOVERFLOW;
    int64_t rows = 0;
    for (int64_t i = 0; i < c->count; ++i) {
        int rc = tsw__check_span(c, i, 1, tsw__dtype_size(dt));
        if (rc)
            return rc == TSW_EINVAL ? TSW_ESHAPE : rc;
        int64_t n = tsw__coll_len(c, i);
        if (n > INT64_MAX / 16 - rows - c->count)
            return TSW_EOVERFLOW;
        rows += n;
    }
    size_t zb, pb, ob;
    if (tsw__mul_size((size_t)rows, sizeof(double), &zb) ||
        tsw__mul_size((size_t)(rows + c->count), 2 * sizeof(double), &pb) ||
        tsw__mul_size((size_t)c->count, 2 * sizeof(int64_t), &ob))
        return TSW_EOVERFLOW;
    d->count = c->count;
    d->off = tsw__malloc(ob);
    d->z = tsw__malloc(zb);
    d->P = tsw__malloc(pb);
    d->run = tsw__malloc(zb);
    if (!d->off || !d->z || !d->P || !d->run) {
        shp_data_free(d);
        return TSW_ENOMEM;
    }
    d->len = d->off + c->count;
    d->Q = d->P + (rows + c->count);
    d->raw = raw;
    d->shift = 0.0;
    d->scale = 1.0;
    const size_t esz = tsw__dtype_size(dt);
    for (int64_t i = 0; i < c->count; ++i) /* finite first: raw data's stats sum them all */
        if (tsw__check_finite(dt, (const char *)c->values + (size_t)tsw__coll_off(c, i) * esz,
                              tsw__coll_len(c, i))) {
            shp_data_free(d);
            return TSW_ENONFINITE;
        }
    if (raw && ref) {
        d->shift = ref[0];
        d->scale = ref[1];
    } else if (raw) {
        shp_coll_stats(dt, c, &d->shift, &d->scale);
    }
    int64_t row = 0;
    for (int64_t i = 0; i < c->count; ++i) {
        int64_t n = tsw__coll_len(c, i);
        const char *src = (const char *)c->values + (size_t)tsw__coll_off(c, i) * esz;
        d->off[i] = row;
        d->len[i] = n;
        double mean = d->shift, inv = 1.0 / d->scale; /* raw: the collection's */
        double k = 1.0; /* the values are read times k, an exact power of two */
        if (!raw) { /* the series' own, on the values scaled near 1 (shp_pow2_scale) */
            double var = 0.0, amax = 0.0;
            for (int64_t t = 0; t < n; ++t)
                amax = fmax(amax, fabs(shp_value(dt, src, t)));
            k = shp_pow2_scale(amax);
            mean = 0.0;
            for (int64_t t = 0; t < n; ++t)
                mean += shp_value(dt, src, t) * k;
            mean /= (double)n;
            for (int64_t t = 0; t < n; ++t) {
                double v = shp_value(dt, src, t) * k - mean;
                var += v * v;
            }
            double sd = sqrt(var / (double)n);
            inv = sd > 0.0 ? 1.0 / sd : 0.0;
        }
        double *z = d->z + row, *P = d->P + row + i, *Q = d->Q + row + i;
        P[0] = Q[0] = 0.0;
        for (int64_t t = 0; t < n; ++t) {
            z[t] = (shp_value(dt, src, t) * k - mean) * inv;
            P[t + 1] = P[t] + z[t];
            Q[t + 1] = Q[t] + z[t] * z[t];
        }
        int64_t *run = d->run + row;
        run[n - 1] = 1;
        for (int64_t t = n - 1; t-- > 0;)
            run[t] = shp_value(dt, src, t) == shp_value(dt, src, t + 1) ? run[t + 1] + 1 : 1;
        row += n;
    }
    return TSW_OK;
}

/* ---- validation shared by search and top --------------------------------------------------- */

/* The gd phases of each series orig[g] (g < ng) of x, in double, back to back: phase p of
 * series g is row g gd + p of the collection pc, whose buffers *vals and *offs (offsets, then
 * lengths) the caller frees. */
static int shp_phases(tsw_dtype dt, const tsw_collection *x, const int64_t *orig, int64_t ng,
                      int64_t gd, tsw_collection *pc, double **vals, int64_t **offs)
{
    int64_t rows = 0;
    for (int64_t g = 0; g < ng; ++g)
        rows += tsw__coll_len(x, orig[g]); /* checked against overflow by the caller */
    size_t ob;
    if (tsw__mul_size((size_t)ng, 2 * (size_t)gd * sizeof(int64_t), &ob))
        return TSW_EOVERFLOW;
    *vals = tsw__malloc((size_t)rows * sizeof(double));
    *offs = tsw__malloc(ob);
    if (!*vals || !*offs) {
        tsw__free(*vals);
        tsw__free(*offs);
        *vals = NULL;
        *offs = NULL;
        return TSW_ENOMEM;
    }
    int64_t *off = *offs, *len = off + ng * gd, row = 0;
    for (int64_t g = 0; g < ng; ++g) {
        const int64_t n = tsw__coll_len(x, orig[g]);
        const char *src = (const char *)x->values +
                          (size_t)tsw__coll_off(x, orig[g]) * tsw__dtype_size(dt);
        for (int64_t ph = 0; ph < gd; ++ph) {
            off[g * gd + ph] = row;
            len[g * gd + ph] = (n - ph + gd - 1) / gd; /* >= 1: n >= gd */
            for (int64_t t = ph; t < n; t += gd)
                (*vals)[row++] = shp_value(dt, src, t);
        }
    }
    memset(pc, 0, sizeof(*pc));
    pc->values = *vals;
    pc->offsets = off;
    pc->lengths = len;
    pc->count = ng * gd;
    return TSW_OK;
}

static void shp_job_free(tsw__shp_job *J, tsw__shp_data *d);

static int shp_job_make(const tsw_shapelet_params *p, tsw_dtype dt, const tsw_collection *x,
                        const int32_t *labels, const int64_t *subset, int64_t n_subset,
                        const tsw_exec *exec, tsw__shp_job *J, tsw__shp_data *d)
{
    int rc;
    memset(J, 0, sizeof(*J));
    memset(d, 0, sizeof(*d));
    if (!p || !x || !labels)
        return TSW_EINVAL;
    if ((rc = tsw__check_exec(exec)))
        return rc;
    if (p->n_classes < 2 || p->min_length < 2 || p->length_step < 1 || p->max_length < 0 ||
        (p->max_length && p->max_length < p->min_length) || p->dilation < 1 ||
        (p->one_vs_rest != 0 && p->one_vs_rest != 1) || (p->raw != 0 && p->raw != 1) ||
        (p->logic != TSW_LOGIC_NONE && p->logic != TSW_LOGIC_AND && p->logic != TSW_LOGIC_OR))
        return TSW_EPARAM;
    if (p->logic != TSW_LOGIC_NONE && !p->partner)
        return TSW_EINVAL;
    if (!x->values)
        return TSW_EINVAL;
    if (x->count < 2 || (subset && n_subset < 2))
        return TSW_ESHAPE;
    if (dt != TSW_F32 && dt != TSW_F64)
        return TSW_EDTYPE;
    const int64_t ng = subset ? n_subset : x->count, gd = p->dilation;
    int64_t longest = 0;
    for (int64_t k = 0; k < ng; ++k) {
        int64_t j = subset ? subset[k] : k;
        if (j < 0 || j >= x->count)
            return TSW_EINVAL;
        if (labels[j] < 0 || labels[j] >= p->n_classes)
            return TSW_EINVAL;
        if (p->logic != TSW_LOGIC_NONE && !(p->partner[k] >= 0.0 && p->partner[k] < TSW_INF_F64))
            return TSW_EINVAL;
        int rc = tsw__check_span(x, j, 1, sizeof(double));
        if (rc)
            return rc == TSW_EINVAL ? TSW_ESHAPE : rc;
        int64_t n = tsw__coll_len(x, j);
        if (n < gd) /* n >= 1, and no phase is empty */
            return TSW_ESHAPE;
        longest = n > longest ? n : longest;
    }
    /* every phase of the longest series holds the longest candidate; shorter series slide
     * along the candidates they cannot hold (shp_fill_reference) */
    const int64_t room = longest / gd;
    int64_t maxl = p->max_length ? p->max_length : room;
    if (p->min_length > room || maxl > room)
        return TSW_ESHAPE;
    const int64_t ns = ng * gd;
    size_t bytes;
    if (ns / gd != ng || tsw__mul_size((size_t)ns, sizeof(int64_t), &bytes) ||
        tsw__mul_size((size_t)ng, 2 * sizeof(int64_t) + sizeof(int32_t), &bytes) ||
        tsw__mul_size((size_t)p->n_classes, sizeof(int64_t), &bytes))
        return TSW_EOVERFLOW;
    J->sub = tsw__malloc(((size_t)ns + (size_t)p->n_classes + (size_t)ng) * sizeof(int64_t));
    J->glab = tsw__malloc((size_t)ng * sizeof(int32_t));
    J->xlogx = tsw__malloc(((size_t)ng + 1) * sizeof(double));
    J->btot = tsw__malloc(2 * (size_t)p->n_classes * sizeof(int64_t));
    J->bnent = tsw__malloc((size_t)p->n_classes * sizeof(double));
    if (!J->sub || !J->glab || !J->xlogx || !J->btot || !J->bnent) {
        shp_job_free(J, d);
        return TSW_ENOMEM;
    }
    J->total = J->sub + ns;
    J->orig = J->total + p->n_classes;
    for (int64_t c = 0; c <= ng; ++c)
        J->xlogx[c] = tsw_shp_xlogx(c);
    for (int c = 0; c < p->n_classes; ++c)
        J->total[c] = 0;
    for (int64_t k = 0; k < ng; ++k) {
        J->orig[k] = subset ? subset[k] : k;
        J->glab[k] = labels[J->orig[k]];
        J->total[J->glab[k]] += 1;
    }
    for (int c = 0; c < p->n_classes; ++c) {
        J->btot[2 * c] = ng - J->total[c];
        J->btot[2 * c + 1] = J->total[c];
        J->bnent[c] = tsw_shp_nentropy(J->btot + 2 * c, 2, ng);
    }
    /* distinct indices: a repeated series would be counted twice */
    for (int64_t k = 1; subset && k < ng; ++k)
        for (int64_t m = 0; m < k; ++m)
            if (J->orig[m] == J->orig[k]) {
                shp_job_free(J, d);
                return TSW_EINVAL;
            }
    if (gd == 1) {
        memcpy(J->sub, J->orig, (size_t)ng * sizeof(int64_t));
        rc = shp_data_make(dt, x, d, p->raw, NULL);
    } else {
        /* only the searched series are split: sub is every row of the phase collection */
        tsw_collection pc;
        double *vals = NULL;
        int64_t *offs = NULL;
        for (int64_t k = 0; k < ns; ++k)
            J->sub[k] = k;
        rc = shp_phases(dt, x, J->orig, ng, gd, &pc, &vals, &offs);
        if (rc == TSW_OK) {
            rc = shp_data_make(TSW_F64, &pc, d, p->raw, NULL); /* which keeps its own copy */
            tsw__free(vals);
            tsw__free(offs);
        }
    }
    if (rc) {
        shp_job_free(J, d);
        return rc;
    }
    J->partner = p->partner;
    if (p->logic != TSW_LOGIC_NONE && d->raw) {
        J->partner_own = tsw__malloc((size_t)ng * sizeof(double));
        if (!J->partner_own) {
            shp_job_free(J, d);
            return TSW_ENOMEM;
        }
        for (int64_t k = 0; k < ng; ++k)
            J->partner_own[k] = p->partner[k] / d->scale;
        J->partner = J->partner_own;
    }
    J->p = p;
    J->d = d;
    J->ns = ns;
    J->ng = ng;
    J->gd = gd;
    J->minl = p->min_length;
    J->maxl = maxl;
    /* A step past the longest length is the one length minl: capped so that no loop over
     * lengths (l += step, here and in the CUDA search) can overflow. */
    J->step = p->length_step > maxl - J->minl + 1 ? maxl - J->minl + 1 : p->length_step;
    J->nlen = (maxl - J->minl) / J->step + 1;
    J->C = p->n_classes;
    J->ovr = p->one_vs_rest;
    J->nent = tsw_shp_nentropy(J->total, J->C, ng);
    J->reference = exec->impl == TSW_IMPL_REFERENCE;
    J->ex = exec;
    J->status = TSW_OK;
    for (int64_t k = 0; k < ns; ++k)
        for (int64_t s = 0; s < d->len[J->sub[k]]; ++s)
            J->work += tsw__shp_nlen_at(J, J->sub[k], s);
    return TSW_OK;
}

static void shp_job_free(tsw__shp_job *J, tsw__shp_data *d)
{
    tsw__free(J->partner_own);
    J->partner_own = NULL;
    tsw__free(J->xlogx);
    tsw__free(J->bnent);
    tsw__free(J->btot);
    tsw__free(J->glab);
    tsw__free(J->sub);
    J->xlogx = NULL;
    J->bnent = NULL;
    J->btot = NULL;
    J->glab = NULL;
    J->sub = NULL;
    shp_data_free(d);
}

/* The candidates of group g (its gd phases' rows of sub, every start and length). */
static int64_t shp_group_cands(const tsw__shp_job *J, int64_t g)
{
    int64_t n = 0;
    for (int64_t jj = g * J->gd; jj < (g + 1) * J->gd; ++jj)
        for (int64_t s = 0, i = J->sub[jj]; s < J->d->len[i]; ++s)
            n += tsw__shp_nlen_at(J, i, s);
    return n;
}

/* ---- results in the caller's terms --------------------------------------------------- */

/* Thresholds and gaps of raw data back in the data's units (the search's are in units of
 * the collection's scale). */
static void shp_units(const tsw__shp_job *J, tsw_shapelet *c, int64_t n)
{
    for (int64_t k = 0; J->d->raw && k < n; ++k) {
        c[k].threshold *= J->d->scale;
        c[k].gap *= J->d->scale;
    }
}

#ifdef TSWARP_WITH_CUDA
/* Does this call run on the GPU? device CUDA: yes (whatever exec->impl: the GPU computes the
 * fast path's values); AUTO: for the fast path, when a device is there and the work (window
 * evaluations) is worth it; the CPU otherwise. */
static int shp_on_gpu(const tsw__shp_job *J)
{
    if (J->ex->device == TSW_DEVICE_CUDA)
        return 1;
    if (J->ex->device == TSW_DEVICE_AUTO && !J->reference) {
        double windows = 0.0;
        for (int64_t k = 0; k < J->ns; ++k)
            windows += (double)J->d->len[J->sub[k]];
        return tsw__cuda_auto(J->ex, windows * (double)J->work);
    }
    return 0;
}

/* AUTO goes back to the CPU when the GPU is missing or too small (as api.c does). */
static int shp_gpu_fallback(const tsw__shp_job *J, int rc)
{
    if (J->ex->device != TSW_DEVICE_AUTO || (rc != TSW_ENODEV && rc != TSW_ENOMEM))
        return 0;
    tsw__clear_detail();
    return 1;
}

static tsw__shp_gpu_data shp_gpu_data(const tsw__shp_data *d)
{
    tsw__shp_gpu_data g;
    g.count = d->count;
    g.rows = d->count ? d->off[d->count - 1] + d->len[d->count - 1] : 0;
    g.off = d->off;
    g.len = d->len;
    g.run = d->run;
    g.z = d->z;
    g.P = d->P;
    g.Q = d->Q;
    g.raw = d->raw;
    return g;
}

typedef struct {
    tsw__shp_job *J;
    int64_t last;            /* progress clock */
    tsw_shapelet best;       /* search */
    int64_t per, cur, nc;    /* top: list length, current series, its candidates so far */
    tsw_shapelet *cand, *kept;
    int64_t *nkept;
    /* several GPUs: this device's exec (its progress takes the tile's candidates done of
     * tile_total and says whether to stop), else NULL */
    const tsw_exec *mex;
    int64_t tile_done, tile_total;
} shp_gpu_ctx;

/* Progress between chunks (the calling thread), as the CPU threads report it; with several
 * GPUs, to the device's thread (multi.c sums the devices' for the caller). */
static int shp_gpu_progress(shp_gpu_ctx *x, int64_t n, const int64_t *items)
{
    int64_t c = 0;
    for (int64_t t = 0; t < n; ++t)
        c += items[4 * t + 2];
    if (x->mex) {
        x->tile_done += c;
        return x->mex->progress(x->mex->progress_user, x->tile_done, x->tile_total)
                   ? TSW_ECANCELED
                   : TSW_OK;
    }
    x->J->done += c;
    return tsw__shp_poll(x->J, 0, &x->last) ? x->J->status : TSW_OK;
}

/* Length li of item it (tsw__shp_visit) with its split r. */
static tsw_shapelet shp_gpu_cand(const tsw__shp_job *J, const int64_t *it, int64_t li,
                                 const tsw__shp_split *r)
{
    tsw_shapelet c = tsw__shp_cand(J, it[0], it[1], li);
    c.threshold = r->threshold;
    c.gain = r->gain;
    c.gap = r->gap;
    return c;
}

static int shp_gpu_search_visit(void *ctx, int64_t n, const int64_t *items,
                                const tsw__shp_split *res)
{
    shp_gpu_ctx *x = ctx;
    const tsw__shp_job *J = x->J;
    for (int64_t t = 0; t < n; ++t) {
        const int64_t *it = items + 4 * t;
        for (int64_t li = 0; li < it[2]; ++li) {
            const tsw__shp_split *r = res + it[3] + li;
            if (!r->found)
                continue;
            const tsw_shapelet c = shp_gpu_cand(J, it, li, r);
            if (x->best.series < 0 || tsw__shp_cand_better(&c, &x->best))
                x->best = c;
        }
    }
    return shp_gpu_progress(x, n, items);
}

static void shp_gpu_top_flush(shp_gpu_ctx *x)
{
    if (x->cur >= 0)
        x->nkept[x->cur] = tsw__shp_top_series(x->cand, x->nc, x->per, x->kept + x->cur * x->per);
    x->nc = 0;
}

static int shp_gpu_top_visit(void *ctx, int64_t n, const int64_t *items,
                             const tsw__shp_split *res)
{
    shp_gpu_ctx *x = ctx;
    const tsw__shp_job *J = x->J;
    for (int64_t t = 0; t < n; ++t) {
        const int64_t *it = items + 4 * t;
        if (it[0] / J->gd != x->cur) { /* items come series (and phase) after series */
            shp_gpu_top_flush(x);
            x->cur = it[0] / J->gd;
        }
        for (int64_t li = 0; li < it[2]; ++li) {
            const tsw__shp_split *r = res + it[3] + li;
            if (!r->found)
                continue;
            x->cand[x->nc++] = shp_gpu_cand(J, it, li, r);
        }
    }
    return shp_gpu_progress(x, n, items);
}

/* The GPU's job for J: every row's candidates. */
static tsw__shp_gpu_job shp_gpu_job(const tsw__shp_job *J)
{
    tsw__shp_gpu_job g;
    g.d = shp_gpu_data(J->d);
    g.sub = J->sub;
    g.lab = J->glab;
    g.ns = J->ns;
    g.ng = J->ng;
    g.gd = J->gd;
    g.minl = J->minl;
    g.maxl = J->maxl;
    g.step = J->step;
    g.nlen = J->nlen;
    g.k0 = 0;
    g.k1 = J->ns;
    g.C = J->C;
    g.total = J->total;
    g.nent = J->nent;
    g.xlogx = J->xlogx;
    g.logic = J->p->logic;
    g.partner = J->p->logic != TSW_LOGIC_NONE ? J->partner : NULL;
    g.ovr = J->ovr;
    g.btot = J->btot;
    g.bnent = J->bnent;
    return g;
}

/*
 * Several GPUs (exec names a list of devices or all of them): the groups (series) cut into
 * consecutive tiles of about equal candidates (tsw__multi_tiles); a tile's candidates
 * (rows sub[k0 .. k1), whole groups) are ranked on every row by one device, and each device
 * keeps its own visitor state (ctx[slot]). search: the best of the devices' bests, which is
 * the one-device result (tsw__shp_cand_better is a total order); top: a group lies in one
 * tile, so its list is complete when the tile ends (flushed there). Progress and Ctrl-C go
 * through multi.c (the calling thread reports, every device stops).
 */
typedef struct {
    tsw__shp_job *J;
    tsw__shp_visit fn;
    shp_gpu_ctx *ctx; /* one per device slot */
    double *gcand;    /* each group's candidates (the tiles' weights) */
    int top;
} shp_multi;

/* The tile of groups [g0, g1) on the device of slot. */
static int shp_multi_tile(void *user, int64_t g0, int64_t g1, int slot, const tsw_exec *ex)
{
    shp_multi *M = user;
    shp_gpu_ctx *x = &M->ctx[slot];
    tsw__shp_gpu_job g = shp_gpu_job(M->J);
    g.k0 = g0 * M->J->gd;
    g.k1 = g1 * M->J->gd;
    x->mex = ex;
    x->tile_done = 0;
    x->tile_total = 0;
    for (int64_t q = g0; q < g1; ++q)
        x->tile_total += (int64_t)M->gcand[q];
    int rc = tsw__cuda_shapelet_run(&g, ex, M->fn, x);
    if (rc == TSW_OK && M->top) {
        shp_gpu_top_flush(x);
        x->cur = -1;
    }
    return rc;
}

/* Runs J's candidates on the devices of J->ex; ctx[0] is the template of every device's
 * state (search: best; top: per, kept, nkept, and a candidate buffer of cand_bytes each),
 * and on success holds the merged result (search). */
static int shp_gpu_multi(tsw__shp_job *J, tsw__shp_visit fn, shp_gpu_ctx *proto, int top,
                         size_t cand_bytes)
{
    int ndev = 0;
    int rc = tsw__multi_count(J->ex, &ndev);
    if (rc)
        return rc;
    shp_multi M;
    memset(&M, 0, sizeof(M));
    M.J = J;
    M.fn = fn;
    M.top = top;
    M.ctx = tsw__malloc((size_t)ndev * sizeof(shp_gpu_ctx));
    M.gcand = tsw__malloc((size_t)(J->ng > 0 ? J->ng : 1) * sizeof(double));
    int cands = 1;
    for (int i = 0; M.ctx && i < ndev; ++i) {
        M.ctx[i] = *proto;
        M.ctx[i].J = J;
        M.ctx[i].cand = NULL;
        if (top && !(M.ctx[i].cand = tsw__malloc(cand_bytes)))
            cands = 0;
    }
    if (!M.ctx || !M.gcand || !cands) {
        rc = TSW_ENOMEM;
        goto done;
    }
    for (int64_t g = 0; g < J->ng; ++g)
        M.gcand[g] = (double)shp_group_cands(J, g);
    rc = tsw__multi_tiles(J->ng, M.gcand, shp_multi_tile, &M, J->ex);
    if (rc == TSW_OK && !top)
        for (int i = 0; i < ndev; ++i)
            if (M.ctx[i].best.series >= 0 &&
                (proto->best.series < 0 || tsw__shp_cand_better(&M.ctx[i].best, &proto->best)))
                proto->best = M.ctx[i].best;
done:
    for (int i = 0; M.ctx && i < ndev; ++i)
        tsw__free(M.ctx[i].cand);
    tsw__free(M.ctx);
    tsw__free(M.gcand);
    return rc;
}

/* Runs the job on the GPU with visitor fn (several GPUs: shp_gpu_multi). */
static int shp_gpu_run(tsw__shp_job *J, tsw__shp_visit fn, shp_gpu_ctx *x)
{
    x->J = J;
    x->last = tsw__shp_now_ns();
    tsw__shp_gpu_job g = shp_gpu_job(J);
    return tsw__cuda_shapelet_run(&g, J->ex, fn, x);
}
#endif


/* ---- tsw_shapelet_search --------------------------------------------------------------- */

int tsw_shapelet_search(const tsw_shapelet_params *params, tsw_dtype dtype,
                        const tsw_collection *x, const int32_t *labels, const int64_t *subset,
                        int64_t n_subset, tsw_shapelet *best, const tsw_exec *exec)
{
    tsw_exec defaults;
    if (!exec) {
        tsw_exec_default(&defaults);
        exec = &defaults;
    }
    if (!best)
        return TSW_EINVAL;
    tsw__shp_job J;
    tsw__shp_data d;
    int rc = shp_job_make(params, dtype, x, labels, subset, n_subset, exec, &J, &d);
    if (rc)
        return rc;
#ifdef TSWARP_WITH_CUDA
    if (shp_on_gpu(&J)) {
        shp_gpu_ctx g;
        memset(&g, 0, sizeof(g));
        g.best = (tsw_shapelet){-1, 0, 0, 0.0, 0.0, 0.0, 0};
        rc = tsw__multi(exec) ? shp_gpu_multi(&J, shp_gpu_search_visit, &g, 0, 0)
                              : shp_gpu_run(&J, shp_gpu_search_visit, &g);
        if (!shp_gpu_fallback(&J, rc)) {
            if (rc == TSW_OK && exec->progress &&
                exec->progress(exec->progress_user, J.work, J.work))
                rc = TSW_ECANCELED;
            if (rc == TSW_OK) {
                *best = g.best;
                shp_units(&J, best, best->series >= 0);
            }
            shp_job_free(&J, &d);
            return rc;
        }
        J.done = 0;
        J.status = TSW_OK;
    }
#endif
    tsw_shapelet r;
    rc = tsw__cpu_shapelet_search(&J, &r);
    if (rc == TSW_OK && exec->progress && exec->progress(exec->progress_user, J.work, J.work))
        rc = TSW_ECANCELED;
    if (rc == TSW_OK) {
        *best = r;
        shp_units(&J, best, r.series >= 0);
    }
    shp_job_free(&J, &d);
    return rc;
}

/* ---- tsw_shapelet_top -------------------------------------------------------------------- */

/* One-vs-rest: the best-first list kept (n) -> out, at most max(1, k / C') from the series
 * of each class (C' the classes present), at most k in all: *take. */
static int shp_top_balanced(const tsw__shp_job *J, const int32_t *labels, const tsw_shapelet *kept,
                            int64_t n, int64_t k, tsw_shapelet *out, int64_t *take)
{
    int64_t *used = tsw__malloc((size_t)J->C * sizeof(int64_t)), present = 0;
    if (!used)
        return TSW_ENOMEM;
    for (int c = 0; c < J->C; ++c) {
        used[c] = 0;
        present += J->total[c] > 0;
    }
    const int64_t kc = TSW_MAX(1, k / present);
    *take = 0;
    for (int64_t m = 0; m < n && *take < k; ++m) {
        const int32_t c = labels[kept[m].series];
        if (used[c] < kc) {
            used[c] += 1;
            out[(*take)++] = kept[m];
        }
    }
    tsw__free(used);
    return TSW_OK;
}

int tsw_shapelet_top(const tsw_shapelet_params *params, tsw_dtype dtype,
                     const tsw_collection *x, const int32_t *labels, const int64_t *subset,
                     int64_t n_subset, int64_t k, tsw_shapelet *out, int64_t *count,
                     const tsw_exec *exec)
{
    tsw_exec defaults;
    if (!exec) {
        tsw_exec_default(&defaults);
        exec = &defaults;
    }
    if (!out || !count || k < 1)
        return TSW_EINVAL;
    if (params && params->logic != TSW_LOGIC_NONE)
        return TSW_EPARAM;
    tsw__shp_job J;
    tsw__shp_data d;
    int rc = shp_job_make(params, dtype, x, labels, subset, n_subset, exec, &J, &d);
    if (rc)
        return rc;
    /* Each series keeps at most k candidates: the global greedy keeps, in every series, a
     * prefix of that series' own greedy list, so merging those lists is exact. A series is
     * a group of gd phases (one with gd = 1). */
    int64_t per = k;
    int64_t maxcand = 0;
    for (int64_t g = 0; g < J.ng; ++g)
        maxcand = TSW_MAX(maxcand, shp_group_cands(&J, g));
    per = TSW_MIN(per, maxcand);
    size_t kept_bytes, cand_bytes;
    if (tsw__mul_size((size_t)J.ng, (size_t)(per > 0 ? per : 1) * sizeof(tsw_shapelet),
                      &kept_bytes) ||
        tsw__mul_size((size_t)(maxcand > 0 ? maxcand : 1), sizeof(tsw_shapelet), &cand_bytes)) {
        shp_job_free(&J, &d);
        return TSW_EOVERFLOW;
    }
    tsw_shapelet *kept = tsw__malloc(kept_bytes);
    int64_t *nkept = tsw__malloc((size_t)J.ng * sizeof(int64_t));
    if (!kept || !nkept) {
        tsw__free(kept);
        tsw__free(nkept);
        shp_job_free(&J, &d);
        return TSW_ENOMEM;
    }
    int done_gpu = 0;
#ifdef TSWARP_WITH_CUDA
    if (shp_on_gpu(&J)) {
        shp_gpu_ctx g;
        memset(&g, 0, sizeof(g));
        g.per = per;
        g.cur = -1;
        g.kept = kept;
        g.nkept = nkept;
        g.cand = tsw__malloc(cand_bytes);
        for (int64_t gg = 0; gg < J.ng; ++gg)
            nkept[gg] = 0;
        rc = !g.cand            ? TSW_ENOMEM
             : tsw__multi(exec) ? shp_gpu_multi(&J, shp_gpu_top_visit, &g, 1, cand_bytes)
                                : shp_gpu_run(&J, shp_gpu_top_visit, &g);
        if (rc == TSW_OK)
            shp_gpu_top_flush(&g);
        tsw__free(g.cand);
        done_gpu = !shp_gpu_fallback(&J, rc);
        if (!done_gpu) {
            J.done = 0;
            J.status = TSW_OK;
        }
    }
#endif
    if (!done_gpu)
        rc = tsw__cpu_shapelet_top(&J, per, cand_bytes, kept, nkept);
    if (rc == TSW_OK && exec->progress && exec->progress(exec->progress_user, J.work, J.work))
        rc = TSW_ECANCELED;
    if (rc == TSW_OK) {
        /* compact the per-series lists, sort, take k */
        int64_t n = 0;
        for (int64_t g = 0; g < J.ng; ++g)
            for (int64_t m = 0; m < nkept[g]; ++m)
                kept[n++] = kept[g * per + m];
        qsort(kept, (size_t)n, sizeof(*kept), tsw__shp_cmp_cand);
        int64_t take = n < k ? n : k;
        if (J.ovr)
            rc = shp_top_balanced(&J, labels, kept, n, k, out, &take);
        else
            memcpy(out, kept, (size_t)take * sizeof(*out));
        shp_units(&J, out, take);
        *count = take;
    }
    tsw__free(kept);
    tsw__free(nkept);
    shp_job_free(&J, &d);
    return rc;
}

/* ---- tsw_shapelet_distances, tsw_shapelet_features ----------------------------------------- */

int tsw_shapelet_distances(tsw_dtype dtype, const tsw_collection *shapelets,
                           const tsw_collection *x, double *dist, int64_t *pos,
                           const tsw_exec *exec)
{
    return tsw_shapelet_features(dtype, shapelets, NULL, x, dist, pos, NULL, exec);
}

static int shp_features(tsw_dtype dtype, const tsw_collection *shapelets,
                        const double *thresholds, const tsw_collection *x, double *dist,
                        int64_t *pos, int64_t *count, const tsw_exec *exec, int raw);

int tsw_shapelet_features(tsw_dtype dtype, const tsw_collection *shapelets,
                          const double *thresholds, const tsw_collection *x, double *dist,
                          int64_t *pos, int64_t *count, const tsw_exec *exec)
{
    return shp_features(dtype, shapelets, thresholds, x, dist, pos, count, exec, 0);
}

/* tsw_shapelet_features, of raw shapelets when raw: the series shifted and scaled by the
 * shapelets' mean and std, thresholds and distances in the data's units. */
static int shp_features(tsw_dtype dtype, const tsw_collection *shapelets,
                        const double *thresholds, const tsw_collection *x, double *dist,
                        int64_t *pos, int64_t *count, const tsw_exec *exec, int raw)
{
    tsw_exec defaults;
    if (!exec) {
        tsw_exec_default(&defaults);
        exec = &defaults;
    }
    int rc;
    if (!dist || !shapelets || !x || !thresholds != !count)
        return TSW_EINVAL;
    if ((rc = tsw__check_exec(exec)))
        return rc;
    if (thresholds) /* count > 0 checked by shp_data_make below; read only what exists */
        for (int64_t k = 0; k < (shapelets->count > 0 ? shapelets->count : 0); ++k)
            if (!(thresholds[k] >= 0.0 && thresholds[k] <= DBL_MAX))
                return TSW_EPARAM;
    tsw__shp_data S, X;
    if ((rc = shp_data_make(dtype, shapelets, &S, raw, NULL)))
        return rc;
    const double ref[2] = {S.shift, S.scale};
    if ((rc = shp_data_make(dtype, x, &X, raw, ref))) {
        shp_data_free(&S);
        return rc;
    }
    size_t cells;
    double *thr_raw = NULL; /* raw: the thresholds in units of the scale */
    if (tsw__mul_size((size_t)X.count, (size_t)S.count, &cells)) {
        rc = TSW_EOVERFLOW;
    } else {
        for (int64_t k = 0; k < S.count; ++k)
            if (S.len[k] < 2)
                rc = TSW_ESHAPE;
    }
    if (!rc && raw && thresholds) {
        thr_raw = tsw__malloc((size_t)S.count * sizeof(double));
        if (!thr_raw)
            rc = TSW_ENOMEM;
        for (int64_t k = 0; thr_raw && k < S.count; ++k)
            thr_raw[k] = thresholds[k] / S.scale;
        thresholds = thr_raw;
    }
    if (rc) {
        tsw__free(thr_raw);
        shp_data_free(&S);
        shp_data_free(&X);
        return rc;
    }
    const int reference = exec->impl == TSW_IMPL_REFERENCE;
    const int64_t nsh = S.count;
#ifdef TSWARP_WITH_CUDA
    double sl = 0.0, xl = 0.0; /* multiply-adds of the dot products */
    for (int64_t k = 0; k < nsh; ++k)
        sl += (double)S.len[k];
    for (int64_t j = 0; j < X.count; ++j)
        xl += (double)X.len[j];
    if (exec->device == TSW_DEVICE_CUDA ||
        (exec->device == TSW_DEVICE_AUTO && !reference && tsw__cuda_auto(exec, sl * xl))) {
        tsw__shp_gpu_data gs = shp_gpu_data(&S), gx = shp_gpu_data(&X);
        rc = tsw__cuda_shapelet_distances(&gs, thresholds, &gx, dist, pos, count, exec);
        if (exec->device != TSW_DEVICE_AUTO || (rc != TSW_ENODEV && rc != TSW_ENOMEM)) {
            if (rc == TSW_OK && exec->progress &&
                exec->progress(exec->progress_user, X.count * nsh, X.count * nsh))
                rc = TSW_ECANCELED;
            for (size_t c = 0; rc == TSW_OK && raw && c < cells; ++c)
                dist[c] *= S.scale;
            tsw__free(thr_raw);
            shp_data_free(&S);
            shp_data_free(&X);
            return rc;
        }
        tsw__clear_detail();
    }
#endif
    rc = tsw__cpu_shapelet_features(&S, thresholds, &X, reference, dist, pos, count, exec);
    if (rc == TSW_OK && exec->progress &&
        exec->progress(exec->progress_user, X.count * nsh, X.count * nsh))
        rc = TSW_ECANCELED;
    tsw__free(thr_raw);
    shp_data_free(&S);
    shp_data_free(&X);
    return rc;
}

/* ---- dilated shapelets: tsw_shapelet_features_dilated ------------------------------------ */

/* The user's progress callback over several calls: done counts from base, of total. */
typedef struct {
    tsw_progress_fn fn;
    void *user;
    int64_t base, total;
} shp_prog;

static int shp_prog_cb(void *user, int64_t done, int64_t total)
{
    shp_prog *p = user;
    (void)total;
    return p->fn(p->user, p->base + done, p->total);
}

/* Shapelets K (nk of them, all of dilation gd, all raw or none) against the phases of x:
 * their columns of dist/pos/count (x->count, nsh). */
static int shp_features_one(tsw_dtype dt, const tsw_collection *sh, const int64_t *K,
                            int64_t nk, int64_t nsh, int64_t gd, int raw,
                            const double *thresholds, const tsw_collection *x, double *dist,
                            int64_t *pos, int64_t *count, const tsw_exec *ex)
{
    const size_t esz = tsw__dtype_size(dt);
    int64_t srows = 0, n = x->count;
    for (int64_t q = 0; q < nk; ++q)
        srows += tsw__coll_len(sh, K[q]);
    size_t cells, pbytes;
    if (tsw__mul_size((size_t)n, (size_t)gd, &cells) || tsw__mul_size(cells, (size_t)nk, &cells) ||
        tsw__mul_size(cells, sizeof(int64_t) * (count ? 2 : 1), &pbytes))
        return TSW_EOVERFLOW;
    /* the shapelets in double, back to back; the phases of every series of x */
    double *sv = tsw__malloc((size_t)srows * sizeof(double) + (size_t)nk * sizeof(double));
    int64_t *so = tsw__malloc((size_t)nk * 2 * sizeof(int64_t));
    int64_t *all = tsw__malloc((size_t)n * sizeof(int64_t));
    double *d2 = tsw__malloc(cells * sizeof(double));
    int64_t *p2 = tsw__malloc(pbytes);
    double *pv = NULL;
    int64_t *poffs = NULL;
    int rc = TSW_OK;
    if (!sv || !so || !all || !d2 || !p2) {
        rc = TSW_ENOMEM;
        goto done;
    }
    double *thr = sv + srows;
    int64_t row = 0;
    for (int64_t q = 0; q < nk; ++q) {
        const int64_t l = tsw__coll_len(sh, K[q]);
        const char *src = (const char *)sh->values + (size_t)tsw__coll_off(sh, K[q]) * esz;
        so[q] = row;
        so[nk + q] = l;
        for (int64_t t = 0; t < l; ++t)
            sv[row++] = shp_value(dt, src, t);
        if (thresholds)
            thr[q] = thresholds[K[q]];
    }
    for (int64_t j = 0; j < n; ++j)
        all[j] = j; /* every series holds >= gd points (the caller): no phase is empty */
    tsw_collection sc = {sv, so, so + nk, 0, nk, NULL}, pc;
    if ((rc = shp_phases(dt, x, all, n, gd, &pc, &pv, &poffs)))
        goto done;
    int64_t *c2 = count ? p2 + cells : NULL;
    if ((rc = shp_features(TSW_F64, &sc, thresholds ? thr : NULL, &pc, d2, p2, c2, ex, raw)))
        goto done;
    for (int64_t j = 0; j < n; ++j)
        for (int64_t q = 0; q < nk; ++q) {
            double best = TSW_INF_F64;
            int64_t where = 0, near = 0;
            for (int64_t ph = 0; ph < gd; ++ph) {
                const size_t c = ((size_t)(j * gd + ph)) * (size_t)nk + (size_t)q;
                const int64_t u = ph + p2[c] * gd; /* the start in the series */
                if (d2[c] < best || (d2[c] == best && u < where)) {
                    best = d2[c];
                    where = u;
                }
                if (count)
                    near += c2[c];
            }
            dist[j * nsh + K[q]] = best;
            if (pos)
                pos[j * nsh + K[q]] = where;
            if (count)
                count[j * nsh + K[q]] = near;
        }
done:
    tsw__free(sv);
    tsw__free(so);
    tsw__free(all);
    tsw__free(d2);
    tsw__free(p2);
    tsw__free(pv);
    tsw__free(poffs);
    return rc;
}

int tsw_shapelet_features_dilated(tsw_dtype dtype, const tsw_collection *shapelets,
                                  const int64_t *dilations, const int32_t *raw,
                                  const double *thresholds, const tsw_collection *x,
                                  double *dist, int64_t *pos, int64_t *count,
                                  const tsw_exec *exec)
{
    int rc;
    if (!dilations && !raw)
        return tsw_shapelet_features(dtype, shapelets, thresholds, x, dist, pos, count, exec);
    if (!dist || !shapelets || !x || !thresholds != !count || !shapelets->values || !x->values)
        return TSW_EINVAL;
    if (dtype != TSW_F32 && dtype != TSW_F64)
        return TSW_EDTYPE;
    if (shapelets->count < 1 || x->count < 1)
        return TSW_ESHAPE;
    tsw_exec defaults;
    if (!exec) {
        tsw_exec_default(&defaults);
        exec = &defaults;
    }
    if ((rc = tsw__check_exec(exec)))
        return rc;
    const int64_t nsh = shapelets->count;
    int64_t shortest = INT64_MAX, *K = NULL, *dl = NULL;
    if (tsw__check_extent(x, 1, tsw__dtype_size(dtype)) ||
        tsw__check_extent(shapelets, 1, tsw__dtype_size(dtype)))
        return TSW_EOVERFLOW;
    for (int64_t j = 0; j < x->count; ++j) {
        int rc1 = tsw__check_span(x, j, 1, tsw__dtype_size(dtype)); /* read below, before */
        if (rc1)                                            /* tsw_shapelet_features checks */
            return rc1 == TSW_EINVAL ? TSW_ESHAPE : rc1;
        shortest = TSW_MIN(shortest, tsw__coll_len(x, j));
    }
    for (int64_t k = 0; k < nsh; ++k) {
        int rc1 = tsw__check_span(shapelets, k, 1, tsw__dtype_size(dtype));
        if (rc1)
            return rc1 == TSW_EINVAL ? TSW_ESHAPE : rc1;
        if ((dilations && dilations[k] < 1) || (raw && raw[k] != 0 && raw[k] != 1))
            return TSW_EPARAM;
        if (thresholds && !(thresholds[k] >= 0.0 && thresholds[k] <= DBL_MAX))
            return TSW_EPARAM;
        const int64_t l = tsw__coll_len(shapelets, k);
        if (l < 2 || shortest < (dilations ? dilations[k] : 1)) /* no phase is empty */
            return TSW_ESHAPE;
    }
    size_t kb;
    if (tsw__mul_size((size_t)nsh, 3 * sizeof(int64_t), &kb))
        return TSW_EOVERFLOW;
    K = tsw__malloc(kb);
    if (!K)
        return TSW_ENOMEM;
    dl = K + nsh;
    int64_t *rw = dl + nsh;
    /* the distinct (dilation, raw) groups, in order of first appearance */
    int64_t nd = 0, work = 0;
    for (int64_t k = 0; k < nsh; ++k) {
        const int64_t dk = dilations ? dilations[k] : 1, rk = raw ? raw[k] : 0;
        int64_t m = 0;
        while (m < nd && (dl[m] != dk || rw[m] != rk))
            ++m;
        if (m == nd) {
            dl[nd] = dk;
            rw[nd++] = rk;
        }
        work += x->count * dk;
    }
    if (nd == 1 && dl[0] == 1) { /* one group, contiguous: no phases to make */
        tsw__free(K);
        return shp_features(dtype, shapelets, thresholds, x, dist, pos, count, exec,
                            (int)rw[0]);
    }
    tsw_exec inner = *exec;
    shp_prog pr = {exec->progress, exec->progress_user, 0, work};
    if (exec->progress) {
        inner.progress = shp_prog_cb;
        inner.progress_user = &pr;
    }
    for (int64_t m = 0; m < nd && rc == TSW_OK; ++m) {
        int64_t nk = 0;
        for (int64_t k = 0; k < nsh; ++k)
            if ((dilations ? dilations[k] : 1) == dl[m] && (raw ? raw[k] : 0) == rw[m])
                K[nk++] = k;
        rc = shp_features_one(dtype, shapelets, K, nk, nsh, dl[m], (int)rw[m], thresholds, x,
                              dist, pos, count, &inner);
        pr.base += nk * x->count * dl[m];
    }
    tsw__free(K);
    return rc;
}
