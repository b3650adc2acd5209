// The few machine-level reads the resolution engine makes on every construction, kept in C
// because Swift has no cheap way to make them on this package's oldest systems (iOS 13,
// macOS 10.15): a thread-local variable, an atomic load without a read-modify-write, the
// identity of the running task without a generic call, and a strong reference to an object
// that may be being released without the side table of a weak reference.
//
// Nothing here holds or frees memory on its own: `ThreadFrames` (in the Swift target) makes
// and frees each thread's slot, and only stores its address here.
//
//     if let words = _di_thread_frames() { ... }      // this thread's slot, if made
//     let owner = _di_running_task() ?? _di_thread_identity()

#ifndef DEPENDENCY_INJECTION_SHIMS_H
#define DEPENDENCY_INJECTION_SHIMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// The address of this thread's slot of constructions (`ThreadFrames`), or NULL before the
/// thread's first construction and after the thread has freed it. Read through the inline
/// functions below; defined in `Shims.c`.
extern _Thread_local void *_Nullable _di_thread_frames_address;

/// The list of parents whose release waits for this thread's outermost container
/// `deinit` to end (`ParentReference`), or NULL while no container's parent is being
/// released here. Defined in `Shims.c`.
extern _Thread_local void *_Nullable _di_parent_releases_address;

/// How many construction frames are bound as task-local values right now, in the whole
/// process. Touched only through the inline functions below; defined in `Shims.c`.
extern intptr_t _di_bound_frame_count;

/// How many bits of a declaration's hash pick its slot in `_di_property_site_cache`.
#define _DI_PROPERTY_SITE_SLOT_BITS 10

/// The cache of `PropertySite`'s records: each slot NULL, or the record last found for a
/// declaration whose place hashed to it, written with `_di_store_release` and read with
/// `_di_load_acquire`. Static storage, zero when the process starts, so that reading a slot
/// needs no one-time initialization, which a Swift static costs on every object created
/// with an injected property. Defined in `Shims.c`.
extern void *_Nullable _di_property_site_cache[1 << _DI_PROPERTY_SITE_SLOT_BITS];

/// The address of slot `index` of `_di_property_site_cache`.
static inline __attribute__((always_inline)) void *_Nullable *_Nonnull _di_property_site_slot(intptr_t index) {
    return &_di_property_site_cache[index];
}

/// The Swift concurrency runtime's record of the task running on this thread, or NULL
/// outside any task. This is what `withUnsafeCurrentTask` reads, without its generic call
/// and closure (about 50 instructions on every construction). The runtime returns the task
/// unretained, and nothing here retains or releases it: it serves only as an identity.
extern __attribute__((swiftcall)) void *_Nullable swift_task_getCurrent(void);

/// The task running on this thread, or NULL outside any task: an identity only, never
/// dereferenced.
static inline __attribute__((always_inline)) void *_Nullable _di_running_task(void) {
    return swift_task_getCurrent();
}

/// An address that names this thread among the threads alive: its own thread-local
/// variable's. Unlike `pthread_self`, it needs no call.
static inline __attribute__((always_inline)) void *_Nonnull _di_thread_identity(void) {
    return (void *)&_di_thread_frames_address;
}

/// This thread's slot of constructions, or NULL if it has none.
static inline __attribute__((always_inline)) void *_Nullable _di_thread_frames(void) {
    return _di_thread_frames_address;
}

/// Records the address of this thread's slot of constructions (NULL once it is freed).
static inline __attribute__((always_inline)) void _di_set_thread_frames(void *_Nullable address) {
    _di_thread_frames_address = address;
}

/// This thread's list of parents waiting to be released, or NULL.
static inline __attribute__((always_inline)) void *_Nullable _di_parent_releases(void) {
    return _di_parent_releases_address;
}

/// Records this thread's list of parents waiting to be released (NULL once it is drained).
static inline __attribute__((always_inline)) void _di_set_parent_releases(void *_Nullable address) {
    _di_parent_releases_address = address;
}

/// The runtime's strong reference to a native Swift object that may be being released:
/// the object, retained once, or NULL once its deinitialization has begun. The object's
/// memory must still be allocated, which an `unowned` reference ensures. Declared by the
/// runtime (`swift/Runtime/HeapObject.h`) with the C calling convention, and exported by
/// every Swift runtime this package supports; a weak reference does the same through the
/// side table it gives its object (see `UnkeptContainer`).
extern void *_Nullable swift_tryRetain(void *_Nonnull object);

/// Whether a native Swift object's deinitialization has begun, read without taking a
/// reference: the runtime's own check (`swift/Runtime/HeapObject.h`, the C calling
/// convention). The package's tests use it to find an object whose `deinit` waits for a
/// lock the test holds, where taking a reference could make the test's release the last.
extern bool swift_isDeallocating(void *_Nonnull object);

/// A native Swift object's strong reference count, read without taking a reference (the
/// runtime's `swift_retainCount`): whether a container's release of its parent is the
/// parent's last (`ParentReference`), and, for the package's tests, whether another thread
/// took a reference to an object whose lock the test holds.
extern size_t swift_retainCount(void *_Nonnull object);

/// `object`'s strong reference count.
static inline __attribute__((always_inline)) intptr_t _di_retain_count(void *_Nonnull object) {
    return (intptr_t)swift_retainCount(object);
}

/// Whether `object`'s deinitialization has begun.
static inline __attribute__((always_inline)) bool _di_is_deallocating(void *_Nonnull object) {
    return swift_isDeallocating(object);
}

/// `object`, retained, unless its deinitialization has begun (then NULL).
static inline __attribute__((always_inline)) void *_Nullable _di_try_retain(void *_Nonnull object) {
    return swift_tryRetain(object);
}

/// Whether no frame is bound as a task-local value anywhere in the process: a plain atomic
/// load, with no write to the shared word, so threads that resolve at once do not contend
/// for its cache line.
static inline __attribute__((always_inline)) bool _di_no_bound_frames(void) {
    return __atomic_load_n(&_di_bound_frame_count, __ATOMIC_ACQUIRE) == 0;
}

/// Adds `delta` (1 when a frame is bound, -1 when it is unbound) to the count of bound frames.
static inline __attribute__((always_inline)) void _di_add_bound_frames(intptr_t delta) {
    __atomic_fetch_add(&_di_bound_frame_count, delta, __ATOMIC_ACQ_REL);
}

/// Loads the word at `word` with no ordering: for a hint that any value keeps correct.
static inline __attribute__((always_inline)) intptr_t _di_load_relaxed(const intptr_t *_Nonnull word) {
    return __atomic_load_n(word, __ATOMIC_RELAXED);
}

/// Stores `value` at `word` with no ordering, for `_di_load_relaxed`.
static inline __attribute__((always_inline)) void _di_store_relaxed(intptr_t *_Nonnull word, intptr_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELAXED);
}

/// Loads the pointer at `slot` with acquire ordering: what was written before it was
/// published with `_di_store_release` is visible after.
static inline __attribute__((always_inline)) void *_Nullable _di_load_acquire(void *_Nullable const *_Nonnull slot) {
    return __atomic_load_n(slot, __ATOMIC_ACQUIRE);
}

/// Stores `value` at `slot` with release ordering, for `_di_load_acquire`.
static inline __attribute__((always_inline)) void _di_store_release(void *_Nullable *_Nonnull slot, void *_Nullable value) {
    __atomic_store_n(slot, value, __ATOMIC_RELEASE);
}

#endif
