import DependencyInjection
import Testing

/// Pins Scopes.md, "Not shut down, not torn down": "A container released without
/// `shutdown()` runs no teardowns."
@Suite struct UnshutdownReleaseTests {
    @Test func aContainerReleasedWithoutShutdownRunsNoTeardowns() {
        let log = Collected<String>()
        weak var released: DependencyContainer?
        var instances: [MailResource] = []
        do {
            let container = DependencyContainer()
            container.setValue(log, forKey: "shutdownLog")
            instances = [container.mailSync(), container.attachmentCache()]
            instances.append(container.mailDatabase())
            released = container
        }
        #expect(released == nil, "the container outlived its last reference")
        #expect(instances.count == 3)
        #expect(instances.allSatisfy { $0.closeCount == 0 }, "a teardown ran without shutdown()")
        #expect(log.values.isEmpty, "\(log.values)")
    }
}
