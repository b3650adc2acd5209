@testable import DependencyInjection
import Foundation
import Testing

// A first read of a temporary object's property (`makeModel().value`): in an optimized
// build the inlined `wrappedValue` getter loads only the raw `words` from the owning
// object, so the object, and with it the property's storage, may be released once
// `resolveOnce` returns, before the box is unboxed. When the storage is the box's only
// owner (a factory's box, a plain property's, or a kept instance's whose container goes
// with the object) the read must still unbox a live box: `resolveOnce` hands the caller a
// reference. Without it a release build faults, and AddressSanitizer reports a
// use-after-free (CI runs these in its release step):
//
//     swift test -c release --sanitize=address --scratch-path .build/asanrel --filter LookTemporaryReadTests

final class LTRNode: Sendable {
    let tag: String
    init(_ tag: String) { self.tag = tag }
}

extension DependencyContainer {
    var ltrFactory: Provider<LTRNode> { factory { LTRNode("ltr.factory") } }
    var ltrKept: Provider<LTRNode> { singleton { LTRNode("ltr.kept") } }
    var ltrPlain: String { "ltr.plain" + String(repeating: "!", count: 40) }
}

final class LTRFactoryHolder: @unchecked Sendable {
    @Dependency var node: LTRNode
    init(_ container: DependencyContainer) { _node = Dependency(\.ltrFactory, container: container) }
}

final class LTRKeptHolder: @unchecked Sendable {
    @Dependency var node: LTRNode
    init(_ container: DependencyContainer) { _node = Dependency(\.ltrKept, container: container) }
}

final class LTRPlainHolder: @unchecked Sendable {
    @Dependency var text: String
    init(_ container: DependencyContainer) { _text = Dependency(\.ltrPlain, container: container) }
}

@inline(never) func ltrFactoryHolder(_ container: DependencyContainer) -> LTRFactoryHolder { LTRFactoryHolder(container) }

/// An object whose property's container, which keeps the instance, only the object holds.
@inline(never) func ltrKeptHolderOfItsOwnContainer() -> LTRKeptHolder {
    let container = DependencyContainer()
    _ = container.ltrKept()
    return LTRKeptHolder(container)
}

@inline(never) func ltrPlainHolder(_ container: DependencyContainer) -> LTRPlainHolder { LTRPlainHolder(container) }

/// An object whose property was read once already, returned as its only reference.
@inline(never) func ltrResolvedFactoryHolder(_ container: DependencyContainer) -> LTRFactoryHolder {
    let holder = LTRFactoryHolder(container)
    _ = holder.node
    return holder
}

@Suite struct LookTemporaryReadTests {
    /// A factory's box: the storage is its only owner (the frame's road).
    @Test func aTemporaryObjectsFactoryPropertyReadsIntact() {
        let container = DependencyContainer()
        var tags = Set<String>()
        for _ in 0..<200 { tags.insert(ltrFactoryHolder(container).node.tag) }
        #expect(tags == ["ltr.factory"])
    }

    /// A kept instance's box, served by a look, whose container goes with the object.
    @Test func aTemporaryObjectsLookedPropertyWithItsOwnContainerReadsIntact() {
        var tags = Set<String>()
        for _ in 0..<200 { tags.insert(ltrKeptHolderOfItsOwnContainer().node.tag) }
        #expect(tags == ["ltr.kept"])
    }

    /// A temporary object whose property was resolved already: the read takes the
    /// lock-free road, which loads the published box through the words it read from the
    /// object, its last use.
    @Test func aTemporaryObjectsResolvedPropertyReadsIntact() {
        let container = DependencyContainer()
        var tags = Set<String>()
        for _ in 0..<2000 { tags.insert(ltrResolvedFactoryHolder(container).node.tag) }
        #expect(tags == ["ltr.factory"])
    }

    /// A plain registration's box (a String value).
    @Test func aTemporaryObjectsPlainPropertyReadsIntact() {
        let container = DependencyContainer()
        var texts = Set<String>()
        for _ in 0..<200 { texts.insert(ltrPlainHolder(container).text) }
        #expect(texts == ["ltr.plain" + String(repeating: "!", count: 40)])
    }
}
