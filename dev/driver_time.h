/* Wall-clock helpers shared by the bench drivers (dev/gpu_sdtw_ncu_driver.c,
 * dev/gpu_path_driver.c): seconds on the monotonic clock, and a qsort comparison of
 * doubles for medians. (A helper of the drivers.) */
#pragma once
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
