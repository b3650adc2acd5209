import Testing
@testable import DependencyInjection

// A property's first read runs in its thread's spare frame when it has one, the frame of
// the thread's last first read. These tests pin what users rely on through that reuse: a
// reused frame names the container of the read that runs in it, to what the read makes;
// and a frame kept for reuse keeps nothing of the constructions it ran in alive.

/// An argument object, whose release the tests observe through a weak reference.
final class SFTToken: Hashable, Sendable {
    let id: Int
    init(id: Int) { self.id = id }
    static func == (lhs: SFTToken, rhs: SFTToken) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// An object made by a plain computed property, with a property of its own that names no
/// container: it resolves from the container whose read made it.
final class SFTInner {
    @Dependency(\.sftName) var name: String
    init() {}
}

/// Resolves its one property from the container it is given.
final class SFTReader {
    @Dependency var inner: SFTInner
    init(container: DependencyContainer) { _inner = Dependency(\.sftInner, container: container) }
}

/// Reads a name from the container it is given.
final class SFTNameReader {
    @Dependency var name: String
    init(container: DependencyContainer) { _name = Dependency(\.sftName, container: container) }
}

extension DependencyContainer {
    /// The name stored in this container under `"sft.name"`.
    var sftName: Provider<String> { factory { self.getValue(forKey: "sft.name") ?? "none" } }

    /// Made by the read of a property, in the read's own frame; its property is read there
    /// too, a first read inside a first read.
    var sftInner: SFTInner {
        let inner = SFTInner()
        _ = inner.name
        return inner
    }

    /// A factory per token whose construction reads a property for the first time.
    subscript(sftReadingWith token: SFTToken) -> Provider<String> {
        factory(token) { SFTNameReader(container: self).name }
    }
}

@Suite struct SpareFrameTests {
    @Test func eachFirstReadOnAThreadNamesItsOwnContainerToWhatItMakes() {
        let first = DependencyContainer()
        first.setValue("first", forKey: "sft.name")
        let second = DependencyContainer()
        second.setValue("second", forKey: "sft.name")
        // One thread, one read after another: from the second on, each runs in the frame
        // the one before it ended in.
        for (container, name) in [(first, "first"), (second, "second"), (first, "first"), (second, "second")] {
            let reader = SFTReader(container: container)
            let inner = reader.inner
            #expect(inner.$name.container === container)
            #expect(inner.name == name)
        }
    }

    @Test func aFirstReadKeepsNothingOfTheConstructionItRanInAlive() {
        let container = DependencyContainer()
        container.setValue("kept", forKey: "sft.name")
        weak var released: SFTToken?
        do {
            let token = SFTToken(id: 1)
            released = token
            // The read runs inside the factory's construction, whose frame names the token.
            #expect(container[sftReadingWith: token]() == "kept")
        }
        #expect(released == nil, "the frame kept for the thread's next first read holds the construction it ran in")
    }
}
