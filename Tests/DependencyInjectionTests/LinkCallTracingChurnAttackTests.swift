import DependencyInjection
import Foundation
import Testing

// Linked provider calls (fixtures in LinkedFactoryProviderTests) under tracers that change,
// nested calls, tracers that call and replace themselves, and what stays alive afterwards.

extension DependencyContainer {
    /// A registration whose getter calls the provider the importer published: the getter
    /// runs inside the call of `LCCOuter.makeViaGetter`, so the second call nests in the first.
    var lccViaGetter: Provider<ImportParser> {
        let parser = importer().makeParser()
        return factory { ImportParser(dialect: "via " + parser.dialect) }
    }
    var lccOuter: Provider<LCCOuter> { singleton { LCCOuter() } }
}

final class LCCOuter: @unchecked Sendable {
    @Dependency(\.lccViaGetter) var makeViaGetter: Provider<ImportParser>
    init() {}
}

/// Whether a batch's depths are a tree from 0: the first at 0, none negative, none more than
/// one below the one before.
private func isTree(_ depths: [Int]) -> Bool {
    guard depths.first == 0 else { return false }
    for (previous, next) in zip(depths, depths.dropFirst()) where next < 0 || next > previous + 1 { return false }
    return true
}

@Suite struct LinkCallTracingChurnAttackTests {
    /// A call whose registration's getter makes another call: one batch, a tree from 0,
    /// delivered once, when the outer call's frame ended.
    @Test func aCallNestedInACallsGetterIsOneBatch() {
        let container = DependencyContainer()
        let outer = container.lccOuter()
        _ = container.importer()
        // The first read of the property runs the registration's getter too: untraced here.
        _ = outer.makeViaGetter
        let batches = Collected<[String]>()
        container.tracer = ResolutionTracer { events in batches.append(events.map { "\($0.name) \($0.depth)" }) }
        let made = outer.makeViaGetter()
        container.tracer = nil
        #expect(made.dialect == "via live")
        #expect(batches.values.count == 1, "\(batches.values)")
        #expect(batches.values.allSatisfy { isTree($0.map { Int($0.split(separator: " ").last!)! }) }, "\(batches.values)")
        #expect(batches.values.joined().filter { $0.hasPrefix("lccViaGetter") }.count == 1, "\(batches.values)")
        #expect(batches.values.joined().filter { $0.hasPrefix("makeParser") }.count == 1, "\(batches.values)")
    }

    /// With the tracer set all along, every call is heard of exactly once, as one batch of
    /// its own, while another thread installs and removes an override of the singleton the
    /// call needs, and resets it.
    @Test func everyCallIsHeardOnceWhileOverridesChange() async {
        let container = DependencyContainer()
        let importer = container.importer()
        let batches = Collected<[String]>()
        container.tracer = ResolutionTracer { events in batches.append(events.map { "\($0.name) \($0.depth)" }) }
        let rounds = 150
        let finished = await concurrentlyOffThePool(threads: 8) { index in
            for round in 0..<rounds {
                if index == 0 {
                    switch round % 3 {
                    case 0: container.override(\.sharedParser) { ImportParser(dialect: "stub") }
                    case 1: container.reset(\.sharedParser)
                    default: container.reset()
                    }
                }
                _ = importer.makeDerivedParser()
            }
        }
        container.tracer = nil
        #expect(finished)
        let calls = batches.values.filter { $0.first == "makeDerivedParser 0" }
        #expect(calls.count == 8 * rounds, "heard \(calls.count) of \(8 * rounds) calls")
        #expect(batches.values.count == 8 * rounds, "\(batches.values.count) batches")
        let shapes: Set<[String]> = [["makeDerivedParser 0", "sharedParser 1"]]
        #expect(batches.values.allSatisfy(shapes.contains), "\(Set(batches.values))")
    }

    /// Threads calling nested linked providers while one switches tracers: each batch heard
    /// is a tree from 0, and a tracer removed before a call began hears nothing of it.
    @Test func nestedCallsWhileTracersSwitch() async {
        let container = DependencyContainer()
        let outer = container.lccOuter()
        _ = container.importer()
        let retired = Collected<Bool>()
        let badBatches = Collected<[String]>()
        let heard = Collected<Int>()
        let finished = await concurrentlyOffThePool(threads: 8) { index in
            for round in 0..<150 {
                if index == 0 {
                    let tracer = ResolutionTracer { events in
                        heard.append(1)
                        let depths = events.map(\.depth)
                        if !isTree(depths) { badBatches.append(events.map { "\($0.name) \($0.depth)" }) }
                    }
                    container.tracer = round.isMultiple(of: 3) ? nil : tracer
                }
                _ = outer.makeViaGetter()
                if index == 1 { _ = container.importer().makeDerivedParser() }
            }
        }
        container.tracer = nil
        _ = retired
        #expect(finished)
        #expect(badBatches.values.isEmpty, "\(badBatches.values.prefix(5))")
        #expect(!heard.values.isEmpty)
    }

    /// A tracer that replaces itself in its callback, and calls the provider again there: the
    /// next call is heard by the new tracer only, and the old one hears its own call once.
    @Test func aTracerThatReplacesItselfAndCallsAgain() {
        let container = DependencyContainer()
        let importer = container.importer()
        let first = Collected<[String]>()
        let second = Collected<[String]>()
        let replacement = ResolutionTracer { events in second.append(events.map { "\($0.name) \($0.depth)" }) }
        container.tracer = ResolutionTracer { events in
            first.append(events.map { "\($0.name) \($0.depth)" })
            container.tracer = replacement
            _ = importer.makeDerivedParser()   // inside a tracer: not traced
        }
        _ = importer.makeDerivedParser()
        _ = importer.makeDerivedParser()
        container.tracer = nil
        #expect(first.values == [["makeDerivedParser 0", "sharedParser 1"]])
        #expect(second.values == [["makeDerivedParser 0", "sharedParser 1"]])
    }

    /// Neither the container nor the tracer (nor what its closure captured) stays alive
    /// because a call's frame or its batch kept it.
    @Test func nothingStaysAliveAfterTracedCalls() {
        final class Captured: Sendable {}
        weak var container: DependencyContainer?
        weak var captured: Captured?
        weak var importer: Importer?
        do {
            let made = DependencyContainer()
            container = made
            let object = Captured()
            captured = object
            made.tracer = ResolutionTracer { _ in withExtendedLifetime(object) {} }
            let kept = made.importer()
            importer = kept
            for _ in 0..<3 {
                _ = kept.makeDerivedParser()
                _ = kept.makeParser()
            }
            made.tracer = nil
        }
        #expect(container == nil)
        #expect(captured == nil)
        #expect(importer == nil)
    }
}
