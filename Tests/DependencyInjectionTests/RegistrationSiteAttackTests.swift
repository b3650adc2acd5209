import Foundation
import Testing
@testable import DependencyInjection

// Registrations whose call sites are at the edges of what a provider packs (names and
// files that are empty, long, outside ASCII or hold a NUL; lines and columns at 0, at
// UInt32.max and past it), helpers that forward their caller's site and helpers that do
// not, generic registrations, families over many argument types, and singletons with
// teardowns of every kind. A provider must give back exactly the key, name, scope,
// main-actor flag and teardown its registration declared, however it packs them.

infix operator +++

protocol SAService: AnyObject, Sendable {}
final class SALiveService: SAService {}

/// A generic value, for registrations evaluated for two types.
final class SABox<Element>: Sendable {}

enum SARegion: Hashable, Sendable {
    case eu, us
    case other(String)
}

/// An argument whose `==` ignores case, with a hash that agrees.
struct SACaseless: Hashable, Sendable {
    let raw: String
    static func == (lhs: SACaseless, rhs: SACaseless) -> Bool { lhs.raw.lowercased() == rhs.raw.lowercased() }
    func hash(into hasher: inout Hasher) { hasher.combine(raw.lowercased()) }
}

/// An argument of several fields, one of them an enum.
struct SAQuery: Hashable, Sendable {
    let region: SARegion
    let page: Int
    let tags: [String]
}

/// A main-actor object that is not `Sendable`, ended at shutdown.
final class SAPlayer {
    var ended = 0
    func end() { ended += 1 }
}

extension DependencyContainer {
    // MARK: Edges of names, files and positions

    var saEmptySite: Provider<Node> { singleton(name: "", fileID: "", line: 0, column: 0) { Node() } }
    var saNulName: Provider<Node> { singleton(name: "a\0b", fileID: "Mod\0ul/Null.swift", line: 1, column: 1) { Node() } }
    var saNonASCIIFile: Provider<Node> {
        singleton(name: "Überweisung 🚀", fileID: "Modül/Überweisung 🚀.swift", line: 12, column: 5) { Node() }
    }
    var saLongName: Provider<Node> {
        factory(
            name: """
                A registration whose name is long enough to be stored out of line everywhere, \
                with an ümlaut, a 🚀 and a CJK 漢字 in it, repeated: A registration whose name is \
                long enough to be stored out of line everywhere, with an ümlaut, a 🚀 and a CJK \
                漢字 in it, repeated: A registration whose name is long enough to be stored out of \
                line everywhere, with an ümlaut, a 🚀 and a CJK 漢字 in it, and the end.
                """,
            fileID: """
                AVeryLongModuleNameThatGoesOnAndOnAndOnAndOnAndOnAndOnAndOnAndOnAndOnAndOnAndOn/\
                Sources/Deeply/Nested/Folders/That/Go/On/And/On/And/On/And/On/Registrations.swift
                """,
            line: 99, column: 98
        ) { Node() }
    }
    var saMaxPosition: Provider<Node> {
        singleton(name: "max", fileID: "Edge/Positions.swift", line: UInt(UInt32.max), column: UInt(UInt32.max)) { Node() }
    }
    /// Line and column past 32 bits: the position keeps the low 32 bits of each, so this is
    /// the registration at line 5, column 3.
    var saWrappedPosition: Provider<Node> {
        singleton(name: "wrapped", fileID: "Edge/Positions.swift", line: UInt(UInt32.max) + 6, column: UInt(UInt32.max) + 4) {
            Node()
        }
    }
    var saSmallPosition: Provider<Node> {
        singleton(name: "small", fileID: "Edge/Positions.swift", line: 5, column: 3) { Node() }
    }
    /// The same file name, position and type as `saSmallPosition`, in another file.
    var saOtherFile: Provider<Node> {
        singleton(name: "small", fileID: "Edge/Other.swift", line: 5, column: 3) { Node() }
    }

    subscript(saKind kind: String) -> Provider<Node> { singleton(kind) { Node() } }
    subscript(saIndex index: Int, saLabel label: String) -> Provider<Node> { factory { Node() } }
    func saMethod(flag: Bool) -> Provider<Node> { factory { Node() } }
    static func +++ (container: DependencyContainer, _: Int) -> Provider<Node> { container.factory { Node() } }

    // MARK: Helpers

    /// Forwards its caller's site and name: each property is a registration of its own.
    func saForwarding<T: Sendable>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping () -> T
    ) -> Provider<T> {
        singleton(name: name, fileID: fileID, line: line, column: column, make)
    }

    /// Forwards the name only: every property shares the site inside, under its own name.
    func saNameOnly<T: Sendable>(name: StaticString = #function, _ make: @escaping () -> T) -> Provider<T> {
        singleton(name: name, fileID: "Helpers/Caching.swift", line: 12, column: 3, make)
    }

    /// Forwards nothing: every property is the helper's one registration.
    func saNothing<T: Sendable>(_ make: @escaping () -> T) -> Provider<T> {
        singleton(make)
    }

    var saForwardedA: Provider<Node> { saForwarding { Node() } }
    var saForwardedB: Provider<Node> { saForwarding { Node() } }
    var saNamedA: Provider<Node> { saNameOnly { Node() } }
    var saNamedB: Provider<Node> { saNameOnly { Node() } }
    var saMergedA: Provider<Node> { saNothing { Node() } }
    var saMergedB: Provider<Node> { saNothing { Node() } }

    /// One registration, evaluated for any element type.
    func saBox<Element>(of _: Element.Type) -> Provider<SABox<Element>> { singleton { SABox<Element>() } }
    /// One site, for an existential and for a concrete type.
    func saService<Service: Sendable>(_ make: @escaping () -> Service) -> Provider<Service> { singleton(make) }

    // MARK: Families

    var saIntFamily: ProviderFamily<Int, Node> { singleton { (_: Int) in Node() } }
    var saStringFamily: ProviderFamily<String, Node> { factory(name: "Zeichenkette") { (_: String) in Node() } }
    var saRegionFamily: ProviderFamily<SARegion, Node> { singleton { (_: SARegion) in Node() } }
    var saCaselessFamily: ProviderFamily<SACaseless, Node> { singleton { (_: SACaseless) in Node() } }
    var saQueryFamily: ProviderFamily<SAQuery, Node> { shared { (_: SAQuery) in Node() } }
    /// Same site shape as `saIntFamily`, another argument type, through one generic helper.
    func saGenericFamily<Argument: Hashable & Sendable>(_: Argument.Type) -> ProviderFamily<Argument, Node> {
        singleton { (_: Argument) in Node() }
    }

    // MARK: Teardowns

    var saLog: Collected<String>? { getValue(forKey: "saLog") }
    /// Built on any thread, torn down on the main actor: the two flags must stay apart.
    @MainActor var saMainTornResource: Provider<MailResource> {
        singleton(isolation: nil) { MailResource("saMainTornResource", log: self.saLog) }
            .onShutdown { @MainActor in $0.close() }
    }
    var saDatabase: Provider<MailResource> {
        singleton { MailResource("saDatabase", log: self.saLog) }.onShutdown { $0.close() }
    }
    var saStore: Provider<MailResource> {
        singleton {
            _ = self.saDatabase()
            return MailResource("saStore", log: self.saLog)
        }.onShutdown { $0.close() }
    }
    var saAsyncConnection: AsyncProvider<MailResource> {
        singleton { MailResource("saAsyncConnection", log: self.saLog) }.onShutdown { await $0.closeAfterSuspending() }
    }
    var saRequestFile: Provider<MailResource> {
        scoped { MailResource("saRequestFile", log: self.saLog) }.onShutdown { $0.close() }
    }
    subscript(saTenant tenant: String) -> Provider<MailResource> {
        singleton(tenant) { MailResource("tenant " + tenant, log: self.saLog) }.onShutdown { $0.close() }
    }
    var saResourceFamily: ProviderFamily<String, MailResource> {
        singleton { (id: String) in MailResource("member " + id, log: self.saLog) }
    }
    /// A teardown that captures the container it belongs to.
    var saSelfCapturing: Provider<MailResource> {
        singleton { MailResource("saSelfCapturing", log: self.saLog) }.onShutdown { [self] resource in
            resource.close()
            self.setValue(true, forKey: "saSelfCapturing.tornDown")
        }
    }
    @MainActor var saPlayer: Provider<SAPlayer> {
        singleton { @MainActor in SAPlayer() }.onShutdown { @MainActor in $0.end() }
    }
    @MainActor var saMainFactory: Provider<SAPlayer> { factory(name: "Notiz Ü") { @MainActor in SAPlayer() } }
    @MainActor var saMainFamily: ProviderFamily<Int, SAPlayer> { singleton { @MainActor (_: Int) in SAPlayer() } }
    @MainActor subscript(saMainTopic topic: String) -> Provider<SAPlayer> { shared(topic) { @MainActor in SAPlayer() } }
    @MainActor var saNamedPlayer: Provider<SAPlayer> {
        singleton(name: "Spieler 🎮") { @MainActor in SAPlayer() }.onShutdown { @MainActor in $0.end() }
    }
    @MainActor subscript(saMainTenant tenant: String) -> Provider<SAPlayer> {
        singleton(tenant) { @MainActor in SAPlayer() }.onShutdown { @MainActor in $0.end() }
    }
    /// Main-actor family members that report where they are released.
    @MainActor var saProbedNotebooks: ProviderFamily<Int, Notebook> {
        singleton { @MainActor (_: Int) in Notebook(onRelease: self.getValue(forKey: "sa-release-probe")) }
    }
    var saCustomer: Provider<any HTTPClient> { singleton(name: "Kunde 🚀") { LiveHTTPClient() } }
    subscript(saGraphPart part: Int) -> Provider<Node> { graph(part) { Node() } }
    /// Resolves two graph arguments twice each in one resolution.
    var saGraphPair: Provider<[Node]> {
        factory { [self[saGraphPart: 1](), self[saGraphPart: 1](), self[saGraphPart: 2](), self[saGraphPart: 2]()] }
    }

    // MARK: Misuse, at sites given explicitly

    var saSharedWithTeardown: Provider<MailResource> {
        shared(name: "geteilt Ü", fileID: "Feature/Überweisung.swift", line: UInt(UInt32.max) + 3, column: 9) {
            MailResource("shared", log: nil)
        }.onShutdown { $0.close() }
    }
    var saGraphWithTeardown: Provider<MailResource> {
        graph(name: "Graph 🚀", fileID: "Feature/Graph.swift", line: 4_321, column: 1) {
            MailResource("graph", log: nil)
        }.onShutdown { $0.close() }
    }
    var saFactoryWithTeardown: Provider<MailResource> {
        factory(name: "", fileID: "", line: 0, column: 0) { MailResource("factory", log: nil) }.onShutdown { $0.close() }
    }
    var saCycleA: Provider<Node> {
        factory(name: "Zyklus-Ä", fileID: "Modül/Zyklus.swift", line: 70, column: 1) {
            _ = self.saCycleB()
            return Node()
        }
    }
    var saCycleB: Provider<Node> {
        singleton(name: "Zyklus-B", fileID: "Modül/Zyklus.swift", line: UInt(UInt32.max) + 72, column: 1) {
            _ = self.saCycleA()
            return Node()
        }
    }
    var saCycleFamily: ProviderFamily<Int, Node> {
        singleton(name: "Familie 🚀", fileID: "Modül/Familie.swift", line: 80, column: 2) { (n: Int) in
            _ = self.saCycleFamily(n == 0 ? 1 : 0)
            return Node()
        }
    }
    var saSharedSiteA: Provider<Node> { saFixedSite { Node() } }
    var saSharedSiteB: Provider<Node> { saFixedSite { Node() } }
    func saFixedSite<T: Sendable>(_ make: @escaping () -> T) -> Provider<T> {
        singleton(fileID: "Helpers/Fixed.swift", line: 33, column: 4, make)
    }

    // MARK: Traces

    var saTraceFactory: Provider<Int> { factory { 1 } }
    var saTraceSingleton: Provider<String> { singleton { "s" } }
    var saTraceShared: Provider<SALiveService> { shared { SALiveService() } }
    var saTraceGraph: Provider<Node> { graph { Node() } }
    var saTraceScoped: Provider<Node> { scoped { Node() } }
    var saTraceExistential: Provider<any SAService> { singleton { SALiveService() } }
    var saTraceOptional: Provider<Int?> { factory { nil } }
    var saTraceAsyncFactory: AsyncProvider<Int> { factory { 2 } }
    var saTraceAsyncSingleton: AsyncProvider<Node> { singleton { Node() } }
    var saTraceAsyncScoped: AsyncProvider<Node> { scoped { Node() } }
    var saTraceFamily: ProviderFamily<SARegion, Node> { singleton(name: "Region") { (_: SARegion) in Node() } }
}

/// What a trace shows of one event, without its duration.
private struct SAEvent: Hashable, CustomStringConvertible {
    let name: String
    let type: String
    let scope: DependencyScope
    let outcome: ResolutionEvent.Outcome
    let depth: Int
    init(_ name: String, _ type: String, _ scope: DependencyScope, _ outcome: ResolutionEvent.Outcome, _ depth: Int = 0) {
        (self.name, self.type, self.scope, self.outcome, self.depth) = (name, type, scope, outcome, depth)
    }
    init(_ event: ResolutionEvent) {
        self.init(event.name, event.type, event.scope, event.outcome, event.depth)
    }
    var description: String { "\(name): \(type) [\(scope)] \(outcome) @\(depth)" }
}

private func tracing(_ container: DependencyContainer) -> Collected<ResolutionEvent> {
    let events = Collected<ResolutionEvent>()
    container.tracer = ResolutionTracer { batch in for event in batch { events.append(event) } }
    return events
}

private func shutDownSynchronously(_ container: DependencyContainer) {
    container.shutdown()
}

@Suite struct RegistrationSiteAttackTests {
    // MARK: - Names, files and positions

    @Test func anEmptyNameAndFileAtLineAndColumnZeroAreOneRegistration() {
        let container = DependencyContainer()
        let provider = container.saEmptySite
        #expect(provider.name.description.isEmpty && provider.name.utf8CodeUnitCount == 0)
        #expect(provider.key.file.description.isEmpty && provider.key.position == 0 && provider.key.line == 0)
        #expect(provider.key == container.saEmptySite.key)
        #expect(provider.key != container.saNulName.key)
        #expect(container.saEmptySite() === container.saEmptySite())
        #expect(provider.scope == .singleton && !provider.isMainActor && provider.teardown == nil)
    }

    @Test func aNameWithANulKeepsEveryByteAndAFileWithOneComesBackUpToIt() {
        let provider = DependencyContainer().saNulName
        #expect(provider.name.utf8CodeUnitCount == 3)
        #expect(provider.name.description == "a\u{0}b")
        #expect(Array(provider.name.description.utf8) == [0x61, 0, 0x62])
        // A key keeps the file's address; its length is read up to the terminator.
        #expect(provider.key.file.description == "Mod" && provider.key.file.utf8CodeUnitCount == 3)
        #expect(provider.key == DependencyContainer().saNulName.key)
        #expect(provider.name.isASCII && provider.name.hasPointerRepresentation)
    }

    @Test func aFileAndNameOutsideASCIIComeBackWithTheirFlags() {
        let container = DependencyContainer()
        let provider = container.saNonASCIIFile
        #expect(provider.name.description == "Überweisung 🚀" && !provider.name.isASCII)
        #expect(provider.key.file.description == "Modül/Überweisung 🚀.swift" && !provider.key.file.isASCII)
        #expect(provider.key.line == 12 && provider.key.position == 12 << 32 | 5)
        let events = tracing(container)
        _ = container.saNonASCIIFile()
        #expect(events.values.map(\.name) == ["Überweisung 🚀"])
    }

    @Test func aLongNameAndFileComeBackWhole() {
        let provider = DependencyContainer().saLongName
        #expect(provider.name.utf8CodeUnitCount > 400)
        #expect(provider.name.description.hasPrefix("A registration whose name is long"))
        #expect(provider.name.description.hasSuffix("漢字 in it, and the end."))
        #expect(provider.name.description.utf8.count == provider.name.utf8CodeUnitCount)
        #expect(provider.key.file.description.hasSuffix("/On/And/On/And/On/And/On/Registrations.swift"))
        #expect(provider.key.file.utf8CodeUnitCount == provider.key.file.description.utf8.count)
        #expect(provider.key.position == 99 << 32 | 98 && provider.scope == .factory)
    }

    @Test func theNamesOfSubscriptsMethodsAndOperatorsAreTheirFunctions() {
        let container = DependencyContainer()
        #expect(container[saKind: "x"].name.description == "subscript(saKind:)")
        #expect(container[saIndex: 1, saLabel: "a"].name.description == "subscript(saIndex:saLabel:)")
        #expect(container.saMethod(flag: true).name.description == "saMethod(flag:)")
        #expect((container +++ 1).name.description == "+++(_:_:)")
        #expect(container.saStringFamily["a"].name.description == "Zeichenkette")
        let events = tracing(container)
        _ = container[saKind: "x"]()
        _ = (container +++ 1)()
        #expect(events.values.map(\.name) == ["subscript(saKind:)", "+++(_:_:)"])
    }

    @Test func aPositionKeepsTheLow32BitsOfLineAndColumn() {
        let container = DependencyContainer()
        let max = container.saMaxPosition.key
        #expect(max.position == UInt64.max && max.line == UInt(UInt32.max))
        let wrapped = container.saWrappedPosition.key
        #expect(wrapped.position == 5 << 32 | 3 && wrapped.line == 5)
        // Truncated to the same 32 bits, in the same file, of the same type: one registration.
        #expect(wrapped == container.saSmallPosition.key)
        #expect(container.saWrappedPosition() === container.saSmallPosition())
        #expect(container.saMaxPosition() !== container.saSmallPosition())
    }

    @Test func theSamePositionInAnotherFileIsAnotherRegistration() {
        let container = DependencyContainer()
        #expect(container.saSmallPosition.key != container.saOtherFile.key)
        #expect(container.saSmallPosition() !== container.saOtherFile())
        let replacement = Node()
        container.override(\.saOtherFile) { replacement }
        #expect(container.saOtherFile() === replacement)
        #expect(container.saSmallPosition() !== replacement)
    }

    // MARK: - Helpers

    @Test func aHelperThatForwardsItsCallersSiteGivesEachPropertyItsOwnKeyAndName() {
        let container = DependencyContainer()
        let (a, b) = (container.saForwardedA, container.saForwardedB)
        #expect(a.key != b.key)
        #expect(a.key.file.description == "DependencyInjectionTests/RegistrationSiteAttackTests.swift")
        #expect(a.key.line == b.key.line - 1)
        #expect(a.name.description == "saForwardedA" && b.name.description == "saForwardedB")
        #expect(container.saForwardedA() !== container.saForwardedB())
        #expect(container.saForwardedA() === container.saForwardedA())
    }

    @Test func aHelperThatForwardsOnlyTheNameSharesOneKeyUnderTwoNames() {
        let container = DependencyContainer()
        let (a, b) = (container.saNamedA, container.saNamedB)
        #expect(a.key == b.key)
        #expect(a.key.file.description == "Helpers/Caching.swift" && a.key.position == 12 << 32 | 3)
        #expect(a.name.description == "saNamedA" && b.name.description == "saNamedB")
        #expect(container.saNamedA() === container.saNamedB())
    }

    @Test func aHelperThatForwardsNothingIsOneRegistrationNamedAfterItself() {
        let container = DependencyContainer()
        let (a, b) = (container.saMergedA, container.saMergedB)
        #expect(a.key == b.key)
        #expect(a.name.description == "saNothing(_:)" && b.name.description == "saNothing(_:)")
        #expect(container.saMergedA() === container.saMergedB())
    }

    @Test func aGenericRegistrationEvaluatedForTwoTypesIsTwoRegistrations() {
        let container = DependencyContainer()
        let ints = container.saBox(of: Int.self)
        let strings = container.saBox(of: String.self)
        #expect(ints.key.position == strings.key.position && ints.key.file.utf8Start == strings.key.file.utf8Start)
        #expect(ints.key != strings.key)
        #expect(ints.key == container.saBox(of: Int.self).key)
        let (int, string) = (container.saBox(of: Int.self)(), container.saBox(of: String.self)())
        #expect(container.saBox(of: Int.self)() === int && container.saBox(of: String.self)() === string)
        #expect(ObjectIdentifier(int) != ObjectIdentifier(string))
        let existential: Provider<any SAService> = container.saService { SALiveService() }
        let concrete: Provider<SALiveService> = container.saService { SALiveService() }
        #expect(existential.key != concrete.key)
        #expect(existential() !== concrete())
        let events = tracing(container)
        _ = container.saBox(of: Int.self)()
        _ = container.saBox(of: [String: Int].self)()
        #expect(events.values.map(\.type) == ["SABox<Int>", "SABox<Dictionary<String, Int>>"])
    }

    // MARK: - Families

    @Test func aFamilysMembersAreItsRegistrationWithTheirArgument() {
        let container = DependencyContainer()
        let family = container.saStringFamily
        let member = family["a"]
        #expect(member.key.registration == family.key)
        #expect(member.key == family.key.with(RegistrationKey.TypedArgument("a")))
        #expect(member.key != family["b"].key && member.key == family["a"].key)
        #expect(member.name.description == "Zeichenkette" && member.scope == .factory && member.teardown == nil)
        #expect(!member.isMainActor && !family.isMainActor)
        #expect(container.saStringFamily("a") !== container.saStringFamily("a"))
    }

    @Test func familiesOfEveryArgumentTypeTellTheirArgumentsApart() {
        let container = DependencyContainer()
        #expect(container.saRegionFamily(.eu) === container.saRegionFamily(.eu))
        #expect(container.saRegionFamily(.eu) !== container.saRegionFamily(.us))
        #expect(container.saRegionFamily(.other("x")) === container.saRegionFamily(.other("x")))
        #expect(container.saRegionFamily(.other("x")) !== container.saRegionFamily(.other("y")))
        #expect(container.saCaselessFamily(SACaseless(raw: "Alice")) === container.saCaselessFamily(SACaseless(raw: "ALICE")))
        #expect(container.saCaselessFamily(SACaseless(raw: "Alice")) !== container.saCaselessFamily(SACaseless(raw: "Bob")))
        let query = SAQuery(region: .other("de"), page: 2, tags: ["a", "b"])
        let held = container.saQueryFamily(query)
        #expect(container.saQueryFamily(SAQuery(region: .other("de"), page: 2, tags: ["a", "b"])) === held)
        #expect(container.saQueryFamily(SAQuery(region: .other("de"), page: 2, tags: ["b", "a"])) !== held)
        #expect(container.saQueryFamily[query].scope == .shared)
        // One generic helper for two argument types: two families.
        let ints = container.saGenericFamily(Int.self)
        let strings = container.saGenericFamily(String.self)
        #expect(ints.key != strings.key && ints[1].key != strings["1"].key)
        #expect(ints.key.position == strings.key.position)
        #expect(ints(1) !== strings("1") && ints(1) === container.saGenericFamily(Int.self)(1))
    }

    @Test func threeThousandArgumentsAreThreeThousandKeysOfOneRegistration() {
        let container = DependencyContainer()
        let family = container.saIntFamily
        var keys = Set<RegistrationKey>()
        var instances: [ObjectIdentifier] = []
        for argument in 0..<3_000 {
            let member = family[argument]
            #expect(member.key.registration == family.key)
            keys.insert(member.key)
            instances.append(ObjectIdentifier(container.saIntFamily(argument)))
        }
        #expect(keys.count == 3_000)
        #expect(Set(instances).count == 3_000)
        let again = (0..<3_000).map { ObjectIdentifier(container.saIntFamily($0)) }
        #expect(again == instances)
        var strings = Set<RegistrationKey>()
        for argument in 0..<3_000 { strings.insert(container.saStringFamily[String(argument)].key) }
        #expect(strings.count == 3_000 && strings.isDisjoint(with: keys))
    }

    // MARK: - What every reader of a provider sees

    @Test func overridesDecorationsResetsAndLookUpsFindTheRegistrationAtAnEdgeSite() {
        let container = DependencyContainer()
        let built = container.saNonASCIIFile()
        #expect(container.instanceIfBuilt(\.saNonASCIIFile) === built)
        let stub = Node()
        container.override(\.saNonASCIIFile) { stub }
        #expect(container.saNonASCIIFile() === stub)
        #expect(container.saEmptySite() !== stub && container.saNulName() !== stub)
        container.reset(\.saNonASCIIFile)
        let rebuilt = container.saNonASCIIFile()
        #expect(rebuilt !== stub && rebuilt !== built)
        let child = DependencyContainer(parent: container)
        child.override(\.saEmptySite) { stub }
        #expect(child.saEmptySite() === stub && container.saEmptySite() !== stub)
        let decorated = Collected<String>()
        child.decorate(\.saNulName) { node in
            decorated.append("saNulName")
            return node
        }
        _ = child.saNulName()
        _ = child.saEmptySite()
        #expect(decorated.values == ["saNulName"])
        container.override(\.saIntFamily[7]) { stub }
        #expect(container.saIntFamily(7) === stub && container.saIntFamily(8) !== stub)
        #expect(container.instanceIfBuilt(\.saIntFamily[8]) === container.saIntFamily(8))
        #expect(container.instanceIfBuilt(\.saIntFamily[9]) == nil)
    }

    @Test func aDependencyPropertyResolvesTheSameInstanceAsTheProvider() {
        let container = DependencyContainer()
        let viaDependency = Dependency(\.saNonASCIIFile, container: container)
        let viaFamily = Dependency(\.saIntFamily[3], container: container)
        #expect(viaDependency.wrappedValue === container.saNonASCIIFile())
        #expect(viaFamily.wrappedValue === container.saIntFamily(3))
    }

    @Test func aTeardownKeepsTheProvidersKeyNameScopeAndFlag() {
        let container = DependencyContainer()
        let plain = container.singleton(name: "Ü", fileID: "Modül/Plain.swift", line: 3, column: 4) {
            MailResource("plain", log: nil)
        }
        let torn = plain.onShutdown { $0.close() }
        #expect(plain.teardown == nil && torn.teardown != nil)
        #expect(torn.key == plain.key && torn.key.file.utf8Start == plain.key.file.utf8Start)
        #expect(torn.name.description == "Ü" && torn.scope == .singleton && !torn.isMainActor)
        let member = container[saTenant: "acme"]
        #expect(member.teardown != nil && member.key.argument == RegistrationKey.TypedArgument("acme"))
        #expect(container.saResourceFamily["acme"].teardown == nil)
    }

    // MARK: - Teardowns

    @Test func teardownsRunMostRecentlyBuiltFirstOnceEach() {
        let container = DependencyContainer()
        let log = Collected<String>()
        container.setValue(log, forKey: "saLog")
        let store = container.saStore()
        let tenant = container[saTenant: "acme"]()
        _ = container.saResourceFamily("x")
        _ = container.saRequestFile()  // outside any scope, kept like a singleton
        container.shutdown()
        #expect(log.values == ["saRequestFile", "tenant acme", "saStore", "saDatabase"])
        #expect(store.closeCount == 1 && tenant.closeCount == 1)
        container.shutdown()
        #expect(log.values.count == 4)
        #expect(container.instanceIfBuilt(\.saResourceFamily["x"]) == nil)
    }

    @Test func anOverridesInstanceIsTornDownByTheRegistrationsTeardown() {
        let container = DependencyContainer()
        let log = Collected<String>()
        container.setValue(log, forKey: "saLog")
        let stub = MailResource("stub", log: log)
        container.override(\.saDatabase) { stub }
        #expect(container.saDatabase() === stub)
        container.shutdown()
        #expect(log.values == ["stub"] && stub.closeCount == 1)
        // Overrides stay: the next shutdown tears down the override's next instance.
        #expect(container.saDatabase() === stub)
        container.shutdown()
        #expect(stub.closeCount == 2)
    }

    @Test func anInstanceDroppedByAResetIsNotTornDownAndItsSuccessorIs() {
        let container = DependencyContainer()
        let first = container.saDatabase()
        container.reset(\.saDatabase)
        let second = container.saDatabase()
        #expect(first !== second)
        container.shutdown()
        #expect(first.closeCount == 0 && second.closeCount == 1)
        let third = container.saDatabase()
        container.reset()
        container.shutdown()
        #expect(third.closeCount == 0)
    }

    @Test func aChildAndAScopeTearDownOnlyWhatTheyBuilt() {
        let app = DependencyContainer()
        let child = DependencyContainer(parent: app)
        let appDatabase = app.saDatabase()
        let childDatabase = child.saDatabase()
        #expect(appDatabase !== childDatabase)
        let scope = DependencyContainer(scopeOf: app)
        let requestFile = scope.saRequestFile()
        #expect(scope.saRequestFile() === requestFile)
        child.shutdown()
        scope.shutdown()
        #expect(childDatabase.closeCount == 1 && requestFile.closeCount == 1 && appDatabase.closeCount == 0)
        app.shutdown()
        #expect(appDatabase.closeCount == 1 && childDatabase.closeCount == 1 && requestFile.closeCount == 1)
    }

    @Test func anAsyncTeardownRunsInTheAwaitedShutdown() async throws {
        let container = DependencyContainer()
        let log = Collected<String>()
        container.setValue(log, forKey: "saLog")
        let connection = try await container.saAsyncConnection()
        let database = container.saDatabase()
        await container.shutdown()
        #expect(connection.closeCount == 1 && database.closeCount == 1)
        #expect(log.values == ["saDatabase", "saAsyncConnection"])
    }

    @Test func aTeardownAnyThreadMayRunComesBackAsSuch() {
        let provider = DependencyContainer().saDatabase
        guard case .anywhere = provider.teardown else {
            Issue.record("a teardown for any thread came back as \(String(describing: provider.teardown))")
            return
        }
        #expect(!provider.isMainActor)
    }

    @MainActor @Test func aMainActorTeardownOfARegistrationForAnyThreadKeepsWhereItRuns() {
        let container = DependencyContainer()
        let provider = container.saMainTornResource
        #expect(!provider.isMainActor)
        guard case .onMainActor = provider.teardown else {
            Issue.record("a main-actor teardown came back as \(String(describing: provider.teardown))")
            return
        }
        let resource = container.saMainTornResource()
        container.shutdown()
        #expect(resource.closeCount == 1)
    }

    @MainActor @Test func aMainActorTeardownRunsOnTheMainActorForItsOwnInstance() {
        let container = DependencyContainer()
        let provider = container.saPlayer
        #expect(provider.isMainActor && provider.scope == .singleton)
        guard case .onMainActor = provider.teardown else {
            Issue.record("a main-actor teardown came back as \(String(describing: provider.teardown))")
            return
        }
        let player = container.saPlayer()
        #expect(container.saPlayer() === player)
        container.shutdown()
        #expect(player.ended == 1)
        container.shutdown()
        #expect(player.ended == 1)
    }

    @Test func aTeardownThatCapturesItsContainerKeepsItUntilShutdownAndNoLonger() throws {
        weak var weakContainer: DependencyContainer?
        var resource: MailResource?
        do {
            let container = DependencyContainer()
            weakContainer = container
            resource = container.saSelfCapturing()
        }
        #expect(weakContainer != nil)
        do {
            let container = try #require(weakContainer)
            container.shutdown()
            #expect(container.getValue(forKey: "saSelfCapturing.tornDown") == true)
        }
        #expect(resource?.closeCount == 1)
        #expect(weakContainer == nil)
    }

    @Test func aMainActorFamilyMemberDroppedOffTheMainActorIsReleasedOnIt() async {
        let container = DependencyContainer()
        let releasedOnMainActor = Collected<Bool>()
        let released = DispatchSemaphore(value: 0)
        let probe: @Sendable (Bool) -> Void = { onMainActor in
            releasedOnMainActor.append(onMainActor)
            released.signal()
        }
        container.setValue(probe, forKey: "sa-release-probe")
        await MainActor.run { _ = container.saProbedNotebooks(1) }
        await Task.detached { container.reset() }.value
        #expect(await finishesWithoutHangingOffThePool { released.wait() })
        #expect(releasedOnMainActor.values == [true])
    }

    @Test func aGraphArgumentIsSharedWithinOneResolutionAndKeptApartFromAnother() {
        let container = DependencyContainer()
        let nodes = container.saGraphPair()
        #expect(nodes[0] === nodes[1] && nodes[2] === nodes[3] && nodes[0] !== nodes[2])
        let again = container.saGraphPair()
        #expect(again[0] !== nodes[0])
        #expect(container[saGraphPart: 1].key != container[saGraphPart: 2].key)
        #expect(container[saGraphPart: 1].scope == .graph)
    }

    @Test func aScopeAndItsAppLookUpWhatEachBuilt() {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        let file = scope.saRequestFile()
        let database = scope.saDatabase()  // app-wide: built by the app for the scope
        #expect(scope.instanceIfBuilt(\.saRequestFile) === file)
        #expect(app.instanceIfBuilt(\.saRequestFile) == nil)
        #expect(app.instanceIfBuilt(\.saDatabase) === database)
        scope.shutdown()
        #expect(file.closeCount == 1 && database.closeCount == 0)
        app.shutdown()
        #expect(database.closeCount == 1)
    }

    // MARK: - Main actor

    @MainActor @Test func mainActorRegistrationsAndTheirMembersAreFlagged() {
        let container = DependencyContainer()
        #expect(container.saMainFactory.isMainActor && container.saMainFactory.scope == .factory)
        #expect(container.saMainFactory.name.description == "Notiz Ü")
        #expect(container.saMainFamily.isMainActor && container.saMainFamily[3].isMainActor)
        #expect(container.saMainFamily[3].scope == .singleton && container.saMainFamily[3].teardown == nil)
        #expect(container[saMainTopic: "a"].isMainActor && container[saMainTopic: "a"].scope == .shared)
        #expect(!container.saDatabase.isMainActor && !container.saIntFamily[3].isMainActor)
        #expect(container.saMainFamily(3) === container.saMainFamily(3))
        #expect(container.saMainFamily(3) !== container.saMainFamily(4))
    }

    // MARK: - Messages

    @Test func aSharedRegistrationWithATeardownStopsNamingItsFileAndTruncatedLine() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().saSharedWithTeardown
        }
        let output = standardError(of: result)
        #expect(output.contains(
            "Feature/Überweisung.swift:2: Fatal error: geteilt Ü declares onShutdown but is a shared registration."),
            "\(output)")
    }

    @Test func aGraphRegistrationWithATeardownStopsNamingItsFileAndLine() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().saGraphWithTeardown
        }
        let output = standardError(of: result)
        #expect(output.contains(
            "Feature/Graph.swift:4321: Fatal error: Graph 🚀 declares onShutdown but is a graph registration."),
            "\(output)")
    }

    @Test func aFactoryWithATeardownAtAnEmptySiteStopsWithItsScope() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().saFactoryWithTeardown
        }
        let output = standardError(of: result)
        #expect(output.contains(":0: Fatal error:  declares onShutdown but is a factory registration."), "\(output)")
    }

    @Test func aCycleNamesEachRegistrationWithItsFileAndLine() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().saCycleA()
        }
        let output = standardError(of: result)
        #expect(output.contains(
            "Modül/Zyklus.swift:70: Fatal error: Circular dependency: Zyklus-Ä (Modül/Zyklus.swift:70) -> "
                + "Zyklus-B (Modül/Zyklus.swift:71) -> Zyklus-Ä"), "\(output)")
    }

    @Test func aCycleThroughAFamilyNamesTheFamily() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().saCycleFamily(0)
        }
        let output = standardError(of: result)
        #expect(output.contains(
            "Modül/Familie.swift:80: Fatal error: Circular dependency: Familie 🚀(0) (Modül/Familie.swift:80) -> "
                + "Familie 🚀(1) (Modül/Familie.swift:80) -> Familie 🚀(0)"), "\(output)")
    }

    @Test func aMainActorRegistrationResolvedOffTheMainActorIsNamed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await saResolveOffTheMainActor(DependencyContainer())
        }
        let output = standardError(of: result)
        #expect(output.contains("Notiz Ü is a registration of MainActor and was resolved off it"), "\(output)")
    }

    @Test func aMainActorFamilyResolvedOffTheMainActorIsNamed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await saResolveMemberOffTheMainActor(DependencyContainer())
        }
        let output = standardError(of: result)
        #expect(output.contains("saMainFamily is a registration of MainActor and was resolved off it"), "\(output)")
    }

    @Test func aMainActorTeardownShutDownOffTheMainActorNamesItsRegistration() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            _ = await MainActor.run { container.saNamedPlayer() === container.saNamedPlayer() }
            await Task.detached { shutDownSynchronously(container) }.value
        }
        let output = standardError(of: result)
        #expect(output.contains("Spieler 🎮 has a @MainActor teardown, and shutdown() was called off the main actor."),
            "\(output)")
    }

    @Test func aMainActorTeardownOfAnArgumentShutDownOffTheMainActorNamesItsSubscript() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            _ = await MainActor.run { container[saMainTenant: "acme"]() === container[saMainTenant: "acme"]() }
            await Task.detached { shutDownSynchronously(container) }.value
        }
        let output = standardError(of: result)
        #expect(output.contains(
            "subscript(saMainTenant:) has a @MainActor teardown, and shutdown() was called off the main actor."),
            "\(output)")
    }

    @Test func aMainActorOverrideResolvedOffTheMainActorNamesTheRegistration() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            await MainActor.run {
                container.override(\.saCustomer) { @MainActor in StubHTTPClient("main actor") }
            }
            _ = await Task.detached { container.saCustomer() }.value
        }
        let output = standardError(of: result)
        #expect(output.contains(
            "Kunde 🚀 was overridden with a @MainActor closure (DependencyInjectionTests/RegistrationSiteAttackTests.swift:"),
            "\(output)")
    }

    #if DEBUG
    @Test func twoKeyPathsToOneSiteAreReportedWithThatSite() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            container.override(\.saSharedSiteA) { Node() }
            container.override(\.saSharedSiteB) { Node() }
        }
        let output = standardError(of: result)
        #expect(output.contains("share one registration (Helpers/Fixed.swift:33): a helper that returns providers"),
            "\(output)")
        #expect(output.contains("and isolation (Helpers/Fixed.swift:33)\n"), "\(output)")
    }
    #endif

    // MARK: - Traces

    @Test func everySynchronousScopeTracesItsNameTypeAndScope() {
        let app = DependencyContainer()
        let events = tracing(app)
        _ = app.saTraceFactory()
        _ = app.saTraceSingleton()
        _ = app.saTraceSingleton()
        let held = app.saTraceShared()
        _ = app.saTraceShared()
        _ = app.saTraceGraph()
        _ = app.saTraceScoped()
        _ = app.saTraceExistential()
        _ = app.saTraceOptional()
        _ = app.saTraceFamily(.eu)
        _ = app.saTraceFamily(.eu)
        withExtendedLifetime(held) {}
        #expect(events.values.map(SAEvent.init) == [
            SAEvent("saTraceFactory", "Int", .factory, .built),
            SAEvent("saTraceSingleton", "String", .singleton, .built),
            SAEvent("saTraceSingleton", "String", .singleton, .cached),
            SAEvent("saTraceShared", "SALiveService", .shared, .built),
            SAEvent("saTraceShared", "SALiveService", .shared, .cached),
            SAEvent("saTraceGraph", "Node", .graph, .built),
            SAEvent("saTraceScoped", "Node", .scoped, .built),
            SAEvent("saTraceExistential", "SAService", .singleton, .built),
            SAEvent("saTraceOptional", "Optional<Int>", .factory, .built),
            SAEvent("Region", "Node", .singleton, .built),
            SAEvent("Region", "Node", .singleton, .cached),
        ])
    }

    @Test func aScopedRegistrationInAScopeTracesItsScope() {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        let events = tracing(scope)
        _ = scope.saTraceScoped()
        _ = scope.saTraceScoped()
        #expect(events.values.map(SAEvent.init) == [
            SAEvent("saTraceScoped", "Node", .scoped, .built),
            SAEvent("saTraceScoped", "Node", .scoped, .cached),
        ])
    }

    @Test func asyncProvidersTraceTheirNameTypeAndScope() async throws {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        let events = tracing(app)
        _ = try await app.saTraceAsyncFactory()
        _ = try await app.saTraceAsyncSingleton()
        _ = try await app.saTraceAsyncSingleton()
        scope.tracer = app.tracer
        _ = try await scope.saTraceAsyncScoped()
        _ = try await scope.saTraceAsyncScoped()
        let names = events.values.map(SAEvent.init)
        #expect(names.map(\.name) == [
            "saTraceAsyncFactory", "saTraceAsyncSingleton", "saTraceAsyncSingleton", "saTraceAsyncScoped",
            "saTraceAsyncScoped",
        ])
        #expect(names.map(\.type) == ["Int", "Node", "Node", "Node", "Node"])
        #expect(names.map(\.scope) == [.factory, .singleton, .singleton, .scoped, .scoped])
        #expect(names.map(\.outcome) == [.built, .built, .cached, .built, .cached])
    }

    // MARK: - Concurrency

    @Test func providersMadeOnManyThreadsAtOnceAgreeAndResolveOneInstanceEach() async {
        let container = DependencyContainer()
        let events = tracing(container)
        let reference = (container.saNonASCIIFile.key, container.saIntFamily[5].key, container.saDatabase.key)
        let singletons = Collected<ObjectIdentifier>()
        let members = Collected<[ObjectIdentifier]>()
        let mismatches = Collected<String>()
        let threadsEnded = await concurrentlyOffThePool(threads: 8) { _ in
            var ids: [ObjectIdentifier] = []
            for round in 0..<200 {
                let provider = container.saNonASCIIFile
                if provider.key != reference.0 || provider.name.description != "Überweisung 🚀"
                    || provider.scope != .singleton || provider.isMainActor
                {
                    mismatches.append("saNonASCIIFile")
                }
                if container.saIntFamily[5].key != reference.1 { mismatches.append("member") }
                if container.saDatabase.key != reference.2 || container.saDatabase.teardown == nil {
                    mismatches.append("saDatabase")
                }
                singletons.append(ObjectIdentifier(provider()))
                singletons.append(ObjectIdentifier(container.saDatabase()))
                if round < 50 { ids.append(ObjectIdentifier(container.saIntFamily(round))) }
            }
            members.append(ids)
        }
        #expect(threadsEnded, "the threads did not end before the hang limit")
        #expect(mismatches.values.isEmpty, "\(mismatches.values.prefix(5))")
        #expect(Set(singletons.values).count == 2)
        #expect(Set(members.values).count == 1 && members.values.first.map { Set($0).count } == 50)
        let built = events.values.filter { $0.outcome == .built }
        #expect(built.filter { $0.name == "Überweisung 🚀" }.count == 1)
        #expect(built.filter { $0.name == "saDatabase" }.count == 1)
        #expect(built.filter { $0.name == "saIntFamily" }.count == 50)
        #expect(events.values.allSatisfy { $0.outcome != .builtFromOverride })
        let database = container.saDatabase()
        shutDownSynchronously(container)
        #expect(database.closeCount == 1)
    }
}

/// Forms a key path to a main-actor registration on the main actor and applies it on a
/// detached task, which the compiler allows.
@MainActor private func saResolveOffTheMainActor(_ container: DependencyContainer) async {
    let keyPath = \DependencyContainer.saMainFactory
    await Task.detached { _ = container[keyPath: keyPath]() }.value
}

@MainActor private func saResolveMemberOffTheMainActor(_ container: DependencyContainer) async {
    let keyPath = \DependencyContainer.saMainFamily[3]
    await Task.detached { _ = container[keyPath: keyPath]() }.value
}

/// The packed site itself, at the edges no registration helper reaches at once: a file
/// with a NUL outside ASCII, the largest line, column zero, every scope with either flag.
@Suite struct RegistrationSitePackingAttackTests {
    @Test(arguments: DependencyScope.allCases)
    func everyScopeAndFlagBesideEdgeWordsComesBackAsItWentIn(scope: DependencyScope) {
        let name: StaticString = "\u{0}"
        let file: StaticString = "Ä/\u{0}.swift"
        for isMainActor in [false, true] {
            let site = RegistrationSite(
                scope: scope, name: name, fileID: file, line: UInt.max, column: 0, type: ObjectIdentifier(Never.self),
                isMainActor: isMainActor)
            #expect(site.name.utf8Start == name.utf8Start && site.name.utf8CodeUnitCount == 1 && site.name.isASCII)
            // The file is kept as its address, and read up to its first NUL.
            let fileID = site.fileName.string
            #expect(fileID.utf8Start == file.utf8Start && fileID.description == "Ä/")
            #expect(!fileID.isASCII && fileID.hasPointerRepresentation)
            #expect(site.scope == scope && site.isMainActor == isMainActor)
            #expect(site.position == UInt64(UInt32.max) << 32)
            #expect(site.type == ObjectIdentifier(Never.self))
        }
    }
}
