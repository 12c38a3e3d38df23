/*
 * The value a pair's dynamic program leaves in its last cell, turned into the distance the
 * API returns. One rule for every backend and every entry point (tsw_distance, the CPU and
 * GPU batch drivers): DTW under the squared Euclidean cost returns the root of the
 * accumulated cost unless params.accumulated asks for the cost itself (tslearn's and
 * dtaidistance's convention), and so does DDTW (DTW of the derivatives); every other measure
 * returns its last cell unchanged (EDR and LCSS are normalised by their kernels).
 */
#ifndef TSW_COMMON_FINISH_H
#define TSW_COMMON_FINISH_H

#include "tsw_hd.h"
#include "tswarp.h"

TSW_HD double tsw__finish(const tsw_params *p, double raw)
{
    if ((p->measure == TSW_DTW || p->measure == TSW_DDTW) && !p->accumulated &&
        p->cost == TSW_COST_SQEUCLIDEAN)
        return sqrt(raw);
    return raw;
}

#endif
