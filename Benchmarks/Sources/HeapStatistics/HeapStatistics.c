#include "HeapStatistics.h"
#include <stdlib.h>  // defines __GLIBC__ where the C library is glibc

// Swift's Glibc module does not export <malloc.h>, so `mallinfo2` is read here.

#if defined(__GLIBC__)
#include <malloc.h>

size_t heap_bytes_in_use(void) {
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33)
    return mallinfo2().uordblks;
#else
    return (size_t)(unsigned int)mallinfo().uordblks;
#endif
}

#elif defined(__APPLE__)
#include <malloc/malloc.h>

size_t heap_bytes_in_use(void) {
    malloc_statistics_t statistics;
    malloc_zone_statistics(malloc_default_zone(), &statistics);
    return statistics.size_in_use;
}

#else

size_t heap_bytes_in_use(void) { return 0; }

#endif
