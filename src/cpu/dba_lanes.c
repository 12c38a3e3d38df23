/*
 * DBA's alignment step in SIMD lanes across series (dba_lanes_impl.h): the SSE2 (x86-64
 * baseline; 2 double or 4 float series a vector) or scalar instantiation, and the
 * dispatcher that takes the AVX2 one (dba_lanes_avx2.c, 4 double or 8 float series) when
 * tsw__cpu_level() >= 2. Compiled without contracted multiply-adds (CMakeLists.txt), so
 * each lane's costs and D values are those of tsw_dtw_path's kernel (cpu/path_impl.h).
 */
#include "kernels.h"
#include "../common/path.h"

#include <stdint.h>
#include <string.h>

#if TSW_X86
#define TSW_V_ISA 1
#else
#define TSW_V_ISA 0
#endif
#define TSW_V_DOUBLE 1
#include "simd_ops.h"
#include "dba_lanes_impl.h"
#undef TSW_V_DOUBLE
#define TSW_V_DOUBLE 0
#include "simd_ops.h"
#include "dba_lanes_impl.h"
#undef TSW_V_DOUBLE
#undef TSW_V_ISA

#if TSW_X86
int tsw__dba_paths_avx2_f64(tsw__dba_group *g, void *work);
int tsw__dba_paths_avx2_f32(tsw__dba_group *g, void *work);
#define TSW__DBA_BASE(d) tsw__dba_paths_sse2_##d
#else
#define TSW__DBA_BASE(d) tsw__dba_paths_scalar_##d
#endif

int tsw__cpu_dba_lanes(int level, tsw_dtype dtype)
{
    const int wide = TSW_X86 && level >= 2;
    if (dtype == TSW_F32)
        return wide ? 8 : (TSW_X86 ? 4 : 1);
    return wide ? 4 : (TSW_X86 ? 2 : 1);
}

size_t tsw__cpu_dba_work_bytes(int64_t n, int64_t m, int64_t dim)
{
    /* the largest instantiation's: 8 lanes of 8 bytes (more than any), 64-byte rounding */
    const size_t len = (size_t)(n > m ? n : m);
    return 64 * 4 + len * (size_t)dim * 64 + 2 * ((size_t)m + 1) * 64 +
           (size_t)n * (size_t)m * sizeof(uint16_t);
}

int tsw__cpu_dba_paths(int level, tsw_dtype dtype, tsw__dba_group *g, void *work)
{
#if TSW_X86
    if (level >= 2)
        return dtype == TSW_F32 ? tsw__dba_paths_avx2_f32(g, work)
                                : tsw__dba_paths_avx2_f64(g, work);
#endif
    (void)level;
    return dtype == TSW_F32 ? TSW__DBA_BASE(f32)(g, work) : TSW__DBA_BASE(f64)(g, work);
}
