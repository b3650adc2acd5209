// The storage behind `_DependencyInjectionShims.h`: one thread-local word, one
// process-wide counter and the cache of property sites, all zero until the engine first
// changes them.
#include "_DependencyInjectionShims.h"

_Thread_local void *_Nullable _di_thread_frames_address = 0;

_Thread_local void *_Nullable _di_parent_releases_address = 0;

intptr_t _di_bound_frame_count = 0;

void *_Nullable _di_property_site_cache[1 << _DI_PROPERTY_SITE_SLOT_BITS];
