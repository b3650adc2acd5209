import DependencyInjection
import Foundation
import Testing

final class RequestLoadStore: Sendable {}
final class RequestLoadHandler: Sendable {
    let user: String
    let store: RequestLoadStore
    init(user: String, store: RequestLoadStore) { (self.user, self.store) = (user, store) }
}

final class RequestLoadWeakBox: @unchecked Sendable {
    private let lock = NSLock()
    private var scopes: [() -> AnyObject?] = []
    func add(_ object: AnyObject) {
        lock.withLock { scopes.append({ [weak object] in object }) }
    }
    var alive: Int { lock.withLock { scopes.filter { $0() != nil }.count } }
    var total: Int { lock.withLock { scopes.count } }
}

extension DependencyContainer {
    var requestLoadStore: Provider<RequestLoadStore> { singleton { RequestLoadStore() } }
    var requestLoadUser: Provider<String> { unimplemented() }
    var requestLoadHandler: Provider<RequestLoadHandler> {
        scoped { RequestLoadHandler(user: self.requestLoadUser(), store: self.requestLoadStore()) }
    }
    var requestLoadSessionHandler: Provider<RequestLoadHandler> {
        scoped { RequestLoadHandler(user: "session-" + self.requestLoadUser(), store: self.requestLoadStore()) }
    }
}

@Suite struct ScopePerRequestReleaseLoadTests {
    @Test func requestScopesUnderLoadShareTheAppStoreAndAreAllFreed() async {
        let app = DependencyContainer()
        let weakRefs = RequestLoadWeakBox()
        let store = Handoff<RequestLoadStore>()
        let mismatches = Counter()
        let stores = RequestLoadWeakBox()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<800 {
                group.addTask {
                    let request = DependencyContainer(scopeOf: app)
                    request.override(\.requestLoadUser) { "user-\(index)" }
                    let handler = request.requestLoadHandler()
                    if handler.user != "user-\(index)" { mismatches.increment() }
                    if request.requestLoadHandler() !== handler { mismatches.increment() }
                    weakRefs.add(request)
                    weakRefs.add(handler)
                    stores.add(handler.store)
                    if index == 0 { store.put(handler.store) }
                }
            }
        }
        #expect(mismatches.count == 0)
        #expect(weakRefs.alive == 0, "\(weakRefs.alive) of \(weakRefs.total) scopes or handlers are still alive")
        let appStore = await store.value()
        #expect(app.requestLoadStore() === appStore)
        #expect(app.instanceIfBuilt(\.requestLoadStore) === appStore)
    }

    @Test func requestsInsideSessionsUnderLoadAreFreedAndSeeTheirSession() async {
        let app = DependencyContainer()
        let weakRefs = RequestLoadWeakBox()
        let mismatches = Counter()
        await withTaskGroup(of: Void.self) { group in
            for session in 0..<20 {
                group.addTask {
                    let sessionScope = DependencyContainer(scopeOf: app)
                    sessionScope.override(\.requestLoadUser) { "s\(session)" }
                    let sessionHandler = sessionScope.requestLoadSessionHandler()
                    await withTaskGroup(of: Void.self) { inner in
                        for _ in 0..<40 {
                            inner.addTask {
                                let request = DependencyContainer(scopeOf: sessionScope)
                                let handler = request.requestLoadHandler()
                                if handler.user != "s\(session)" { mismatches.increment() }
                                if request.requestLoadSessionHandler() === sessionHandler { mismatches.increment() }
                                if handler.store !== app.requestLoadStore() { mismatches.increment() }
                                weakRefs.add(request)
                                weakRefs.add(handler)
                            }
                        }
                    }
                    await sessionScope.shutdown()
                    weakRefs.add(sessionScope)
                    weakRefs.add(sessionHandler)
                }
            }
        }
        #expect(mismatches.count == 0)
        #expect(weakRefs.alive == 0, "\(weakRefs.alive) of \(weakRefs.total) still alive")
    }
}

final class RequestLoadLeaf: Sendable {
    let source: String
    init(_ source: String) { self.source = source }
}
final class RequestLoadBuilt: Sendable {
    let leaf: RequestLoadLeaf
    init(_ leaf: RequestLoadLeaf) { self.leaf = leaf }
}

extension DependencyContainer {
    var requestLoadLeaf: Provider<RequestLoadLeaf> { singleton { RequestLoadLeaf("app") } }
    /// App-wide, built from the leaf: a request that overrides the leaf builds its own.
    var requestLoadBuilt: Provider<RequestLoadBuilt> { singleton { RequestLoadBuilt(self.requestLoadLeaf()) } }
    var requestLoadOuter: Provider<RequestLoadBuilt> { singleton { RequestLoadBuilt(self.requestLoadBuilt().leaf) } }
}

@Suite struct ScopeRequestsThatOverrideSomeOfTheTimeTests {
    @Test func requestsThatOverrideTheLeafGetTheirOwnCopyAndTheOthersShareTheApps() async {
        let app = DependencyContainer()
        let wrong = Collected<String>()
        let freed = RequestLoadWeakBox()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<1000 {
                group.addTask {
                    let request = DependencyContainer(scopeOf: app)
                    let overrides = index % 2 == 0
                    if overrides { request.override(\.requestLoadLeaf) { RequestLoadLeaf("request-\(index)") } }
                    let expected = overrides ? "request-\(index)" : "app"
                    let built = index % 3 == 0 ? request.requestLoadOuter() : request.requestLoadBuilt()
                    if built.leaf.source != expected { wrong.append("\(index): got \(built.leaf.source)") }
                    if request.requestLoadBuilt().leaf.source != expected { wrong.append("\(index) again: \(request.requestLoadBuilt().leaf.source)") }
                    if !overrides && request.requestLoadBuilt() !== app.requestLoadBuilt() { wrong.append("\(index) did not share") }
                    freed.add(request)
                    if overrides { freed.add(built) }
                }
            }
        }
        #expect(wrong.values.isEmpty, "\(wrong.values.prefix(10))")
        #expect(app.requestLoadBuilt().leaf.source == "app")
        #expect(app.requestLoadOuter().leaf === app.requestLoadLeaf())
        // The non-overriding requests' `built` is the app's: only the others must be freed.
        #expect(freed.alive == 0, "\(freed.alive) of \(freed.total) requests or their copies are alive")
    }
}
