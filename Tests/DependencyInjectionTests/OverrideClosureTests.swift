import Foundation
import Testing
@testable import DependencyInjection

// What an override's closure builds, what it captured and when that goes: for values of
// every layout, for closures that capture nothing, one thing or a lot, for thousands of a
// provider family's arguments, under decorations, on many threads at once. The override is
// kept and called by code specialized where the app calls `override` and resolves, so CI
// runs these in a release build too.

/// An object whose `deinit` is counted, and notes whether its container's lock was held.
private final class OCTCapture: @unchecked Sendable {
    // @unchecked: set once, in `init`; `container` is weak and read in `deinit` only.
    let tag: String
    weak var container: DependencyContainer?
    let goneUnderLock: Collected<Bool>?
    let gone: Counter?
    init(
        _ tag: String, _ container: DependencyContainer? = nil, _ goneUnderLock: Collected<Bool>? = nil,
        counting gone: Counter? = nil
    ) {
        (self.tag, self.container, self.goneUnderLock, self.gone) = (tag, container, goneUnderLock, gone)
    }
    deinit {
        gone?.increment()
        guard let container, let goneUnderLock else { return }
        goneUnderLock.append(isLockedHere(container))
    }
}

/// Wider than three words, so that no existential keeps it inline.
private struct OCTWide: Equatable, Sendable {
    var first, second, third, fourth, fifth: Int
    var name: String
}

private protocol OCTService: Sendable {
    var name: String { get }
}

private struct OCTLiveService: OCTService {
    var name: String { "live" }
}

private struct OCTStubService: OCTService {
    let name: String
}

private enum OCTMode: Equatable, Sendable {
    case off
    case on(String, Int)
}

private final class OCTObject: Sendable {
    let tag: String
    init(_ tag: String) { self.tag = tag }
}

/// A top-level function, which captures nothing: its closure has no context.
private func makeStubService() -> any OCTService { OCTStubService(name: "function") }

extension DependencyContainer {
    fileprivate var octNumber: Provider<Int> { singleton { 1 } }
    fileprivate var octWide: Provider<OCTWide> {
        factory { OCTWide(first: 1, second: 2, third: 3, fourth: 4, fifth: 5, name: "live") }
    }
    fileprivate var octService: Provider<any OCTService> { singleton { OCTLiveService() } }
    fileprivate var octMode: Provider<OCTMode> { singleton { .off } }
    fileprivate var octOptional: Provider<String?> { factory { nil } }
    fileprivate var octPair: Provider<(Int, String)> { factory { (0, "live") } }
    fileprivate var octObject: Provider<OCTObject> { factory { OCTObject("live") } }
    fileprivate var octWideFamily: ProviderFamily<Int, OCTWide> {
        singleton { (id: Int) in OCTWide(first: id, second: 0, third: 0, fourth: 0, fifth: 0, name: "live") }
    }
}

@Suite struct OverrideClosureTests {
    @Test func anOverrideOfAValueOfEveryLayoutBuildsWhatItsClosureReturns() {
        let container = DependencyContainer()
        let suffix = String(repeating: "x", count: 40)  // a string of its own, on the heap
        container.override(\.octNumber) { 42 }
        container.override(\.octWide) { OCTWide(first: 9, second: 8, third: 7, fourth: 6, fifth: 5, name: "stub" + suffix) }
        container.override(\.octService) { OCTStubService(name: "stub" + suffix) }
        container.override(\.octMode) { .on(suffix, 7) }
        container.override(\.octOptional) { suffix }
        container.override(\.octPair) { (3, suffix) }
        container.override(\.octObject) { OCTObject(suffix) }

        #expect(container.octNumber() == 42)
        #expect(container.octWide() == OCTWide(first: 9, second: 8, third: 7, fourth: 6, fifth: 5, name: "stub" + suffix))
        #expect(container.octService().name == "stub" + suffix)
        #expect(container.octMode() == .on(suffix, 7))
        #expect(container.octOptional() == suffix)
        #expect(container.octPair() == (3, suffix))
        #expect(container.octObject().tag == suffix)

        container.reset()
        #expect(container.octNumber() == 1)
        #expect(container.octWide().name == "live")
        #expect(container.octService().name == "live")
        #expect(container.octMode() == .off)
        #expect(container.octOptional() == nil)
        #expect(container.octPair() == (0, "live"))
        #expect(container.octObject().tag == "live")
    }

    @Test func aFunctionThatCapturesNothingOverridesAndIsReplaced() {
        let container = DependencyContainer()
        container.override(\.octService, makeStubService)
        #expect(container.octService().name == "function")
        container.override(\.octService) { OCTStubService(name: "closure") }
        #expect(container.octService().name == "closure")
        container.override(\.octService, makeStubService)
        #expect(container.octService().name == "function")
        let child = DependencyContainer(parent: container)
        #expect(child.octService().name == "function", "a child builds from its parent's override")
    }

    /// What the closure captured lives while the override is installed, and goes, after
    /// unlocking, when the override is replaced, reset, removed with `reset()` or goes with
    /// its container.
    @Test(arguments: ["replaced", "reset of the key", "reset", "container dropped"])
    func whatTheClosureCapturedLivesAsLongAsTheOverride(end: String) {
        let goneUnderLock = Collected<Bool>()
        weak var weakCapture: OCTCapture?
        var container: DependencyContainer? = DependencyContainer()
        do {
            let capture = OCTCapture("captured", container, goneUnderLock)
            weakCapture = capture
            container!.override(\.octObject) { [capture] in OCTObject(capture.tag) }
        }
        #expect(weakCapture != nil, "the override's closure let go of what it captured while installed")
        #expect(container!.octObject().tag == "captured")
        #expect(container!.octObject().tag == "captured", "the closure ran once only")
        #expect(weakCapture != nil)
        switch end {
        case "replaced": container!.override(\.octObject) { OCTObject("second") }
        case "reset of the key": container!.reset(\.octObject)
        case "reset": container!.reset()
        default: container = nil
        }
        #expect(weakCapture == nil, "what the closure captured outlived its override (\(end))")
        #expect(goneUnderLock.takeAll().allSatisfy { !$0 }, "what the closure captured went under the lock (\(end))")
        if let container {
            #expect(container.octObject().tag == (end == "replaced" ? "second" : "live"))
        }
    }

    /// A singleton built from the override keeps its instance, not the closure: the capture
    /// goes when the override does, while the instance stays until it is dropped with it.
    @Test func aSingletonBuiltFromTheOverrideDoesNotKeepTheClosure() {
        let container = DependencyContainer()
        weak var weakCapture: OCTCapture?
        do {
            let capture = OCTCapture("captured")
            weakCapture = capture
            container.override(\.octService) { [capture] in OCTStubService(name: capture.tag) }
        }
        #expect(container.octService().name == "captured")
        container.override(\.octService) { OCTStubService(name: "next") }
        #expect(weakCapture == nil)
        #expect(container.octService().name == "next")
    }

    /// Thousands of arguments of a family, each overridden with a closure of its own, kept
    /// in the table's dictionary: each builds its own, and a reset of the family lets go
    /// of every capture.
    @Test func thousandsOfArgumentsEachBuildFromTheirOwnClosure() {
        let container = DependencyContainer()
        let count = 3_000
        let gone = Counter()
        for id in 0..<count {
            let capture = OCTCapture("argument \(id)", counting: gone)
            container.override(\.octWideFamily[id]) { [capture] in
                OCTWide(first: id, second: -id, third: 0, fourth: 0, fifth: 0, name: capture.tag)
            }
        }
        let wrong = (0..<count).filter { id in
            let value = container.octWideFamily(id)
            return value.first != id || value.second != -id || value.name != "argument \(id)"
        }
        #expect(wrong.isEmpty, "\(wrong.count) arguments built something else, the first \(wrong.first ?? -1)")
        #expect(gone.count == 0, "the overrides let go of what they captured")
        container.reset(\.octWideFamily)
        #expect(gone.count == count, "a reset of the family kept \(count - gone.count) of what the overrides captured")
        #expect(container.octWideFamily(7).name == "live")
    }

    /// A family's override builds each argument through a closure the family's entry makes
    /// for it, which captures the argument.
    @Test func aFamilysOverrideBuildsEachArgumentWithItsOwnClosure() {
        let container = DependencyContainer()
        container.override(\.octWideFamily) { id in
            OCTWide(first: id * 10, second: 0, third: 0, fourth: 0, fifth: 0, name: "family")
        }
        #expect(container.octWideFamily(1).first == 10)
        #expect(container.octWideFamily(2).first == 20)
        container.override(\.octWideFamily[2]) { OCTWide(first: -2, second: 0, third: 0, fourth: 0, fifth: 0, name: "own") }
        #expect(container.octWideFamily(2).first == -2, "the argument's own override wins, and drops the family's instance")
        #expect(container.octWideFamily(1).first == 10, "the family's instance for 1 was kept")
        let child = DependencyContainer(parent: container)
        #expect(child.octWideFamily(2).name == "own", "the argument's own override wins in a child")
        #expect(child.octWideFamily(3).name == "family")
    }

    /// A decoration over an override wraps what the override's closure builds, in the
    /// container and in a child.
    @Test func aDecorationWrapsWhatTheOverridesClosureBuilds() {
        let container = DependencyContainer()
        let suffix = "-decorated"
        container.override(\.octWide) { OCTWide(first: 1, second: 1, third: 1, fourth: 1, fifth: 1, name: "stub") }
        container.decorate(\.octWide) { value in
            var value = value
            value.name += suffix
            return value
        }
        #expect(container.octWide().name == "stub-decorated")
        let child = DependencyContainer(parent: container)
        child.override(\.octWide) { OCTWide(first: 2, second: 2, third: 2, fourth: 2, fifth: 2, name: "child") }
        #expect(child.octWide().name == "child", "a child's own override replaces its parent's decorations")
        let grandchild = DependencyContainer(parent: container)
        grandchild.decorate(\.octWide) { value in
            var value = value
            value.first = 100
            return value
        }
        let built = grandchild.octWide()
        #expect(built.name == "stub-decorated" && built.first == 100, "the parent's override, then both decorations")
    }

    /// Threads released together replace one override with closures of their own and
    /// resolve it: every value comes whole from one of the closures installed, and every
    /// capture goes, once, when nothing holds its override.
    @Test func threadsReplacingAndResolvingAnOverrideSeeWholeClosures() async {
        let container = DependencyContainer()
        let made = Collected<String>()
        let gone = Counter()
        let threads = 8
        let rounds = 300
        let finished = await concurrentlyOffThePool(threads: threads) { thread in
            for round in 0..<rounds {
                let capture = OCTCapture("\(thread)-\(round)", counting: gone)
                container.override(\.octWide) { [capture] in
                    OCTWide(first: thread, second: round, third: thread, fourth: round, fifth: 0, name: capture.tag)
                }
                let value = container.octWide()
                if value.name != "\(value.first)-\(value.second)" || value.third != value.first
                    || value.fourth != value.second
                {
                    made.append("torn: \(value)")
                }
            }
        }
        #expect(finished)
        #expect(made.takeAll().isEmpty)
        #expect(gone.count == threads * rounds - 1, "only the override installed last keeps what it captured")
        container.reset(\.octWide)
        #expect(gone.count == threads * rounds)
    }
}
