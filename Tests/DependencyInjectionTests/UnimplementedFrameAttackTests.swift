import DependencyInjection
import Foundation
import Testing

// An attack on unimplemented()'s stop, whose closure captures nothing and finds the
// placeholder's name, file and line in the frame of its construction: whatever runs around
// the placeholder's resolution (another construction, a property, a decoration, a task, a
// tracer, a scope), the message names the placeholder and points at its registration.

final class PlaceholderStopHolder: Sendable {
    let value: String
    init(_ value: String) { self.value = value }
}

/// Reads the placeholder through a property, on first read.
final class PlaceholderStopPropertyReader: @unchecked Sendable {
    // @unchecked: the only mutable state is the `@Dependency` property, which guards itself.
    @Dependency(\.placeholderStopToken) var token
}

extension DependencyContainer {
    static let placeholderStopTokenLine: UInt = #line + 1
    var placeholderStopToken: Provider<String> { unimplemented() }
    static let placeholderStopTrackerLine: UInt = #line + 1
    var placeholderStopTrackerProperty: Provider<String> { unimplemented("tracker") }
    static let placeholderStopScalarLine: UInt = #line + 1
    var placeholderStopScalarName: Provider<String> { unimplemented("t") }
    static let placeholderStopRegionLine: UInt = #line + 1
    subscript(placeholderStopRegion region: String) -> Provider<String> { unimplemented() }
    static let placeholderStopTwoLabelsLine: UInt = #line + 1
    subscript(placeholderStopTenant tenant: String, _ shard: Int) -> Provider<String> { unimplemented() }

    var placeholderStopSingletonUser: Provider<PlaceholderStopHolder> { singleton { PlaceholderStopHolder(self.placeholderStopToken()) } }
    var placeholderStopFactoryUser: Provider<PlaceholderStopHolder> { factory { PlaceholderStopHolder(self.placeholderStopToken()) } }
    var placeholderStopScopedUser: Provider<PlaceholderStopHolder> { scoped { PlaceholderStopHolder(self.placeholderStopToken()) } }
    var placeholderStopGraphUser: Provider<PlaceholderStopHolder> { graph { PlaceholderStopHolder(self.placeholderStopToken()) } }
    var placeholderStopSharedUser: Provider<PlaceholderStopHolder> { shared { PlaceholderStopHolder(self.placeholderStopToken()) } }
    var placeholderStopPropertyReader: Provider<PlaceholderStopPropertyReader> { singleton { PlaceholderStopPropertyReader() } }
    /// Reads the property inside its own construction.
    var placeholderStopPropertyReadInConstruction: Provider<PlaceholderStopHolder> {
        singleton { PlaceholderStopHolder(PlaceholderStopPropertyReader().token) }
    }
    var placeholderStopFamilyUser: ProviderFamily<Int, PlaceholderStopHolder> { singleton { (id: Int) in PlaceholderStopHolder(self.placeholderStopToken() + "\(id)") } }
    var placeholderStopRegionUser: Provider<PlaceholderStopHolder> { singleton { PlaceholderStopHolder(self[placeholderStopRegion: "eu"]()) } }
    var placeholderStopPlain: Provider<PlaceholderStopHolder> { singleton { PlaceholderStopHolder("plain") } }
    var placeholderStopAsyncUser: AsyncProvider<PlaceholderStopHolder> { singleton { PlaceholderStopHolder(self.placeholderStopToken()) } }
    /// Resolves the placeholder in a task its construction starts, and waits for it.
    var placeholderStopAsyncTaskUser: AsyncProvider<PlaceholderStopHolder> {
        singleton { await Task { PlaceholderStopHolder(self.placeholderStopToken()) }.value }
    }
    /// Resolves the placeholder in a task that runs at once, on the construction's thread.
    var placeholderStopImmediateTaskUser: Provider<PlaceholderStopHolder> {
        singleton {
            let box = Collected<PlaceholderStopHolder>()
            if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
                Task.immediate { box.append(PlaceholderStopHolder(self.placeholderStopToken())) }
            } else {
                box.append(PlaceholderStopHolder(self.placeholderStopToken()))
            }
            return box.values.first ?? PlaceholderStopHolder("suspended")
        }
    }
    /// A chain of `depth` factories with the placeholder at the bottom.
    subscript(placeholderStopChain depth: Int) -> Provider<PlaceholderStopHolder> {
        factory(name: "placeholderStopChain", line: UInt(500_000 + depth)) {
            depth == 0 ? PlaceholderStopHolder(self.placeholderStopToken()) : self[placeholderStopChain: depth - 1]()
        }
    }
}

/// The message's first words and where it points, for `name` at `line` in this file.
private func expectStop(
    _ output: String, name: String, keyPath: String, line: UInt, file: String = "UnimplementedFrameAttackTests.swift",
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(
        output.contains("\(name) is not implemented in this module: supply it with container.override(\(keyPath)) { … }"),
        "\(output)", sourceLocation: sourceLocation)
    #expect(output.contains("\(file):\(line):"), "points elsewhere: \(output)", sourceLocation: sourceLocation)
    #expect(!output.contains("where name is the placeholder's property"), "fallback message: \(output)",
            sourceLocation: sourceLocation)
    for other in ["placeholderStopSingletonUser", "placeholderStopFactoryUser", "placeholderStopScopedUser", "placeholderStopGraphUser", "placeholderStopSharedUser",
                  "placeholderStopPropertyReader", "placeholderStopFamilyUser", "placeholderStopRegionUser", "placeholderStopAsyncUser", "placeholderStopChain", "placeholderStopPlain",
                  "placeholderStopAsyncTaskUser", "placeholderStopImmediateTaskUser", "placeholderStopPropertyReadInConstruction"]
    where name != other {
        #expect(!output.contains("\(other) is not implemented"), "names the enclosing construction: \(output)",
                sourceLocation: sourceLocation)
    }
}

@Suite struct UnimplementedFrameAttackTests {
    @Test func insideASingletonsConstruction() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().placeholderStopSingletonUser()
        }
        expectStop(standardError(of: result), name: "placeholderStopToken", keyPath: "\\.placeholderStopToken", line: DependencyContainer.placeholderStopTokenLine)
    }

    @Test func insideAFactorysConstruction() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().placeholderStopFactoryUser()
        }
        expectStop(standardError(of: result), name: "placeholderStopToken", keyPath: "\\.placeholderStopToken", line: DependencyContainer.placeholderStopTokenLine)
    }

    /// Past a block of plain frames (64 a block): the innermost frame is still the placeholder's.
    @Test func atTheBottomOfAChainOfSeventyFactories() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer()[placeholderStopChain: 70]()
        }
        expectStop(standardError(of: result), name: "placeholderStopToken", keyPath: "\\.placeholderStopToken", line: DependencyContainer.placeholderStopTokenLine)
    }

    @Test func insideAScopedConstructionInAScope() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let app = DependencyContainer()
            _ = DependencyContainer(scopeOf: DependencyContainer(scopeOf: app)).placeholderStopScopedUser()
        }
        expectStop(standardError(of: result), name: "placeholderStopToken", keyPath: "\\.placeholderStopToken", line: DependencyContainer.placeholderStopTokenLine)
    }

    /// An app-wide singleton asked for by a scope, built in the app container for it.
    @Test func insideAnAppWideSingletonAScopeAskedFor() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let app = DependencyContainer()
            _ = app.placeholderStopPlain()
            _ = DependencyContainer(scopeOf: app).placeholderStopSingletonUser()
        }
        let output = standardError(of: result)
        expectStop(output, name: "placeholderStopToken", keyPath: "\\.placeholderStopToken", line: DependencyContainer.placeholderStopTokenLine)
        #expect(output.contains("while building placeholderStopSingletonUser, which is app-wide"), "\(output)")
    }

    @Test func insideAGraphAndASharedConstruction() async {
        let graph = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().placeholderStopGraphUser()
        }
        expectStop(standardError(of: graph), name: "placeholderStopToken", keyPath: "\\.placeholderStopToken", line: DependencyContainer.placeholderStopTokenLine)
        let shared = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().placeholderStopSharedUser()
        }
        expectStop(standardError(of: shared), name: "placeholderStopToken", keyPath: "\\.placeholderStopToken", line: DependencyContainer.placeholderStopTokenLine)
    }

    @Test func insideAFamilyMembersConstruction() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().placeholderStopFamilyUser(7)
        }
        expectStop(standardError(of: result), name: "placeholderStopToken", keyPath: "\\.placeholderStopToken", line: DependencyContainer.placeholderStopTokenLine)
    }

    @Test func onAPropertysFirstReadOutsideAndInsideAConstruction() async {
        let outside = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            let reader = container.placeholderStopPropertyReader()
            withExtendedLifetime(container) { _ = reader.token }
        }
        expectStop(standardError(of: outside), name: "placeholderStopToken", keyPath: "\\.placeholderStopToken", line: DependencyContainer.placeholderStopTokenLine)
        let inside = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer.main.placeholderStopPropertyReadInConstruction()
        }
        expectStop(standardError(of: inside), name: "placeholderStopToken", keyPath: "\\.placeholderStopToken", line: DependencyContainer.placeholderStopTokenLine)
    }

    /// A decoration of the placeholder itself, and a decoration of another registration
    /// that resolves the placeholder: both run inside a construction.
    @Test func withDecorations() async {
        let ofPlaceholder = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            container.decorate(\.placeholderStopToken) { "decorated " + $0 }
            _ = container.placeholderStopToken()
        }
        expectStop(standardError(of: ofPlaceholder), name: "placeholderStopToken", keyPath: "\\.placeholderStopToken",
                   line: DependencyContainer.placeholderStopTokenLine)
        let resolvingIt = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            container.decorate(\.placeholderStopPlain) { _ in PlaceholderStopHolder(container.placeholderStopToken()) }
            _ = container.placeholderStopPlain()
        }
        expectStop(standardError(of: resolvingIt), name: "placeholderStopToken", keyPath: "\\.placeholderStopToken",
                   line: DependencyContainer.placeholderStopTokenLine)
        let inOverride = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            container.override(\.placeholderStopPlain) { PlaceholderStopHolder(container.placeholderStopToken()) }
            _ = container.placeholderStopPlain()
        }
        expectStop(standardError(of: inOverride), name: "placeholderStopToken", keyPath: "\\.placeholderStopToken",
                   line: DependencyContainer.placeholderStopTokenLine)
    }

    @Test func insideAnAsyncConstructionAndATaskItStarts() async {
        let async = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = try? await DependencyContainer().placeholderStopAsyncUser()
        }
        expectStop(standardError(of: async), name: "placeholderStopToken", keyPath: "\\.placeholderStopToken", line: DependencyContainer.placeholderStopTokenLine)
        let task = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = try? await DependencyContainer().placeholderStopAsyncTaskUser()
        }
        expectStop(standardError(of: task), name: "placeholderStopToken", keyPath: "\\.placeholderStopToken", line: DependencyContainer.placeholderStopTokenLine)
        let immediate = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().placeholderStopImmediateTaskUser()
        }
        expectStop(standardError(of: immediate), name: "placeholderStopToken", keyPath: "\\.placeholderStopToken",
                   line: DependencyContainer.placeholderStopTokenLine)
        let detached = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            _ = await Task.detached { container.placeholderStopSingletonUser() }.value
        }
        expectStop(standardError(of: detached), name: "placeholderStopToken", keyPath: "\\.placeholderStopToken", line: DependencyContainer.placeholderStopTokenLine)
    }

    @Test func withATracerAndInAChild() async {
        let traced = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            container.tracer = ResolutionTracer { _ in }
            _ = container.placeholderStopSingletonUser()
        }
        expectStop(standardError(of: traced), name: "placeholderStopToken", keyPath: "\\.placeholderStopToken", line: DependencyContainer.placeholderStopTokenLine)
        let child = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let parent = DependencyContainer()
            parent.tracer = ResolutionTracer { _ in }
            parent.override(\.placeholderStopPlain) { PlaceholderStopHolder("parent") }
            _ = DependencyContainer(parent: DependencyContainer(parent: parent)).placeholderStopSingletonUser()
        }
        expectStop(standardError(of: child), name: "placeholderStopToken", keyPath: "\\.placeholderStopToken", line: DependencyContainer.placeholderStopTokenLine)
    }

    /// A tracer's callback resolves the placeholder, after a traced resolution.
    @Test func fromATracersCallback() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            container.tracer = ResolutionTracer { _ in _ = container.placeholderStopToken() }
            _ = container.placeholderStopPlain()
            // The callback may be delivered later, in a task: wait for it, which never ends.
            while true { _ = container.placeholderStopPlain(); await Task.yield() }
        }
        expectStop(standardError(of: result), name: "placeholderStopToken", keyPath: "\\.placeholderStopToken", line: DependencyContainer.placeholderStopTokenLine)
    }

    @Test func subscriptPlaceholdersInsideAConstruction() async {
        let region = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().placeholderStopRegionUser()
        }
        expectStop(standardError(of: region), name: "subscript(placeholderStopRegion:)", keyPath: "\\.[placeholderStopRegion: …]",
                   line: DependencyContainer.placeholderStopRegionLine)
        let twoLabels = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer()[placeholderStopTenant: "a", 3]()
        }
        expectStop(standardError(of: twoLabels), name: "subscript(placeholderStopTenant:_:)", keyPath: "\\.[placeholderStopTenant: …, …]",
                   line: DependencyContainer.placeholderStopTwoLabelsLine)
    }

    @Test func customNames() async {
        let tracker = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().placeholderStopTrackerProperty()
        }
        expectStop(
            standardError(of: tracker), name: "tracker", keyPath: "\\.placeholderStopTrackerProperty",
            line: DependencyContainer.placeholderStopTrackerLine)
        // A one-character name is a scalar `StaticString`, with no pointer.
        let scalar = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().placeholderStopScalarName()
        }
        expectStop(
            standardError(of: scalar), name: "t", keyPath: "\\.placeholderStopScalarName",
            line: DependencyContainer.placeholderStopScalarLine)
    }

    /// A placeholder declared in another file points at that file.
    @Test func aPlaceholderOfAnotherFilePointsAtIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            container.override(\.placeholderStopPlain) { _ = container.analytics(); return PlaceholderStopHolder("x") }
            _ = container.placeholderStopPlain()
        }
        expectStop(standardError(of: result), name: "analytics", keyPath: "\\.analytics",
                   line: DependencyContainer.analyticsRegistrationLine, file: "UnimplementedTests.swift")
    }

    /// Many threads reach placeholders of different names at once: the one that stops
    /// names one of them, with its own line, never a mix.
    @Test func manyThreadsReachingDifferentPlaceholders() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            DispatchQueue.concurrentPerform(iterations: 16) { index in
                switch index % 3 {
                case 0: _ = container.placeholderStopSingletonUser()
                case 1: _ = container.placeholderStopTrackerProperty()
                default: _ = container.placeholderStopRegionUser()
                }
            }
        }
        let output = standardError(of: result)
        let stops = [
            ("placeholderStopToken is not implemented", DependencyContainer.placeholderStopTokenLine),
            ("tracker is not implemented", DependencyContainer.placeholderStopTrackerLine),
            ("subscript(placeholderStopRegion:) is not implemented", DependencyContainer.placeholderStopRegionLine),
        ]
        let found = stops.filter { output.contains($0.0) }
        #expect(!found.isEmpty, "\(output)")
        for (text, line) in found {
            // Each message line carries its own file:line.
            let lines = output.split(separator: "\n").filter { $0.contains(text) }
            #expect(lines.allSatisfy { $0.contains("UnimplementedFrameAttackTests.swift:\(line):") }, "\(lines)")
        }
    }
}
