import DependencyInjection
import Foundation
import Testing

/// An argument whose hash is the same for every value, or for every value of one bucket:
/// arguments that collide in every table a container keeps them in.
struct CollidingArgumentKey: Hashable, Sendable {
    let raw: Int
    let buckets: Int
    func hash(into hasher: inout Hasher) { hasher.combine(raw % buckets) }
    static func == (lhs: CollidingArgumentKey, rhs: CollidingArgumentKey) -> Bool { lhs.raw == rhs.raw }
}

final class CollidingArgumentItem: Sendable {
    let raw: Int
    init(_ raw: Int) { self.raw = raw }
}

extension DependencyContainer {
    var collidingArgumentFamily: ProviderFamily<CollidingArgumentKey, CollidingArgumentItem> {
        singleton { (key: CollidingArgumentKey) in CollidingArgumentItem(key.raw) }
    }
    var collidingArgumentSharedFamily: ProviderFamily<CollidingArgumentKey, CollidingArgumentItem> {
        shared { (key: CollidingArgumentKey) in CollidingArgumentItem(key.raw) }
    }
    subscript(collidingArgumentItem key: CollidingArgumentKey) -> Provider<CollidingArgumentItem> {
        singleton(key) { CollidingArgumentItem(key.raw) }
    }
}

@Suite struct CollidingFamilyArgumentLoadTests {
    @Test(arguments: [1, 7, 512])
    func hundredsOfCollidingArgumentsEachKeepTheirOwnInstance(buckets: Int) async {
        let container = DependencyContainer()
        let count = 500
        let wrong = Counter()
        #expect(await concurrentlyOffThePool(threads: 4) { thread in
            // Each thread walks the arguments in its own order.
            let order = thread % 2 == 0 ? Array(0..<count) : Array((0..<count).reversed())
            for raw in order {
                let key = CollidingArgumentKey(raw: raw, buckets: buckets)
                if container.collidingArgumentFamily(key).raw != raw { wrong.increment() }
                if container[collidingArgumentItem: key]().raw != raw { wrong.increment() }
            }
        })
        #expect(wrong.count == 0, "\(wrong.count) resolutions returned another argument's instance")
        var seen = Set<ObjectIdentifier>()
        for raw in 0..<count {
            let key = CollidingArgumentKey(raw: raw, buckets: buckets)
            let a = container.collidingArgumentFamily(key)
            #expect(a === container.collidingArgumentFamily(key))
            #expect(a.raw == raw)
            seen.insert(ObjectIdentifier(a))
        }
        #expect(seen.count == count)
    }

    @Test func resettingTheFamilyWhileManyThreadsResolveCollidingArgumentsKeepsInstancesPerArgument() async {
        let container = DependencyContainer()
        let wrong = Counter()
        #expect(await concurrentlyOffThePool(threads: 4) { thread in
            for round in 0..<400 {
                let raw = (round * 7 + thread) % 300
                let key = CollidingArgumentKey(raw: raw, buckets: 1)
                if container.collidingArgumentFamily(key).raw != raw { wrong.increment() }
                if thread == 0 && round % 50 == 0 { container.reset(\.collidingArgumentFamily) }
                if thread == 1 && round % 60 == 0 {
                    container.override(\.collidingArgumentFamily) { (key: CollidingArgumentKey) in CollidingArgumentItem(key.raw) }
                }
            }
        })
        #expect(wrong.count == 0)
        for raw in 0..<300 {
            let key = CollidingArgumentKey(raw: raw, buckets: 1)
            #expect(container.collidingArgumentFamily(key) === container.collidingArgumentFamily(key))
        }
    }

    @Test func sharedFamilyWithCollidingArgumentsServesTheLiveInstanceOfEachArgument() {
        let container = DependencyContainer()
        var held: [CollidingArgumentItem] = []
        for raw in 0..<500 where raw % 2 == 0 {
            held.append(container.collidingArgumentSharedFamily(CollidingArgumentKey(raw: raw, buckets: 1)))
        }
        // Odd ones were never held: their instances are new each time, even ones are reused.
        for raw in 0..<500 {
            let item = container.collidingArgumentSharedFamily(CollidingArgumentKey(raw: raw, buckets: 1))
            #expect(item.raw == raw)
            if raw % 2 == 0 { #expect(item === held[raw / 2]) }
        }
        held.removeAll()
        weak var probe: CollidingArgumentItem?
        do {
            let fresh = container.collidingArgumentSharedFamily(CollidingArgumentKey(raw: 10, buckets: 1))
            probe = fresh
            #expect(fresh.raw == 10)
        }
        #expect(probe == nil)
    }
}
