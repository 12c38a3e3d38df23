/*
 * AVX2 instantiation of the CPU search's per-chunk kernels (search_impl.h): the same C,
 * vectorised 4 doubles wide by the compiler. Compiled with -mavx2 -mfma (the *_avx2.c rule
 * of CMakeLists.txt); entered only when tsw__cpu_level() >= 2. Fused multiply-adds may
 * round these running values apart from the portable instance's: they only prune, against
 * the slack of common/search.h, and the search recomputes its candidates exactly.
 */
#include "search.h"

#if TSW_X86
#if !defined(__AVX2__)
#error "search_avx2.c must be compiled with -mavx2 -mfma"
#endif
#define TSW__SEARCH_ISA avx2
#include "search_impl.h"
#undef TSW__SEARCH_ISA
#endif
