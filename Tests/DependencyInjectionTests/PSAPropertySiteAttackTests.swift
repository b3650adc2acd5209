import Foundation
import Observation
import Testing
@testable import DependencyInjection

// Attacks on the one-word site record a `@Dependency` wrapper carries (`PropertySite`):
// distinct sites that share literals, literals of every representation, a cache whose
// slots threads replace while others read them, the site each message names, and the
// wrapper's `words` field in every kind of holder.

// MARK: - Fixtures

final class PSAEngine: Sendable {
    let label: String
    init(label: String) { self.label = label }
}

extension DependencyContainer {
    var psaEngine: Provider<PSAEngine> {
        factory { PSAEngine(label: (self.getValue(forKey: "psa.label") as String?) ?? "engine") }
    }

    var psaOther: Provider<PSAEngine> { factory { PSAEngine(label: "other") } }

    /// An engine whose construction holds at the stored `"psa.gate"`, when one is stored.
    var psaGatedEngine: Provider<PSAEngine> {
        factory {
            (self.getValue(forKey: "psa.gate") as ConstructionGate?)?.enterAndWait()
            return PSAEngine(label: "gated")
        }
    }
}

/// A literal of one Unicode scalar in a `StaticString` is its scalar, not an address,
/// when it comes through the literal protocol (a `StaticString` parameter gets the
/// address form).
func psaScalar<T: ExpressibleByUnicodeScalarLiteral>(_ scalar: Int, as _: T.Type = T.self) -> T {
    switch scalar {
    case 0: "a"
    case 1: "b"
    case 2: "α"
    case 3: "β"
    default: "Ω"
    }
}

/// A wrapper made by a helper at the site its caller names.
func psaInjected(
    _ keyPath: KeyPath<DependencyContainer, Provider<PSAEngine>> = \.psaEngine, in container: DependencyContainer,
    type: StaticString, fileID: StaticString, line: UInt
) -> Dependency<PSAEngine> {
    Dependency(keyPath, container: container, function: type, fileID: fileID, line: line)
}

/// `@Dependency in <type> (<fileID>:<line>)`, made from the literals' text.
func psaDescription(_ type: StaticString, _ fileID: StaticString, _ line: UInt) -> String {
    "@Dependency in \(type.description) (\(fileID.description):\(line))"
}

/// Two literals with the same text at two addresses, as two modules' copies of one
/// literal are: immortal buffers, made into `StaticString`s by their frozen layout.
let psaTwinTexts: (StaticString, StaticString) = {
    func literal(_ text: String) -> StaticString {
        let bytes = Array(text.utf8) + [0]
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes.count)
        buffer.initialize(from: bytes, count: bytes.count)
        return unsafeBitCast((UInt(bitPattern: buffer), UInt(bytes.count - 1), UInt8(0x2)), to: StaticString.self)
    }
    return (literal("PSATwin"), literal("PSATwin"))
}()

/// The holders apps declare properties in, each with the line of its declaration.
struct PSAStructHolder {
    static let line: UInt = #line + 1
    @Dependency(\.psaEngine) var engine
}

let psaGenericLine: UInt = #line + 2
final class PSAGenericHolder<Element>: @unchecked Sendable {
    @Dependency(\.psaEngine) var engine
    init() {}
}

@MainActor final class PSAMainActorHolder {
    static let line: UInt = #line + 1
    @Dependency(\.psaEngine) var engine
    init() {}
}

@Observable final class PSAObservedHolder: @unchecked Sendable {
    static let line: UInt = #line + 1
    @ObservationIgnored @Dependency(\.psaEngine) var engine
    var title = "feed"
    init() {}
}

enum PSAChoice {
    case injected(Dependency<PSAEngine>)
    case none

    static let line: UInt = #line + 1
    static func make() -> PSAChoice { .injected(Dependency(\.psaEngine)) }
}

/// Kept by its container, which it holds weakly: two properties on two lines, one of a
/// plain value and one of a provider.
final class PSAKept: @unchecked Sendable {
    static let firstLine: UInt = #line + 1
    @Dependency(\.psaEngine) var first
    static let secondLine: UInt = #line + 1
    @Dependency(\.psaOther) var second
    init() {}
}

/// A kept object whose property's construction holds at the gate.
final class PSAGatedKept: @unchecked Sendable {
    @Dependency(\.psaGatedEngine) var engine
    init() {}
}

extension DependencyContainer {
    var psaKept: Provider<PSAKept> { singleton { PSAKept() } }
    var psaGatedKept: Provider<PSAGatedKept> { singleton { PSAGatedKept() } }
}

/// Two properties at one file and line, told apart by their type names only (single
/// scalars): each registration reads the other's property, so the chain is
/// `α -> psaCycleToBeta -> β -> psaCycleToAlpha -> α`.
final class PSACycleProperties: @unchecked Sendable {
    let alpha: Dependency<PSAEngine>
    let beta: Dependency<PSAEngine>
    init(in container: DependencyContainer) {
        alpha = psaInjected(\.psaCycleToBeta, in: container, type: psaScalar(2), fileID: "PSA/Cycle.swift", line: 4242)
        beta = psaInjected(\.psaCycleToAlpha, in: container, type: psaScalar(3), fileID: "PSA/Cycle.swift", line: 4242)
    }
}

extension DependencyContainer {
    var psaCycleToBeta: Provider<PSAEngine> {
        factory {
            _ = (self.getValue(forKey: "psa.cycle") as PSACycleProperties?)?.beta.wrappedValue
            return PSAEngine(label: "alpha")
        }
    }

    var psaCycleToAlpha: Provider<PSAEngine> {
        factory {
            _ = (self.getValue(forKey: "psa.cycle") as PSACycleProperties?)?.alpha.wrappedValue
            return PSAEngine(label: "beta")
        }
    }
}

/// Eight type names and two file IDs the threads of the stress test declare at.
let psaThreadTypes: [StaticString] = [
    "PSAThread0", "PSAThread1", "PSAThread2", "PSAThread3", "PSAThread4", "PSAThread5", "PSAThread6", "PSAThread7",
]
let psaThreadFiles: [StaticString] = ["PSA/Left.swift", "PSA/Right.swift"]

// MARK: - Tests

@Suite struct PSAPropertySiteAttackTests {
    // MARK: Sites that share literals

    /// Sites that share one or two of their type name, file ID and line, among literals
    /// of both representations (address, scalar) and a literal whose text is one
    /// character of two scalars: each property names its own, rounds after the first
    /// find them in the cache, and equal sites share one record.
    @Test func sitesThatShareLiteralsEachNameTheirOwn() {
        let container = DependencyContainer()
        let sites: [(type: StaticString, fileID: StaticString, line: UInt)] = [
            ("PSATypeA", "PSA/Shared.swift", 7),
            ("PSATypeB", "PSA/Shared.swift", 7),  // another type, same file and line
            ("PSATypeA", "PSA/Other.swift", 7),  // another file
            ("PSATypeA", "PSA/Shared.swift", 8),  // another line
            (psaScalar(0), "PSA/Shared.swift", 7),  // "a", a scalar
            (psaScalar(1), "PSA/Shared.swift", 7),  // "b", a scalar
            ("a", "PSA/Shared.swift", 7),  // "a" at an address
            ("Ω", "PSA/Shared.swift", 7),
            (psaScalar(4), "PSA/Shared.swift", 7),  // "Ω", a scalar
            ("e\u{301}", "PSA/Shared.swift", 7),  // one character, two scalars
            ("PSATypeA", psaScalar(0), 7),  // a scalar file ID
            ("PSATypeA", psaScalar(1), 7),
            (psaScalar(0), psaScalar(1), 7),
            (psaScalar(1), psaScalar(0), 7),
            ("PSATypeA", "PSA/Shared.swift", 0),
            ("PSATypeA", "PSA/Shared.swift", .max),
        ]
        #expect(!sites[4].type.hasPointerRepresentation && sites[6].type.hasPointerRepresentation)
        var first: [PropertySite] = []
        for round in 0..<3 {
            for (index, site) in sites.enumerated() {
                let property = psaInjected(in: container, type: site.type, fileID: site.fileID, line: site.line)
                let named = property.words.site.site.description
                #expect(named == psaDescription(site.type, site.fileID, site.line), "round \(round), site \(index)")
                if round == 0 { first.append(property.words.site) } else {
                    #expect(property.words.site.sharesRecord(with: first[index]), "site \(index): a record per object")
                }
            }
        }
        for i in first.indices {
            for j in first.indices where i < j {
                #expect(!first[i].sharesRecord(with: first[j]), "sites \(i) and \(j) share a record")
            }
        }
    }

    /// The same text at two addresses is two records, each naming that text.
    @Test func identicalTextAtTwoAddressesNamesItTwice() {
        let (one, two) = psaTwinTexts
        let first = PropertySite(declaredIn: one, fileID: "PSA/Twin.swift", line: 1)
        let second = PropertySite(declaredIn: two, fileID: "PSA/Twin.swift", line: 1)
        #expect(first.site.description == "@Dependency in PSATwin (PSA/Twin.swift:1)")
        #expect(second.site.description == "@Dependency in PSATwin (PSA/Twin.swift:1)")
        #expect(!first.sharesRecord(with: second))
    }

    // MARK: The cache under threads

    /// Eight threads released together declare properties at eight types, two files and
    /// 2,500 lines each, in different orders: far more sites than the cache has slots,
    /// so slots are replaced while others read them. Each property names its own site and
    /// resolves; every thread finds one record per site. (Run under ThreadSanitizer.)
    @Test func threadsReleasedTogetherReplacingSlotsEachNameTheirOwnSite() async {
        let container = DependencyContainer()
        let wrong = Collected<String>()
        let sampled = Collected<PropertySite>()
        let threadsEnded = await concurrentlyOffThePool(threads: 8) { thread in
            for step in 0..<2_500 {
                let line = UInt((step * 13 + thread * 317) % 2_500 + 1)
                for offset in 0..<psaThreadTypes.count {
                    let type = psaThreadTypes[(offset + thread) % psaThreadTypes.count]
                    let fileID = psaThreadFiles[(step + offset) % 2]
                    let property = psaInjected(in: container, type: type, fileID: fileID, line: line)
                    let named = property.words.site.site.description
                    if named != psaDescription(type, fileID, line) { wrong.append(named) }
                    if step % 97 == offset && property.wrappedValue.label != "engine" { wrong.append("value at \(line)") }
                }
                if line == 1_234 {
                    sampled.append(psaInjected(in: container, type: "PSAThread3", fileID: "PSA/Left.swift", line: 1_234).words.site)
                }
            }
        }
        #expect(threadsEnded, "the threads did not end before the hang limit")
        #expect(wrong.values.isEmpty, "\(wrong.values.count) wrong, first: \(wrong.values.prefix(3))")
        let records = sampled.values
        #expect(records.count == 8)
        #expect(records.allSatisfy { $0.sharesRecord(with: records[0]) }, "one site, several records")
    }

    // MARK: The site each message names

    /// A cycle through two properties at one file and line, told apart only by their
    /// one-scalar type names: each link names its own type at that place.
    @Test func aCycleNamesEachPropertysOwnSite() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle through two properties at one place")
            let container = DependencyContainer()
            let properties = PSACycleProperties(in: container)
            container.setValue(properties, forKey: "psa.cycle")
            _ = properties.alpha.wrappedValue
        }
        let chain = try #require(CycleChain(result), "\(standardError(of: result))")
        #expect(chain.names == [
            "@Dependency in α", "psaCycleToBeta", "@Dependency in β", "psaCycleToAlpha", "@Dependency in α",
        ], "\(chain)")
        #expect(chain.location(of: "@Dependency in α") == "PSA/Cycle.swift:4242", "\(chain)")
        #expect(chain.location(of: "@Dependency in β") == "PSA/Cycle.swift:4242", "\(chain)")
    }

    /// The first read of a kept object's second property, once its container is gone,
    /// names that property's line, not its neighbour's.
    @Test func aReadAfterTheContainerIsGoneNamesThePropertysOwnSite() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let kept: PSAKept = { DependencyContainer().psaKept() }()
            _ = kept.second
        }
        let output = standardError(of: result)
        #expect(output.contains("was released before the property was first read"), "\(output)")
        #expect(output.contains(
            "@Dependency in PSAKept (DependencyInjectionTests/PSAPropertySiteAttackTests.swift:\(PSAKept.secondLine))"),
            "\(output)")
    }

    /// `$property.container` once the container is gone stops with the site the wrapper
    /// passes: its own declaration's.
    @Test func theContainerOfAPropertyWhoseContainerIsGoneNamesItsOwnSite() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let kept: PSAKept = { DependencyContainer().psaKept() }()
            _ = kept.$first.container
        }
        let output = standardError(of: result)
        #expect(output.contains("was released before the property was first read"), "\(output)")
        #expect(output.contains(
            "@Dependency in PSAKept (DependencyInjectionTests/PSAPropertySiteAttackTests.swift:\(PSAKept.firstLine))"),
            "\(output)")
    }

    // MARK: The container during and after a first read

    /// A property a container keeps (held weakly): its container, read through the
    /// wrapper from another thread while the first read runs, from the resolution's own
    /// thread, and after, is the container it resolves from.
    @Test func theContainerDuringAndAfterAFirstReadOfAWeaklyHeldProperty() {
        let container = DependencyContainer()
        let gate = ConstructionGate()
        container.setValue(gate, forKey: "psa.gate")
        let kept = container.psaGatedKept()
        let read = DispatchSemaphore(value: 0)
        let value = Collected<PSAEngine>()
        Thread {
            value.append(kept.engine)
            read.signal()
        }.start()
        gate.entered.wait()
        #expect(kept.$engine.container === container, "during the first read")
        gate.open()
        read.wait()
        #expect(kept.$engine.container === container, "after the first read")
        #expect(kept.engine === value.values.first)
        withExtendedLifetime(container) {}
    }

    // MARK: Every kind of holder

    /// Structs, enums' associated values, generic classes, main-actor and `@Observable`
    /// classes: each property names its own declaration and resolves; every
    /// specialization of a generic class shares the declaration's one record.
    @MainActor @Test func everyKindOfHolderNamesItsOwnDeclarationAndResolves() {
        let container = DependencyContainer()
        container.setValue("held", forKey: "psa.label")
        let file = "DependencyInjectionTests/PSAPropertySiteAttackTests.swift"
        DependencyContainer.withMain(container) {
            let held = PSAStructHolder()
            #expect(held.$engine.words.site.site.description == "@Dependency in PSAStructHolder (\(file):\(PSAStructHolder.line))")
            let copy = held
            #expect(copy.engine === held.engine && held.engine.label == "held")

            let ints = PSAGenericHolder<Int>()
            let strings = PSAGenericHolder<String>()
            #expect(ints.$engine.words.site.site.description == "@Dependency in PSAGenericHolder (\(file):\(psaGenericLine))")
            #expect(ints.$engine.words.site.sharesRecord(with: strings.$engine.words.site), "a record per specialization")
            #expect(ints.engine !== strings.engine && strings.engine.label == "held")

            let isolated = PSAMainActorHolder()
            #expect(isolated.$engine.words.site.site.description == "@Dependency in PSAMainActorHolder (\(file):\(PSAMainActorHolder.line))")
            #expect(isolated.engine.label == "held")

            let observed = PSAObservedHolder()
            #expect(observed.$engine.words.site.site.description == "@Dependency in PSAObservedHolder (\(file):\(PSAObservedHolder.line))")
            observed.title = "changed"
            #expect(observed.engine.label == "held" && observed.title == "changed")

            guard case .injected(let property) = PSAChoice.make() else { Issue.record("no property"); return }
            #expect(property.words.site.site.description == "@Dependency in make() (\(file):\(PSAChoice.line))")
            #expect(property.wrappedValue.label == "held")
            #expect(MemoryLayout<PSAChoice>.size == MemoryLayout<Dependency<PSAEngine>>.size)
        }
    }
}
