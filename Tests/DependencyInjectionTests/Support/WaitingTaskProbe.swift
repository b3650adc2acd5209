import DependencyInjection

/// A task a construction starts that outlives it: it waits for `latch`, and the test gets
/// it from `started` to await its end. Started inside a construction, the task inherits the
/// construction's frame, which tests of what a frame keeps alive rely on.
///
/// ```swift
/// let probe = WaitingTaskProbe(in: container)   // the construction calls startWaitingTask()
/// let task = await probe.started.value()
/// probe.latch.open(); await task.value
/// ```
final class WaitingTaskProbe: Sendable {
    static let key = "waitingTaskProbe"
    let latch = AsyncLatch()
    let started = Handoff<Task<Void, Never>>()

    /// Stores a new probe in `container`, for its constructions to find.
    init(in container: DependencyContainer) {
        container.setValue(self, forKey: Self.key)
    }
}

extension DependencyContainer {
    /// Starts a task that waits for the latch of the probe stored here, if any, and hands
    /// the task to the probe.
    func startWaitingTask() {
        guard let probe: WaitingTaskProbe = getValue(forKey: WaitingTaskProbe.key) else { return }
        probe.started.put(Task { await probe.latch.wait() })
    }
}
