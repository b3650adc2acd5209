/// The work of an asynchronous construction's task, which that task takes out as it
/// starts: it then holds none of what the construction needed (its container, the scope
/// it builds for, the registration's closure) once the construction is done, and opens
/// the room where its waiters wait only after letting go of all of it.
///
/// A task's closure is released some time after the task ends, on its thread, and a
/// waiter that woke meanwhile found its container, or its scope, still alive, though
/// nothing else held it.
///
/// ```swift
/// let construction = AsyncConstruction { (room, outcome) }
/// Task { await construction.run() }
/// ```
final class AsyncConstruction: @unchecked Sendable {
    // @unchecked: `work` is set once, before the task starts, and taken by that task alone.
    private var work: (@Sendable () async -> (InFlight?, Result<AnyBox, any Error>))?

    init(_ work: @escaping @Sendable () async -> (InFlight?, Result<AnyBox, any Error>)) { self.work = work }

    /// Builds, then opens the room, if any, once the work and what it captured are gone.
    func run() async {
        let (room, outcome) = await runWork()
        room?.finish(outcome)
    }

    /// Runs the work and lets go of it before returning.
    private func runWork() async -> (InFlight?, Result<AnyBox, any Error>) {
        guard let work else { preconditionFailure("an async construction runs once") }
        self.work = nil
        return await work()
    }
}
