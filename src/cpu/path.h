/*
 * The CPU alignment kernels' instantiations (cpu/path_impl.h through cpu/path_inst.h), one
 * per instruction set and dtype; cpu/path.c picks one for tsw__cpu_dtw_path,
 * tsw__cpu_subsequence and tsw__cpu_subseq_lastrow (internal.h, with tsw__path_job).
 */
#ifndef TSW_CPU_PATH_H
#define TSW_CPU_PATH_H

#include "../internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Instantiations: isa "base" (any x86-64 / other CPU) and "avx2" (path_avx2.c). */
#define TSW__PATH_DECL(sfx)                                                                   \
    int tsw__path_align_##sfx(const tsw__path_job *job, int64_t *path, int64_t *length,      \
                              double *cost);                                                  \
    int tsw__path_subseq_##sfx(const tsw__path_job *job, int64_t k, tsw_match *matches,      \
                               int64_t *count, int64_t *path);                                 \
    int tsw__path_lastrow_##sfx(const tsw__path_job *job, int64_t from, double *cost,       \
                                int64_t *start);
TSW__PATH_DECL(base_f64)
TSW__PATH_DECL(base_f32)
TSW__PATH_DECL(avx2_f64)
TSW__PATH_DECL(avx2_f32)
#undef TSW__PATH_DECL

#ifdef __cplusplus
}
#endif

#endif
