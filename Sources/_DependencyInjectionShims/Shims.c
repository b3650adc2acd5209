// The storage behind `_DependencyInjectionShims.h`: two thread-local words and one
// process-wide counter, all zero until the engine first changes them.
#include "_DependencyInjectionShims.h"

_Thread_local void *_Nullable _di_thread_frames_address = 0;

_Thread_local void *_Nullable _di_releasing_containers_address = 0;

intptr_t _di_bound_frame_count = 0;
