import Testing
@testable import DependencyInjection

/// A static string in the representation of a single Unicode scalar: what a literal
/// becomes where it stands for a generic `ExpressibleByUnicodeScalarLiteral`, as in a
/// helper that makes its `fileID` that way.
private func scalarLiteral<Literal: ExpressibleByUnicodeScalarLiteral>(_: Literal.Type) -> Literal { "é" }

extension DependencyContainer {
    var fnPlain: Provider<Node> { singleton(fileID: "Feature/Plain.swift", line: 3, column: 4) { Node() } }
    var fnOtherFile: Provider<Node> { singleton(fileID: "Feature/Other.swift", line: 3, column: 4) { Node() } }
    var fnScalarFile: Provider<Node> {
        singleton(fileID: scalarLiteral(StaticString.self), line: 3, column: 4) { Node() }
    }
}

/// A key keeps its file as one word (``FileName``): the address of the name's
/// null-terminated bytes, or a scalar. Whatever a message needs of it must come back from
/// that word, and two registrations must still be told apart by it.
@Suite struct FileNameTests {
    @Test(arguments: [
        "", "A/B.swift", "Modül/Überweisung 🚀.swift",
        "Lang/Lang/Lang/Lang/Lang/Lang/Lang/Lang/Lang/Lang/Lang/Lang/Lang/Lang/Lang/Lang/Lang/Lang/Lang/Lang/X.swift",
        #fileID,
    ] as [StaticString])
    func aPointerComesBackWithItsLengthAndFlags(original: StaticString) {
        let back = FileName(original).string
        #expect(back.hasPointerRepresentation)
        #expect(back.utf8Start == original.utf8Start)
        #expect(back.utf8CodeUnitCount == original.utf8CodeUnitCount)
        #expect(back.isASCII == original.isASCII)
        #expect(back.description == original.description)
    }

    @Test func aScalarComesBackAsTheScalar() {
        let original = scalarLiteral(StaticString.self)
        #expect(!original.hasPointerRepresentation)
        let name = FileName(original)
        #expect(name.word & FileName.scalarTag != 0)
        let back = name.string
        #expect(!back.hasPointerRepresentation && back.unicodeScalar == "é" && !back.isASCII)
        #expect(back.description == "é")
    }

    @Test func aRegistrationWhoseFileIsAScalarResolvesOnceAndIsNamed() {
        let container = DependencyContainer()
        // Comparing two such keys used to read the file's bytes' address, which a scalar has not.
        #expect(container.fnScalarFile.key == container.fnScalarFile.key)
        #expect(container.fnScalarFile.key != container.fnPlain.key)
        #expect(container.fnScalarFile() === container.fnScalarFile())
        #expect(container.fnScalarFile.key.file.description == "é")
    }

    @Test func twoFilesAtOnePositionAreTwoRegistrations() {
        let container = DependencyContainer()
        #expect(container.fnPlain.key != container.fnOtherFile.key)
        #expect(container.fnPlain() !== container.fnOtherFile())
        #expect(container.fnPlain.key.file.description == "Feature/Plain.swift")
        #expect(container.fnOtherFile.key.file.description == "Feature/Other.swift")
    }

    @Test func aCopyOfAFileNameInAnotherPlaceIsTheSameFile() {
        // A literal that inlined code emitted a second time has another address, the same text.
        let text = "Feature/Plain.swift"
        let copy = text.utf8CString
        copy.withUnsafeBufferPointer { bytes in
            let address = UInt64(UInt(bitPattern: bytes.baseAddress!))
            let elsewhere = RegistrationKey(
                fileName: FileName(word: address), position: DependencyContainer().fnPlain.key.position,
                type: ObjectIdentifier(Node.self), argument: nil)
            let plain = DependencyContainer().fnPlain.key
            #expect(elsewhere.fileName.word != plain.fileName.word)
            #expect(elsewhere == plain && elsewhere.hashValue == plain.hashValue)
            #expect(elsewhere.file.description == text)
        }
    }
}
