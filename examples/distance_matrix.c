/*
 * tswarp from C: the DTW distance matrix of a small collection of series of different
 * lengths, one pair on its own, and error handling through status codes.
 *
 *   cc distance_matrix.c $(pkg-config --cflags --libs tswarp) -o distance_matrix
 */
#include <stdint.h>
#include <stdio.h>

#include <tswarp.h>

#define COUNT 4

int main(void)
{
    /* Four univariate series of lengths 5, 8, 6 and 7, stored back to back: the ragged
     * layout is (values, offsets, lengths). Series 0 and 3 are the same bump 4x(1-x) at
     * different sampling rates, so DTW finds them close; 1 rises, 2 falls. */
    const int64_t lengths[COUNT] = {5, 8, 6, 7};
    int64_t offsets[COUNT];
    double values[5 + 8 + 6 + 7];
    int64_t row = 0;
    for (int i = 0; i < COUNT; ++i) {
        offsets[i] = row;
        for (int64_t t = 0; t < lengths[i]; ++t) {
            double x = (double)t / (double)(lengths[i] - 1); /* in [0, 1] */
            values[row++] = i == 1 ? x : i == 2 ? 1.0 - x : 4.0 * x * (1.0 - x);
        }
    }
    tsw_collection series = {values, offsets, lengths, 0, COUNT, NULL};

    tsw_params params;
    tsw_params_default(&params, TSW_DTW); /* sqrt of the accumulated squared cost */

    /* All pairs, each computed once, as a full symmetric (COUNT, COUNT) matrix. */
    double matrix[COUNT * COUNT];
    int rc = tsw_pdist(&params, TSW_F64, 1, &series, TSW_PDIST_FULL, matrix, NULL);
    if (rc != TSW_OK) {
        fprintf(stderr, "tsw_pdist: %s (%s)\n", tsw_strerror(rc), tsw_err_name(rc));
        return 1;
    }
    printf("tswarp %s, CPU SIMD %s, %d threads\n", tsw_version_string(), tsw_cpu_simd(),
           tsw_max_threads());
    printf("DTW distance matrix:\n");
    for (int i = 0; i < COUNT; ++i) {
        for (int j = 0; j < COUNT; ++j)
            printf(" %8.4f", matrix[i * COUNT + j]);
        printf("\n");
    }

    /* One pair through the series API: the same value as the matrix entry. */
    tsw_series a = {values + offsets[0], lengths[0], NULL};
    tsw_series b = {values + offsets[3], lengths[3], NULL};
    double d;
    rc = tsw_distance(&params, TSW_F64, 1, &a, &b, &d, NULL);
    if (rc != TSW_OK) {
        fprintf(stderr, "tsw_distance: %s\n", tsw_strerror(rc));
        return 1;
    }
    printf("dtw(series 0, series 3) = %.6f\n", d);
    double diff = d - matrix[0 * COUNT + 3];
    if (diff > 1e-12 || diff < -1e-12) {
        fprintf(stderr, "tsw_distance and tsw_pdist disagree\n");
        return 1;
    }

    /* Errors come back as status codes: soft-DTW needs gamma > 0. */
    tsw_params bad;
    tsw_params_default(&bad, TSW_SOFT_DTW);
    bad.gamma = -1.0;
    rc = tsw_distance(&bad, TSW_F64, 1, &a, &b, &d, NULL);
    printf("soft-DTW with gamma = -1: %s: %s\n", tsw_err_name(rc), tsw_strerror(rc));
    if (rc != TSW_EPARAM)
        return 1;
    return 0;
}
