import Foundation
import Testing
@testable import DependencyInjection

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Fixtures: a greeting service behind a protocol, two registrations of it, and objects
// that inject it the ways apps do: a declared property, a helper that makes the wrapper,
// a key path built at run time, and both initializers on one key path.

protocol PFTGreeter: AnyObject, Sendable {
    var greeting: String { get }
}

final class PFTGreeterService: PFTGreeter {
    let greeting: String
    init(greeting: String) { self.greeting = greeting }
}

/// A holder of registrations, reached from the container by a key path that code appends
/// to at run time.
struct PFTRegistry {
    let container: DependencyContainer
    /// Reached only through this struct: no other key path leads to it.
    var greeter: Provider<any PFTGreeter> { container.singleton { PFTGreeterService(greeting: "registry") } }
}

extension DependencyContainer {
    /// A singleton that holds at the stored `"pft.gate"` while it builds, when one is stored.
    var pftGreeter: Provider<any PFTGreeter> {
        singleton {
            (self.getValue(forKey: "pft.gate") as ConstructionGate?)?.enterAndWait()
            return PFTGreeterService(greeting: "hello")
        }
    }

    var pftFarewell: Provider<any PFTGreeter> {
        singleton { PFTGreeterService(greeting: "goodbye") }
    }

    var pftRegistry: PFTRegistry { PFTRegistry(container: self) }

    /// A greeter per number: each key path to it carries its number, and each number is
    /// a registration of its own.
    subscript(pftNumbered number: Int) -> Provider<any PFTGreeter> {
        factory(number) { PFTGreeterService(greeting: "\(number)") }
    }
}

/// Thread-safe: its only state is a `@Dependency` property.
final class PFTHolder: @unchecked Sendable {
    @Dependency(\.pftGreeter) var greeter

    init() {}

    /// The address of the property's storage object, whose heap block it measures.
    var storageAddress: UnsafeMutableRawPointer { Unmanaged.passUnretained(_greeter.storage).toOpaque() }
    var site: PropertySite { _greeter.words.site }
}

/// Makes the wrapper for a registration: every property it makes is declared at the same
/// type, file and line, inside this function.
func pftInjected<Value>(_ keyPath: KeyPath<DependencyContainer, Provider<Value>>) -> Dependency<Value> {
    Dependency(keyPath)
}

final class PFTWrappedHolder {
    @Dependency var greeter: any PFTGreeter
    @Dependency var farewell: any PFTGreeter

    init() {
        _greeter = pftInjected(\.pftGreeter)
        _farewell = pftInjected(\.pftFarewell)
    }
}

final class PFTRuntimeKeyPathHolder {
    @Dependency var greeter: any PFTGreeter

    init(_ keyPath: KeyPath<DependencyContainer, Provider<any PFTGreeter>>) {
        _greeter = Dependency(keyPath)
    }

    var site: PropertySite { _greeter.words.site }
}

/// The same key path through both initializers: the service, and the provider itself as
/// a plain value.
final class PFTBothInitializers {
    @Dependency(\.pftGreeter) var service
    @Dependency(\.pftGreeter) var provider: Provider<any PFTGreeter>

    init() {}
}

/// Heap block of `address`, as the allocator counts it: on glibc the usable size and the
/// chunk's header word, on Darwin the block's size.
private func heapBlockBytes(_ address: UnsafeMutableRawPointer) -> Int {
    #if canImport(Darwin)
    return malloc_size(address)
    #else
    // Not in the Glibc module: <malloc.h>.
    typealias UsableSize = @convention(c) (UnsafeMutableRawPointer?) -> Int
    let usableSize = unsafeBitCast(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_usable_size"), to: UsableSize.self)
    return usableSize(address) + MemoryLayout<Int>.size
    #endif
}

/// What an object with one `@Dependency` costs in memory, and the one-word site record
/// that makes it small: each property resolves its own key path, whatever helper made
/// it, and finds its own site, from any number of threads.
@Suite struct PropertyFootprintTests {
    // MARK: - Heap

    /// The object and the property's storage: two heap blocks, which together an app
    /// pays for every view model or handler it keeps.
    ///
    /// The smallest of 32 objects: the allocator may hand a request a block a little larger
    /// than it needs, when the free block it finds is too small to split, which depends on
    /// what else the process (other tests in parallel) freed just before. The size of the
    /// blocks the objects ask for is what the package decides, and every object asks for
    /// the same.
    @Test func anObjectWithOneInjectedPropertyTakesAtMost110BytesOfHeapAfterItsRead() {
        let container = DependencyContainer()
        let holders = DependencyContainer.withMain(container) { (0..<32).map { _ in PFTHolder() } }
        #expect(holders.allSatisfy { $0.greeter.greeting == "hello" })
        let sizes = holders.map {
            heapBlockBytes(Unmanaged.passUnretained($0).toOpaque()) + heapBlockBytes($0.storageAddress)
        }
        let bytes = sizes.min()!
        #expect(bytes <= 110, "an object with one @Dependency takes \(bytes) bytes (up to \(sizes.max()!))")
    }

    @Test func objectsOfOneDeclarationShareOneRecord() {
        let container = DependencyContainer()
        let holders = DependencyContainer.withMain(container) { (0..<100).map { _ in PFTHolder() } }
        #expect(holders.allSatisfy { $0.site.sharesRecord(with: holders[0].site) })
        #expect(holders.allSatisfy { $0.greeter === holders[0].greeter })
    }

    // MARK: - Which key path

    /// Properties made by one helper share its site: what tells them apart is the key path.
    @Test func propertiesMadeByOneHelperEachResolveTheirOwnKeyPath() {
        let container = DependencyContainer()
        for _ in 0..<3 {
            let holder = DependencyContainer.withMain(container) { PFTWrappedHolder() }
            #expect(holder.greeter.greeting == "hello")
            #expect(holder.farewell.greeting == "goodbye")
        }
    }

    /// More key paths than the cache has slots, through one helper, so at one site: some
    /// share a slot, and each property still resolves its own.
    @Test func thousandsOfKeyPathsThroughOneHelperEachResolveTheirOwn() {
        let container = DependencyContainer()
        let greetings = DependencyContainer.withMain(container) {
            (0..<3_000).map { number in
                let property = pftInjected(\DependencyContainer.[pftNumbered: number])
                return property.wrappedValue.greeting
            }
        }
        let wrong = greetings.enumerated().filter { $0.element != "\($0.offset)" }.count
        #expect(wrong == 0, "properties that resolved another key path")
    }

    /// Each appended key path is a new object, which its object keeps; the site's record
    /// is one for them all.
    @Test func keyPathsBuiltAtRunTimeEachResolveAndShareTheSitesRecord() {
        let container = DependencyContainer()
        let holders = DependencyContainer.withMain(container) {
            (0..<2_000).map { _ in PFTRuntimeKeyPathHolder((\DependencyContainer.pftRegistry).appending(path: \.greeter)) }
        }
        #expect(holders.allSatisfy { $0.greeter === holders[0].greeter && $0.greeter.greeting == "registry" })
        #expect(holders.allSatisfy { $0.site.sharesRecord(with: holders[0].site) })
    }

    /// A key path to a provider injects the service through the provider initializer, and
    /// the provider itself when the property is declared of the provider's type.
    @Test func oneKeyPathThroughBothInitializersGivesTheServiceAndTheProvider() {
        let container = DependencyContainer()
        let holder = DependencyContainer.withMain(container) { PFTBothInitializers() }
        #expect(holder.service.greeting == "hello")
        #expect(holder.provider() === holder.service)
        #expect(holder.provider.name.description == container.pftGreeter.name.description)
    }

    // MARK: - Sites

    /// More lines than the cache has slots, from threads released together: slots are
    /// replaced while others read them, and every property still names its own line.
    @Test func sitesOfThousandsOfLinesFromThreadsReleasedTogetherNameTheirOwnLines() async {
        let wrong = Collected<UInt>()
        let threadsEnded = await concurrentlyOffThePool(threads: 8) { thread in
            for line in UInt(1)...3_000 {
                let site = PropertySite(declaredIn: "PFTSites", fileID: "PFT/Sites.swift", line: line).site
                if site.line != line || site.fileID.description != "PFT/Sites.swift" || site.nameText != "@Dependency in PFTSites" {
                    wrong.append(line)
                }
            }
        }
        #expect(threadsEnded, "the threads did not end before the hang limit")
        #expect(wrong.values.isEmpty, "\(wrong.values.count) properties named another site")
    }

    /// A site with a line too long for any packing, and a type of one character.
    @Test func aSiteNamesAnyLineAndAnyTypeName() {
        let site = PropertySite(declaredIn: "Ω", fileID: "PFT/Huge.swift", line: 4_000_000_000)
        #expect(site.site.description == "@Dependency in Ω (PFT/Huge.swift:4000000000)")
    }

    // MARK: - The container while the first read runs

    /// While the first read runs, the property's one word holds its frame: the container
    /// is the one the frame resolves from, and a set meanwhile moves it to the state in
    /// full, held strongly still.
    @Test func aValueSetWhileTheFirstReadRunsKeepsTheContainerHeldStrongly() {
        var container: DependencyContainer? = DependencyContainer()
        weak let weakContainer = container
        let gate = ConstructionGate()
        container?.setValue(gate, forKey: "pft.gate")
        let holder = DependencyContainer.withMain(container!) { PFTHolder() }
        let reader = DispatchSemaphore(value: 0)
        Thread {
            _ = holder.greeter
            reader.signal()
        }.start()
        gate.entered.wait()
        #expect(holder.$greeter.container === container, "the container a first read resolves from")
        let chosen = PFTGreeterService(greeting: "chosen")
        holder.greeter = chosen
        gate.open()
        reader.wait()
        #expect(holder.greeter === chosen)
        container = nil
        #expect(weakContainer != nil, "the property no longer holds its container")
        holder.$greeter.reset()
        #expect(holder.greeter.greeting == "hello")
    }
}
