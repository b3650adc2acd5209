@testable import DependencyInjection
import Foundation
import Testing

extension DependencyContainer {
    /// A plain registration that reads the container's stored "getter-tag".
    var getterTag: String { getValue(forKey: "getter-tag") ?? "untagged" }

    /// A singleton per argument, for a key path that carries its argument.
    subscript(getterTrack index: Int) -> Provider<TaggedNode> {
        singleton(index) { TaggedNode("track \(index)") }
    }
}

/// Declares its property with a key path literal, which an optimized build compiles to the
/// getter's call (``PropertyGetter``).
final class LiteralGetterHolder: @unchecked Sendable {
    @Dependency(\.httpClient) var client
    @Dependency(\.getterTag) var tag
    init() {}
}

/// Declares its property with a key path that carries a value of the object's: the storage
/// keeps the key path, in any build.
final class ArgumentGetterHolder: @unchecked Sendable {
    @Dependency var track: TaggedNode
    init(index: Int, container: DependencyContainer) {
        _track = Dependency(\.[getterTrack: index], container: container)
    }
}

/// What a `@Dependency` storage keeps of how its property reads its registration: the
/// function of a getter that captures nothing, else the key path, and either way reads
/// the registration it names (``_PropertyGetterWord``).
@Suite struct PropertyGetterTests {
    private let site = PropertySite(declaredIn: "PropertyGetterTests", fileID: #fileID, line: #line)

    /// Reads `storage` as a wrapper does, passing a projection that records each key path
    /// it is handed.
    private func firstRead(_ storage: DependencyStorage, projected: Projections) -> String {
        let box = DependencyStorage.resolveOnce(from: storage.published, declaredAt: site) { container, keyPath, step in
            projected.append(keyPath)
            step = .built
            return Box(container[keyPath: unsafeDowncast(keyPath, to: KeyPath<DependencyContainer, String>.self)])
        }
        return _PublishedBox.unbox(box.takeRetainedValue(), as: String.self)
    }

    @Test func aGetterThatCapturesNothingIsKeptAsItsFunctionAndReadsTheContainerItIsGiven() {
        let container = DependencyContainer()
        container.setValue("from the function", forKey: "getter-tag")
        let getter = PropertyGetter { container, step in
            guard let container else { return \DependencyContainer.getterTag }
            step = .built
            return Box(container.getterTag + " of a kept function")
        }
        // A function at an odd address (an x86_64 build optimized for size places about
        // half of them there) cannot be tagged apart from a key path: it keeps its key path.
        let function = unsafeBitCast(getter, to: (UInt, UInt).self).0
        let storage = DependencyStorage(getter, container: container)
        #expect(storage.getterCapturedNothing)
        let projected = Projections()
        let read = firstRead(storage, projected: projected)
        if function & 1 == 0 {
            #expect(storage.keptKeyPath == nil)
            #expect(read == "from the function of a kept function")
            #expect(projected.all.isEmpty, "a kept function reads without the key path")
        } else {
            #expect(storage.keptKeyPath == \DependencyContainer.getterTag)
            #expect(read == "from the function")
            #expect(projected.all.count == 1)
        }
    }

    @Test func aGetterThatCapturesMoreThanItsKeyPathIsKeptAsThatKeyPathAndProjectsIt() {
        let container = DependencyContainer()
        container.setValue("from the key path", forKey: "getter-tag")
        let keyPath = \DependencyContainer.getterTag
        let projected = Projections()
        let storage = DependencyStorage(
            PropertyGetter { container, step in
                guard let container else { return keyPath }
                // A capture no build can fold away: the getter has a context.
                projected.append(\DependencyContainer.isMocked)
                step = .built
                return Box("the getter itself, which a kept key path never calls: \(container)")
            }, container: container)
        #expect(!storage.getterCapturedNothing)
        #expect(storage.keptKeyPath === keyPath)
        #expect(firstRead(storage, projected: projected) == "from the key path")
        #expect(projected.all.count == 1)
        #expect(projected.all.first === keyPath, "the projection gets the key path the getter handed back")
    }

    @Test func aLiteralKeyPathCompilesToItsGetterInAnOptimizedBuildAndIsKeptOtherwise() {
        let container = DependencyContainer()
        container.setValue("literal", forKey: "getter-tag")
        let holder = DependencyContainer.withMain(container) { LiteralGetterHolder() }
        #if DEBUG
        // A debug build does not specialize the getter, which keeps its key path.
        #expect(!holder.$client.storage.getterCapturedNothing)
        #expect(!holder.$tag.storage.getterCapturedNothing)
        #else
        // Kept as a function, but for one at an odd address (`-Osize` on x86_64).
        #expect(holder.$client.storage.getterCapturedNothing, "the getter of a key path literal captures nothing")
        #expect(holder.$tag.storage.getterCapturedNothing, "the getter of a key path literal captures nothing")
        #endif
        #expect(holder.client === container.httpClient())
        #expect(holder.tag == "literal")
    }

    @Test func objectsOfOneDeclarationMadeAndReadOnThreadsReleasedTogetherShareOneInstance() async {
        let container = DependencyContainer()
        let builds = container.counter("httpClient")
        let tags = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"]
        let clients = Collected<ObjectIdentifier>()
        let wrongTags = Collected<String>()
        let finished = await concurrentlyOffThePool(threads: tags.count) { index in
            // Each thread a container of its own for the plain property, one for the singleton.
            let own = DependencyContainer(parent: container)
            own.setValue(tags[index], forKey: "getter-tag")
            for _ in 0..<200 {
                let holder = DependencyContainer.withMain(own) { LiteralGetterHolder() }
                holder.$client.container = container
                clients.append(ObjectIdentifier(holder.client))
                if holder.tag != tags[index] { wrongTags.append(holder.tag) }
            }
        }
        #expect(finished)
        #expect(builds.count == 1)
        #expect(Set(clients.values) == [ObjectIdentifier(container.httpClient())])
        #expect(clients.values.count == tags.count * 200)
        #expect(wrongTags.values.isEmpty)
    }

    @Test func aKeyPathWithAnArgumentOfTheObjectsIsKeptAndResolvesThatArgument() {
        let container = DependencyContainer()
        let holders = (0..<3).map { ArgumentGetterHolder(index: $0, container: container) }
        #expect(holders.allSatisfy { $0.$track.storage.keptKeyPath != nil && !$0.$track.storage.getterCapturedNothing })
        #expect(holders.map(\.track.tag) == ["track 0", "track 1", "track 2"])
        #expect(holders[1].track === container[getterTrack: 1]())
    }

    @Test func aKeptKeyPathGoesWithItsStorage() {
        let container = DependencyContainer()
        weak var keptPath: AnyKeyPath?
        do {
            let holder = ArgumentGetterHolder(index: 7, container: container)
            keptPath = holder.$track.storage.keptKeyPath
            #expect(holder.track.tag == "track 7")
        }
        #expect(keptPath == nil, "the storage released the key path it kept")
    }
}

/// The key paths a projection was handed, in order.
private final class Projections: @unchecked Sendable {
    private let lock = NSLock()
    private var paths: [AnyKeyPath] = []

    func append(_ path: AnyKeyPath) {
        lock.withLock { paths.append(path) }
    }

    var all: [AnyKeyPath] { lock.withLock { paths } }
}
