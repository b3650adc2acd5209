import Foundation
import Testing
@testable import DependencyInjection

// Attacks on the key's file kept as one word (``FileName``): names that differ only past
// a NUL, names in single-scalar representation (through families, overrides, decorations,
// teardowns, cycles, issues and a forwarding helper), copies of a name at another
// address, and keys used by the thousand in dictionaries and sets.

/// A static string in single-Unicode-scalar representation: what a literal becomes where
/// it stands for a generic `ExpressibleByUnicodeScalarLiteral`.
private func fkScalar<Literal: ExpressibleByUnicodeScalarLiteral>(_: Literal.Type) -> Literal { "é" }
/// The same, for an ASCII scalar.
private func fkASCIIScalar<Literal: ExpressibleByUnicodeScalarLiteral>(_: Literal.Type) -> Literal { "x" }

final class FKThing: Sendable {
    let tag: String
    init(_ tag: String = "live") { self.tag = tag }
}

extension DependencyContainer {
    // MARK: Scalar names

    var fkScalarSingleton: Provider<FKThing> {
        singleton(fileID: fkScalar(StaticString.self), line: 21, column: 1) { FKThing("scalar") }
    }
    /// The same text as ``fkScalarSingleton``'s file, in pointer representation, at the same
    /// position: the same file, so the same registration.
    var fkPointerSameText: Provider<FKThing> { singleton(fileID: "é", line: 21, column: 1) { FKThing("pointer") } }
    /// Another scalar at the same position: another file.
    var fkASCIIScalarSingleton: Provider<FKThing> {
        singleton(fileID: fkASCIIScalar(StaticString.self), line: 21, column: 1) { FKThing("x") }
    }
    /// A pointer name of the ASCII scalar's text: the same file as ``fkASCIIScalarSingleton``.
    var fkPointerX: Provider<FKThing> { singleton(fileID: "x", line: 21, column: 1) { FKThing("px") } }

    var fkScalarFamily: ProviderFamily<Int, FKThing> {
        singleton(fileID: fkScalar(StaticString.self), line: 22, column: 1) { FKThing("s\($0)") }
    }
    /// Same position and type as ``fkScalarFamily``, another file.
    var fkPointerFamily: ProviderFamily<Int, FKThing> {
        singleton(fileID: "FK/Family.swift", line: 22, column: 1) { FKThing("p\($0)") }
    }
    var fkScalarFactory: Provider<FKThing> {
        factory(fileID: fkScalar(StaticString.self), line: 23, column: 1) { FKThing("factory") }
    }
    var fkScalarClosing: Provider<FKThing> {
        singleton(fileID: fkScalar(StaticString.self), line: 24, column: 1) { FKThing("closing") }.onShutdown {
            [unowned self] thing in
            (self.getValue(forKey: "fkClosed") as Collected<String>?)?.append(thing.tag)
        }
    }

    // MARK: A helper that forwards its caller's site, scalar or not

    func fkWrapped<T: Sendable>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping () -> T
    ) -> Provider<T> {
        singleton(name: name, fileID: fileID, line: line, column: column, make)
    }
    var fkWrappedA: Provider<FKThing> { fkWrapped { FKThing("a") } }
    var fkWrappedB: Provider<FKThing> { fkWrapped { FKThing("b") } }
    var fkWrappedScalarA: Provider<FKThing> {
        fkWrapped(fileID: fkScalar(StaticString.self), line: 30, column: 1) { FKThing("sa") }
    }
    var fkWrappedScalarB: Provider<FKThing> {
        fkWrapped(fileID: fkScalar(StaticString.self), line: 30, column: 2) { FKThing("sb") }
    }

    // MARK: Cycles and refusals named by a scalar file

    var fkScalarCycleA: Provider<FKThing> {
        singleton(fileID: fkScalar(StaticString.self), line: 40, column: 1) {
            _ = self.fkScalarCycleB()
            return FKThing()
        }
    }
    var fkScalarCycleB: Provider<FKThing> {
        factory(fileID: fkScalar(StaticString.self), line: 41, column: 1) {
            _ = self.fkScalarCycleA()
            return FKThing()
        }
    }
    var fkScalarFactoryWithTeardown: Provider<FKThing> {
        factory(fileID: fkScalar(StaticString.self), line: 42, column: 1) { FKThing() }.onShutdown { _ in }
    }

    // MARK: A helper that does not forward the site, with a scalar file

    func fkScalarNotForwarding(_ make: @escaping () -> FKThing) -> Provider<FKThing> {
        singleton(fileID: fkScalar(StaticString.self), line: 50, column: 1, make)
    }
    var fkShareOne: Provider<FKThing> { fkScalarNotForwarding { FKThing("1") } }
    var fkShareTwo: Provider<FKThing> { fkScalarNotForwarding { FKThing("2") } }
}

@Suite struct FileWordAttackTests {
    // MARK: - Scalar names

    @Test func aScalarFileAndThePointerOfItsTextAreOneFileAndOtherScalarsAreNot() {
        let container = DependencyContainer()
        let scalar = container.fkScalarSingleton.key, pointer = container.fkPointerSameText.key
        let x = container.fkASCIIScalarSingleton.key, pointerX = container.fkPointerX.key
        #expect(scalar.fileName.word & FileName.scalarTag != 0)
        #expect(x.fileName.word & FileName.scalarTag != 0)
        #expect(pointer.fileName.word & FileName.scalarTag == 0)
        #expect(scalar == pointer && scalar.hashValue == pointer.hashValue)
        #expect(x == pointerX && x.hashValue == pointerX.hashValue)
        #expect(scalar != x && pointer != x && scalar != pointerX)
        #expect(x.file.description == "x" && x.file.isASCII && !x.file.hasPointerRepresentation)
        #expect(container.fkScalarSingleton() === container.fkPointerSameText())
        #expect(container.fkASCIIScalarSingleton() !== container.fkScalarSingleton())
    }

    @Test func aScalarFamilyKeepsOneInstancePerArgumentApartFromAnotherFilesFamily() {
        let container = DependencyContainer()
        var first: [ObjectIdentifier] = []
        for argument in 0..<2_000 {
            let member = container.fkScalarFamily(argument)
            #expect(member.tag == "s\(argument)")
            first.append(ObjectIdentifier(member))
        }
        for argument in stride(from: 1_999, through: 0, by: -1) {
            #expect(ObjectIdentifier(container.fkScalarFamily(argument)) == first[argument])
            // Same position, type and argument: only the file tells these apart.
            #expect(container.fkPointerFamily(argument).tag == "p\(argument)")
        }
        #expect(container.fkScalarFamily[7].key.fileName.word & FileName.scalarTag != 0)
        #expect(container.fkScalarFamily[7].key.file.description == "é")
    }

    @Test func aScalarFamilyIsOverriddenWholeAndPerArgumentAndResetBack() {
        let container = DependencyContainer()
        let live = container.fkScalarFamily(1)
        container.override(\.fkScalarFamily) { FKThing("family\($0)") }
        container.override(\.fkScalarFamily[2]) { FKThing("two") }
        #expect(container.fkScalarFamily(1).tag == "family1")
        #expect(container.fkScalarFamily(2).tag == "two")
        #expect(container.fkPointerFamily(1).tag == "p1", "an override of another file's family applied here")
        container.reset(\.fkScalarFamily)
        #expect(container.fkScalarFamily(1).tag == "s1" && container.fkScalarFamily(1) !== live)
        #expect(container.fkScalarFamily(2).tag == "s2")
    }

    @Test func aScalarRegistrationIsOverriddenDecoratedAndResetLikeAnyOther() {
        let container = DependencyContainer()
        container.decorate(\.fkScalarFactory) { FKThing("decorated(\($0.tag))") }
        #expect(container.fkScalarFactory().tag == "decorated(factory)")
        container.override(\.fkScalarFactory) { FKThing("stub") }
        #expect(container.fkScalarFactory().tag == "decorated(stub)")
        // A reset drops the override and the decorations of the registration.
        container.reset(\.fkScalarFactory)
        #expect(container.fkScalarFactory().tag == "factory")
        // The override was installed under the scalar key: the pointer key of the same
        // text is the same registration, so it sees it.
        container.override(\.fkScalarSingleton) { FKThing("over") }
        #expect(container.fkPointerSameText().tag == "over")
    }

    @Test func aScalarRegistrationsTeardownRunsOnceAtShutdown() {
        let container = DependencyContainer()
        let closed = Collected<String>()
        container.setValue(closed, forKey: "fkClosed")
        _ = container.fkScalarClosing()
        container.shutdown()
        #expect(closed.values == ["closing"])
    }

    @Test func aScalarRegistrationIsTracedByItsName() {
        let container = DependencyContainer()
        let names = Collected<String>()
        container.tracer = ResolutionTracer { events in for event in events { names.append(event.name) } }
        _ = container.fkScalarSingleton()
        _ = container.fkScalarFamily(3)
        container.tracer = nil
        #expect(names.values == ["fkScalarSingleton", "fkScalarFamily"])
    }

    @Test func aCycleOfScalarFilesNamesEachLinkWithItsFile() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().fkScalarCycleA()
        }
        let cycle = CycleChain(result)
        #expect(cycle?.names == ["fkScalarCycleA", "fkScalarCycleB", "fkScalarCycleA"], "\(standardError(of: result))")
        #expect(cycle?.links.first?.location == "é:40")
        #expect(cycle?.links.dropFirst().first?.location == "é:41")
    }

    @Test func aTeardownOnAFactoryOfAScalarFileStopsNamingIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().fkScalarFactoryWithTeardown
        }
        let output = standardError(of: result)
        #expect(output.contains("fkScalarFactoryWithTeardown declares onShutdown but is a factory"), "\(output)")
        #expect(output.contains("é:42"), "\(output)")
    }

    // MARK: - A helper that forwards the site

    @Test func aForwardingHelperKeepsOneRegistrationPerPropertyWithScalarFilesToo() {
        let container = DependencyContainer()
        #expect(container.fkWrappedA.key != container.fkWrappedB.key)
        #expect(container.fkWrappedA().tag == "a" && container.fkWrappedB().tag == "b")
        #expect(container.fkWrappedA.key.file.description == #fileID)
        #expect(container.fkWrappedScalarA.key != container.fkWrappedScalarB.key)
        #expect(container.fkWrappedScalarA().tag == "sa" && container.fkWrappedScalarB().tag == "sb")
        #expect(container.fkWrappedScalarA() === container.fkWrappedScalarA())
    }

    #if DEBUG
    /// Two key paths that lead to one scalar-file registration are reported, and the issue
    /// names the file from the scalar.
    @Test func twoPropertiesSharingAScalarFileRegistrationReportAnIssueNamingTheFile() {
        let container = DependencyContainer()
        let issues = reportedIssues(in: container) {
            container.override(\.fkShareOne) { FKThing() }
            container.override(\.fkShareTwo) { FKThing() }
        }
        let merged = issues.filter { $0.message.contains("share one registration") }
        #expect(merged.count == 1, "\(issues.map(\.message))")
        #expect(merged.first?.message.contains("(é:50)") == true)
        #expect(merged.first?.fileID.description == "é" && merged.first?.line == 50)
    }
    #endif

    // MARK: - Keys in dictionaries and sets

    /// Equal keys must hash equal, the text fallback included: a copy of the name at
    /// another address, a scalar and a pointer of one text.
    @Test func equalKeysHashEqualInDictionariesWhateverTheirFilesWord() {
        let container = DependencyContainer()
        let plain = container.fkWrappedA.key
        let text = plain.file.description
        text.utf8CString.withUnsafeBufferPointer { bytes in
            let elsewhere = RegistrationKey(
                fileName: FileName(word: UInt64(UInt(bitPattern: bytes.baseAddress!))), position: plain.position,
                type: plain.type, argument: nil)
            #expect(elsewhere.fileName.word != plain.fileName.word)
            var table: [RegistrationKey: Int] = [plain: 1]
            #expect(table[elsewhere] == 1)
            table[elsewhere] = 2
            #expect(table.count == 1 && table[plain] == 2)
            let set: Set<RegistrationKey> = [plain, elsewhere, container.fkWrappedB.key]
            #expect(set.count == 2)
        }
        let scalar = container.fkScalarSingleton.key, pointer = container.fkPointerSameText.key
        let keys: Set<RegistrationKey> = [scalar, pointer, container.fkASCIIScalarSingleton.key, container.fkPointerX.key]
        #expect(keys.count == 2)
    }

    @Test func thousandsOfFamilyKeysOfTwoFilesAtOnePositionStayApartInASet() {
        let container = DependencyContainer()
        var keys = Set<RegistrationKey>()
        var table: [RegistrationKey: Int] = [:]
        for argument in 0..<3_000 {
            let scalar = container.fkScalarFamily[argument].key, pointer = container.fkPointerFamily[argument].key
            #expect(scalar.hashValue == pointer.hashValue || scalar != pointer)
            keys.insert(scalar)
            keys.insert(pointer)
            table[scalar] = argument
            table[pointer] = -argument
        }
        #expect(keys.count == 6_000)
        for argument in 0..<3_000 {
            #expect(table[container.fkScalarFamily[argument].key] == argument)
            #expect(table[container.fkPointerFamily[argument].key] == -argument)
        }
    }

    // MARK: - Messages

    @Test func aSiteNamesItsFileFromTheWordForEveryRepresentation() {
        let scalar = Site(name: .registration("s"), fileID: fkScalar(StaticString.self), line: 3)
        #expect(scalar.description == "s (é:3)")
        let ascii = Site(name: .registration("x"), fileID: fkASCIIScalar(StaticString.self), line: 4)
        #expect(ascii.description == "x (x:4)" && ascii.fileID.isASCII)
        let pointer = Site(name: .registration("p"), fileID: "Modül/P.swift", line: 5)
        #expect(pointer.description == "p (Modül/P.swift:5)" && !pointer.fileID.isASCII)
        let empty = Site(name: .registration("e"), fileID: "", line: 6)
        #expect(empty.description == "e (:6)" && empty.fileID.utf8CodeUnitCount == 0)
    }

    /// Every scalar's word has the tag and comes back as itself, the largest scalar too.
    @Test func scalarsAtTheEdgesComeBack() {
        for scalar in ["\u{0}", "\u{7F}", "\u{80}", "\u{FFFF}", "\u{10FFFF}"] as [Unicode.Scalar] {
            let string = unsafeBitCast(
                (UInt(scalar.value), UInt(0), UInt8(scalar.isASCII ? 3 : 1)), to: StaticString.self)
            #expect(!string.hasPointerRepresentation && string.unicodeScalar == scalar)
            let back = FileName(string)
            #expect(back.word == UInt64(scalar.value) | FileName.scalarTag)
            #expect(back.string.unicodeScalar == scalar && back.string.isASCII == scalar.isASCII)
            #expect(!back.string.hasPointerRepresentation)
        }
    }
}
