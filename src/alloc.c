/* Allocation through replaceable hooks (libuv style), with checked size arithmetic, and the
 * sizes of outputs. */
#include "internal.h"

#include <stdint.h>
#include <stdlib.h>

static tsw_malloc_fn tsw__malloc_hook = malloc;
static tsw_free_fn tsw__free_hook = free;

int tsw_replace_allocator(tsw_malloc_fn malloc_fn, tsw_free_fn free_fn)
{
    if ((malloc_fn == NULL) != (free_fn == NULL))
        return TSW_EINVAL;
    tsw__malloc_hook = malloc_fn ? malloc_fn : malloc;
    tsw__free_hook = free_fn ? free_fn : free;
    return TSW_OK;
}

void *tsw__malloc(size_t size)
{
    if (size == 0)
        return NULL;
    return tsw__malloc_hook(size);
}

void tsw__free(void *ptr)
{
    if (ptr)
        tsw__free_hook(ptr);
}

/* 64-byte aligned block: the hook's pointer is stored just before the aligned address. */
void *tsw__malloc_aligned(size_t size)
{
    if (size == 0 || size > SIZE_MAX - 64 - sizeof(void *))
        return NULL;
    unsigned char *raw = tsw__malloc(size + 64 + sizeof(void *));
    if (!raw)
        return NULL;
    uintptr_t p = ((uintptr_t)(raw + sizeof(void *)) + 63) & ~(uintptr_t)63;
    ((void **)p)[-1] = raw;
    return (void *)p;
}

void tsw__free_aligned(void *ptr)
{
    if (ptr)
        tsw__free(((void **)ptr)[-1]);
}

int tsw__mul_size(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a)
        return TSW_EOVERFLOW;
    *out = a * b;
    return TSW_OK;
}

/* Elements of a pdist output (tswarp.h); 0 when n * n would overflow. */
int64_t tsw_pdist_size(int64_t n, tsw_pdist_layout layout)
{
    if (n < 0 || n > 3037000499LL) /* n * n must fit in int64 */
        return 0;
    return layout == TSW_PDIST_CONDENSED ? n * (n - 1) / 2 : n * n;
}
