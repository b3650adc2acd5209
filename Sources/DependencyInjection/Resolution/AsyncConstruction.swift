/// The work of an asynchronous construction's task, which that task takes out as it
/// starts: it then holds none of what the construction needed (its container, the scope
/// it builds for, the registration's closure) once the construction is done, and opens
/// the room where its waiters wait only after letting go of all of it.
///
/// A task's closure is released some time after the task ends, on its thread, and a
/// waiter that woke meanwhile found its container, or its scope, still alive, though
/// nothing else held it. What the construction's end took out of its container's state
/// goes only after the room opens, too: a `deinit` it runs may resolve what a waiter is
/// building, and would wait for that waiter, which waits for the room.
///
/// ```swift
/// let construction = AsyncConstruction { (room, outcome, Released()) }
/// Task { await construction.run() }
/// ```
final class AsyncConstruction: @unchecked Sendable {
    // @unchecked: `work` is set once, before the task starts, and taken by that task alone.
    private var work: (@Sendable () async -> (InFlight?, Result<AnyBox, any Error>, Released))?

    init(_ work: @escaping @Sendable () async -> (InFlight?, Result<AnyBox, any Error>, Released)) { self.work = work }

    /// Builds, then opens the room, if any, once the work and what it captured are gone;
    /// then lets go of what the construction's end released.
    func run() async {
        let (room, outcome, released) = await runWork()
        room?.finish(outcome)
        withExtendedLifetime(released) {}
    }

    /// Runs the work and lets go of it before returning.
    private func runWork() async -> (InFlight?, Result<AnyBox, any Error>, Released) {
        guard let work else { preconditionFailure("an async construction runs once") }
        self.work = nil
        return await work()
    }
}
