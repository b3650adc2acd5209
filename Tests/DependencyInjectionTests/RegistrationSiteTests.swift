import Testing
@testable import DependencyInjection

extension DependencyContainer {
    /// A registration whose name is one character, outside ASCII.
    var oneScalarName: Provider<Node> { singleton(name: "é") { Node() } }
    var nonASCIIName: Provider<Node> { factory(name: "Überweisung 🚀") { Node() } }
    var namedFamily: ProviderFamily<Int, Node> { singleton(name: "Konto") { _ in Node() } }
}

/// A provider keeps its registration's file, position, type, name, scope and main-actor
/// flag packed in one vector, and takes its key, its messages and its trace names back
/// out of it: whatever goes in must come out the same, or two providers of one
/// registration would get two keys, and messages would name the wrong place.
@Suite struct RegistrationSiteTests {
    private func same(_ lhs: StaticString, _ rhs: StaticString) -> Bool {
        lhs.hasPointerRepresentation == rhs.hasPointerRepresentation && lhs.isASCII == rhs.isASCII
            && lhs.description == rhs.description
            && (!lhs.hasPointerRepresentation || lhs.utf8Start == rhs.utf8Start)
    }

    @Test(arguments: DependencyScope.allCases, [false, true])
    func everyPartComesBackAsItWentIn(scope: DependencyScope, isMainActor: Bool) {
        let name: StaticString = "Überweisung 🚀"
        let site = RegistrationSite(
            scope: scope, name: name, fileID: #fileID, line: UInt(UInt32.max), column: 12_345,
            type: ObjectIdentifier(String.self), isMainActor: isMainActor)
        #expect(site.scope == scope)
        #expect(site.isMainActor == isMainActor)
        #expect(same(site.name, name))
        #expect(same(site.fileName.string, #fileID))
        #expect(site.position == UInt64(UInt32.max) << 32 | 12_345)
        #expect(site.type == ObjectIdentifier(String.self))
    }

    @Test func aNameOfOneCharacterComesBackAsItWentIn() {
        let name: StaticString = "é"
        let site = RegistrationSite(
            scope: .factory, name: name, fileID: #fileID, line: 1, column: 1, type: ObjectIdentifier(Int.self),
            isMainActor: false)
        #expect(same(site.name, name))
        #expect(site.name.description == "é")
    }

    @Test func theKeyIsTheOneTheFieldsMake() {
        let container = DependencyContainer()
        let provider = container.factory(name: "Überweisung 🚀", fileID: "Module/Place.swift", line: 41, column: 7) { Node() }
        let key = RegistrationKey(file: "Module/Place.swift", line: 41, column: 7, type: Node.self, argument: nil)
        #expect(provider.key == key)
        #expect(provider.key.line == 41 && provider.key.position == 41 << 32 | 7)
        #expect(provider.key.file.description == "Module/Place.swift")
        #expect(container.nonASCIIName.key == container.nonASCIIName.key)
        #expect(container.oneScalarName.key != container.nonASCIIName.key)
        let member = { (argument: Int) in container.namedFamily[argument] }
        #expect(member(3).key == member(3).key)
        #expect(member(3).key != member(4).key)
        #expect(member(3).key.registration == container.namedFamily.key)
        #expect(member(3).name.description == "Konto" && member(3).scope == .singleton)
    }

    @Test func tracesNameScopeAndTypeFromThePackedSite() {
        let container = DependencyContainer()
        let events = Collected<ResolutionEvent>()
        container.tracer = ResolutionTracer { batch in for event in batch { events.append(event) } }
        _ = container.oneScalarName()
        _ = container.nonASCIIName()
        _ = container.namedFamily(7)
        #expect(events.values.map(\.name) == ["é", "Überweisung 🚀", "Konto"])
        #expect(events.values.map(\.scope) == [.singleton, .factory, .singleton])
        #expect(events.values.allSatisfy { $0.type == "Node" })
    }

    @Test func aSingletonFoundAgainIsTheOneBuiltOnce() {
        let container = DependencyContainer()
        #expect(container.oneScalarName() === container.oneScalarName())
        #expect(container.namedFamily(1) === container.namedFamily(1))
        #expect(container.namedFamily(1) !== container.namedFamily(2))
        #expect(container.nonASCIIName() !== container.nonASCIIName())
    }
}
