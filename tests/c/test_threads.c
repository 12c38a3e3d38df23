/*
 * Thread safety: several application threads call tsw_distance, tsw_cdist and tsw_pdist
 * at once (each call with its own OpenMP team inside) and must get exactly the results of
 * a serial run.
 */
#include "harness.h"

#include <pthread.h>

#define N_THREADS 4

typedef struct {
    tsw_params p;
    tsw_dtype dt;
    int64_t dim, count, len;
    const void *values;
    const void *times;
    size_t esz;
    void *serial_cdist, *serial_pdist; /* (count, count) each */
    double *serial_pairs;              /* (count,) d(x_0, x_i) */
} job;

typedef struct {
    const job *jobs;
    int n_jobs, rounds, omp_threads;
    long mismatches, errors;
} worker_arg;

static tsw_collection job_collection(const job *j)
{
    tsw_collection c = {j->values, NULL, NULL, j->len, j->count, j->times};
    return c;
}

static tsw_series job_series(const job *j, int64_t i)
{
    tsw_series s = {(const char *)j->values + j->esz * (size_t)(i * j->len * j->dim), j->len,
                    j->times ? (const char *)j->times + j->esz * (size_t)(i * j->len) : NULL};
    return s;
}

/* Runs every job `rounds` times, starting at a different job per thread. */
static void *worker(void *argp)
{
    worker_arg *w = argp;
    for (int round = 0; round < w->rounds; ++round) {
        for (int k = 0; k < w->n_jobs; ++k) {
            const job *j = &w->jobs[(k + round + w->omp_threads) % w->n_jobs];
            size_t bytes = j->esz * (size_t)(j->count * j->count);
            void *out = malloc(bytes);
            tsw_collection c = job_collection(j);
            tsw_exec e;
            tsw_exec_default(&e);
            e.n_threads = w->omp_threads;
            if (tsw_cdist(&j->p, j->dt, j->dim, &c, &c, out, &e) != TSW_OK)
                w->errors++;
            else if (memcmp(out, j->serial_cdist, bytes) != 0)
                w->mismatches++;
            if (tsw_pdist(&j->p, j->dt, j->dim, &c, TSW_PDIST_FULL, out, &e) != TSW_OK)
                w->errors++;
            else if (memcmp(out, j->serial_pdist, bytes) != 0)
                w->mismatches++;
            tsw_series a = job_series(j, 0);
            for (int64_t i = 0; i < j->count; ++i) {
                tsw_series b = job_series(j, i);
                double v;
                if (tsw_distance(&j->p, j->dt, j->dim, &a, &b, &v, &e) != TSW_OK)
                    w->errors++;
                else if (memcmp(&v, &j->serial_pairs[i], sizeof(v)) != 0)
                    w->mismatches++;
            }
            free(out);
        }
    }
    return NULL;
}

int main(void)
{
    const int quick = tsw_t_quick();
    const int64_t count = quick ? 6 : 12, len = quick ? 24 : 48, dim = 2;
    tsw_t_rng r = {31};
    double *v64 = malloc(sizeof(double) * (size_t)(count * len * dim));
    float *v32 = malloc(sizeof(float) * (size_t)(count * len * dim));
    double *t64 = malloc(sizeof(double) * (size_t)(count * len));
    for (int64_t k = 0; k < count * len * dim; ++k) {
        v64[k] = tsw_t_uniform(&r, -2, 2);
        v32[k] = (float)v64[k];
    }
    for (int64_t k = 0; k < count * len; ++k)
        t64[k] = (double)(k % len) + tsw_t_uniform(&r, 0, 0.5);

    /* The jobs: every measure, both precisions, a window, TWED with timestamps. */
    job jobs[6];
    const tsw_measure measures[3] = {TSW_DTW, TSW_TWED, TSW_SOFT_DTW};
    for (int k = 0; k < 6; ++k) {
        job *j = &jobs[k];
        memset(j, 0, sizeof(*j));
        tsw_params_default(&j->p, measures[k % 3]);
        j->dt = k < 3 ? TSW_F64 : TSW_F32;
        j->esz = k < 3 ? 8 : 4;
        j->dim = dim;
        j->count = count;
        j->len = len;
        j->values = k < 3 ? (const void *)v64 : (const void *)v32;
        if (k == 1)
            j->times = t64;
        if (k == 3) {
            j->p.window = TSW_WINDOW_SAKOE_CHIBA;
            j->p.window_radius = 5;
        }
        if (k == 5)
            j->p.normalize = 1;
        size_t bytes = j->esz * (size_t)(count * count);
        j->serial_cdist = malloc(bytes);
        j->serial_pdist = malloc(bytes);
        j->serial_pairs = malloc(sizeof(double) * (size_t)count);
        tsw_collection c = job_collection(j);
        tsw_exec e;
        tsw_exec_default(&e);
        e.n_threads = 1;
        CHECK_RC(tsw_cdist(&j->p, j->dt, dim, &c, &c, j->serial_cdist, &e), TSW_OK);
        CHECK_RC(tsw_pdist(&j->p, j->dt, dim, &c, TSW_PDIST_FULL, j->serial_pdist, &e), TSW_OK);
        tsw_series a = job_series(j, 0);
        for (int64_t i = 0; i < count; ++i) {
            tsw_series b = job_series(j, i);
            CHECK_RC(tsw_distance(&j->p, j->dt, dim, &a, &b, &j->serial_pairs[i], &e), TSW_OK);
        }
    }

    /* N_THREADS application threads, half with single-threaded calls, half with 2-thread
     * OpenMP teams (nested inside the application's threads). */
    pthread_t th[N_THREADS];
    worker_arg args[N_THREADS];
    for (int t = 0; t < N_THREADS; ++t) {
        args[t] = (worker_arg){jobs, 6, quick ? 1 : 2, 1 + t % 2, 0, 0};
        CHECK(pthread_create(&th[t], NULL, worker, &args[t]) == 0);
    }
    for (int t = 0; t < N_THREADS; ++t) {
        CHECK(pthread_join(th[t], NULL) == 0);
        CHECK_EQ(args[t].errors, 0);
        CHECK_EQ(args[t].mismatches, 0);
    }

    for (int k = 0; k < 6; ++k) {
        free(jobs[k].serial_cdist);
        free(jobs[k].serial_pdist);
        free(jobs[k].serial_pairs);
    }
    free(v64);
    free(v32);
    free(t64);
    return TSW_TEST_END();
}
