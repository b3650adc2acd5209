import DependencyInjection
import Testing

/// A main-actor object that is not `Sendable`, as an app module writes it.
final class MainActorThumbnailCache {
    let size: Int
    var entries: [String] = []
    init(size: Int) { self.size = size }
}

extension DependencyContainer {
    var promiseThumbnails: ProviderFamily<Int, MainActorThumbnailCache> {
        shared { @MainActor (size: Int) in
            self.promiseThumbnailBuilds?.append(size)
            return MainActorThumbnailCache(size: size)
        }
    }
    /// The sizes `promiseThumbnails` built, in order, if a test installed the record.
    var promiseThumbnailBuilds: ThumbnailBuilds? { getValue(forKey: "promiseThumbnailBuilds") }
}

final class ThumbnailBuilds {
    var sizes: [Int] = []
    func append(_ size: Int) { sizes.append(size) }
}

/// Pins RegisteringDependencies.md:184-185 ("`singleton` and `shared` have one with a
/// `@MainActor` closure for main-actor values, as their plain forms do") and
/// DependencyContainer+MainActorScopes.swift:175-176 ("A provider family of one weakly
/// held instance per distinct argument, that lives on the main actor"), with
/// `shared { @MainActor (size: Int) in … }` for a class that is not `Sendable`.
@Suite struct MainActorSharedFamilyTests {
    @Test func eachArgumentHasOneLiveInstanceWhileItIsHeld() {
        let container = DependencyContainer()
        let small = container.promiseThumbnails(64)
        small.entries.append("logo")
        #expect(container.promiseThumbnails(64) === small)
        #expect(container.promiseThumbnails(64).entries == ["logo"])
        let large = container.promiseThumbnails(128)
        #expect(large !== small && large.size == 128 && small.size == 64)
        #expect(container.promiseThumbnails(128) === large)
        #expect(container.instanceIfBuilt(\.promiseThumbnails[64]) === small)
    }

    @Test func anInstanceIsHeldWeaklyAndRebuiltOnceItsHolderDropsIt() {
        let container = DependencyContainer()
        let builds = ThumbnailBuilds()
        container.setValue(builds, forKey: "promiseThumbnailBuilds")
        var held: MainActorThumbnailCache? = container.promiseThumbnails(64)
        let other = container.promiseThumbnails(128)
        held?.entries.append("logo")
        weak let released = held
        held = nil
        #expect(released == nil, "the container keeps a shared family member alive")
        #expect(container.instanceIfBuilt(\.promiseThumbnails[64]) == nil)

        let rebuilt = container.promiseThumbnails(64)
        #expect(rebuilt.entries.isEmpty, "the released instance was served again")
        #expect(rebuilt.size == 64)
        #expect(container.promiseThumbnails(128) === other, "dropping one argument's instance dropped another's")
        #expect(builds.sizes == [64, 128, 64])
    }
}
