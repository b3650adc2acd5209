import DependencyInjection
import HeapStatistics
import Swinject

// `--memory`: the heap each object with one injected property costs, before and after its
// first read, in this package and in the peers. Measured in the process, without valgrind:
// the allocator's count of bytes in use (`mallinfo2().uordblks` on Linux, chunk overhead
// included) around creating 10,000 holders kept in an array whose storage was reserved
// before the first count, and again after reading each holder's property once.

/// How many holders each measurement keeps.
let holdersPerMeasurement = 10_000

/// Bytes of heap per holder: just created, and after its property was read once.
struct HolderFootprint {
    let name: String
    let created: Double
    let read: Double
}

/// Creates `holdersPerMeasurement` holders with `make`, then reads each with `read`, and
/// returns the heap each holder added.
func measureFootprint<Holder>(
    _ name: String, make: () -> Holder, read: (Holder) -> AnyObject
) -> HolderFootprint {
    // One holder first, read and dropped: what its type allocates once (metadata, caches)
    // is not any holder's cost.
    blackHole(read(make()))
    var holders: [Holder] = []
    holders.reserveCapacity(holdersPerMeasurement)
    let start = heap_bytes_in_use()
    for _ in 0..<holdersPerMeasurement {
        holders.append(make())
    }
    let created = heap_bytes_in_use()
    for holder in holders {
        blackHole(read(holder))
    }
    let afterRead = heap_bytes_in_use()
    withExtendedLifetime(holders) {}
    let count = Double(holdersPerMeasurement)
    return HolderFootprint(
        name: name,
        created: Double(Int(created) - Int(start)) / count,
        read: Double(Int(afterRead) - Int(start)) / count
    )
}

/// Measures every holder and prints one line each: `name<TAB>created<TAB>after read`, in
/// bytes per holder, or a line starting with `unavailable` where the platform has no count.
func printHolderMemory() {
    let main = DependencyContainer.main
    _ = main.client()
    let swinject = makeSwinjectContainer()
    let root = HandWiredRoot()
    warmUpSwiftDependencies()
    precondition(InjectedHolder().client === main.client())
    precondition(SwinjectHolder(resolver: swinject).client === swinject.resolve((any Client).self)!)
    precondition(DependenciesHolder().client === resolveClient())
    guard heap_bytes_in_use() > 0 else {
        print("unavailable\tthis platform's allocator reports no bytes in use")
        return
    }
    let footprints = [
        measureFootprint("DependencyInjection: InjectedHolder, @Dependency(\\.client)",
            make: { InjectedHolder() }, read: { $0.client }),
        measureFootprint("Swinject: SwinjectHolder, lazy var resolving from the container",
            make: { SwinjectHolder(resolver: swinject) }, read: { $0.client }),
        measureFootprint("swift-dependencies: DependenciesHolder, @Dependency(\\.benchClient)",
            make: { DependenciesHolder() }, read: { $0.client }),
        measureFootprint("by hand: HandWiredHolder(client:), a let",
            make: { HandWiredHolder(client: root.client) }, read: { $0.client }),
    ]
    for footprint in footprints {
        print("\(footprint.name)\t\(footprint.created)\t\(footprint.read)")
    }
}
