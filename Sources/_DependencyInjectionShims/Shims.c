// The storage behind `_DependencyInjectionShims.h`: one thread-local word and one
// process-wide counter, both zero until the engine first changes them.
#include "_DependencyInjectionShims.h"

_Thread_local void *_Nullable _di_thread_frames_address = 0;

intptr_t _di_bound_frame_count = 0;
