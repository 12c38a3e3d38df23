/* Run-time choice of the SIMD level: installed builds run on any x86-64 CPU. */
#include "../internal.h"

#include <stdlib.h>
#include <string.h>

int tsw__cpu_level(void)
{
    static int level = -1; /* benign race: every thread computes the same value */
    if (level >= 0)
        return level;
    int l = 0;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    l = 1; /* SSE2 is part of x86-64 */
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        l = 2;
#endif
    /* TSWARP_SIMD=scalar|sse2|avx2 caps the level (tests and benchmarks). */
    const char *cap = getenv("TSWARP_SIMD");
    if (cap) {
        if (strcmp(cap, "scalar") == 0 && l > 0)
            l = 0;
        else if (strcmp(cap, "sse2") == 0 && l > 1)
            l = 1;
    }
    level = l;
    return level;
}
