/*
 * AVX2 instantiation of the CPU alignment kernels (path_impl.h): the same C, vectorised
 * 4 doubles / 8 floats wide by the compiler. Compiled with -mavx2 -mfma (the *_avx2.c
 * rule of CMakeLists.txt) and -ffp-contract=off (no fused multiply-add: the costs round
 * as cost.h's functions do), entered only when tsw__cpu_level() >= 2.
 */
#include "kernels.h"

#if TSW_X86
#if !defined(__AVX2__)
#error "path_avx2.c must be compiled with -mavx2 -mfma"
#endif
#define TSW__PATH_ISA avx2
#include "path_inst.h"
#endif
