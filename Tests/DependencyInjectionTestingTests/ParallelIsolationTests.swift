import DependencyInjection
import DependencyInjectionTesting
import Testing

/// The proof that parallel tests are isolated, written the way an app team would write
/// its suite: a suite-level stub, and tests that override the same dependencies again.
///
/// Swift Testing runs the 128 cases below in parallel. Each one overrides the *same*
/// registration (`httpClient`) and stored value (`token`) with values of its own, then
/// yields a varying number of times and hops through child tasks for several rounds so
/// that the other cases run and write in between, and checks each time that it sees only
/// its own values.
///
/// How it fails when isolation breaks: with one shared container (say
/// `DependencyContainer.main = .mocks` and overrides on `.mocks`), the last case to write
/// wins, so the others read a client name or token ending in another number and their
/// `#expect`s fail; a case starting after another's override would not even see the
/// suite's `"suite"` client. `sessionStore`, a singleton built from the token, would be
/// built once and carry one case's token into all of them, and `SingletonRegistry`
/// catches any singleton instance handed to two cases even when their values agree.
@Suite(.dependencies { $0.override(\.httpClient) { StubHTTPClient("suite") } })
struct ParallelIsolationTests {
    @Test(arguments: 0..<128) func eachTestSeesOnlyItsOwnOverrides(id: Int) async {
        let container = DependencyContainer.main
        #expect(container.httpClient().name == "suite")
        #expect(container.token == nil)

        container.override(\.httpClient) { StubHTTPClient("client-\(id)") }
        container.setValue("token-\(id)", forKey: "token")
        let model = FeedViewModel()

        for round in 0..<4 {
            for _ in 0...((id &* 7 &+ round) % 5) { await Task.yield() }
            Self.expectOwnValues(id)
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<4 { group.addTask { Self.expectOwnValues(id) } }
            }
            await Task { Self.expectOwnValues(id) }.value
        }

        #expect(model.loader.client.name == "client-\(id)")
        #expect(model.token == "token-\(id)")
        #expect(model.session === container.sessionStore())
        SingletonRegistry.shared.register(container.httpClient(), for: id)
        SingletonRegistry.shared.register(container.sessionStore(), for: id)
        // Nothing was written where other tests could see it.
        #expect(DependencyContainer.mocks.token == nil)
    }

    /// What the running case must see through the task-local `main`.
    static func expectOwnValues(_ id: Int) {
        let container = DependencyContainer.main
        #expect(container.httpClient().name == "client-\(id)")
        #expect(container.httpClient() === container.httpClient())   // a singleton per test
        #expect(container.feedLoader().client.name == "client-\(id)")
        #expect(container.token == "token-\(id)")
        #expect(container.sessionStore().owner == "token-\(id)")
        #expect(FeedViewModel().loader.client.name == "client-\(id)")
    }
}

/// Which test each singleton instance was handed to. Instances are kept alive, so two
/// different instances never share an `ObjectIdentifier`.
final class SingletonRegistry: Sendable {
    static let shared = SingletonRegistry()
    private let owners = Locked<[ObjectIdentifier: (owner: Int, instance: AnyObject)]>([:])

    func register(_ instance: AnyObject, for test: Int) {
        let previous = owners.withValue { owners in
            let previous = owners[ObjectIdentifier(instance)]?.owner
            if previous == nil { owners[ObjectIdentifier(instance)] = (test, instance) }
            return previous
        }
        #expect(previous == nil || previous == test, "test \(test) got test \(previous ?? -1)'s singleton")
    }
}
