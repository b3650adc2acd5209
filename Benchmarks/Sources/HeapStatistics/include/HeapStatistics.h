#ifndef HEAP_STATISTICS_H
#define HEAP_STATISTICS_H

#include <stddef.h>

/// Bytes of heap in use by the allocator's main arena, chunk overhead included
/// (glibc: `mallinfo2().uordblks`; Apple platforms: the default zone's `size_in_use`).
/// Returns 0 where neither is available.
size_t heap_bytes_in_use(void);

#endif
