import Testing
@testable import DependencyInjection

extension DependencyContainer {
    // Names that differ as bytes but are canonically equivalent (NFC "é" and NFD "e" + U+0301).
    var fkComposed: Provider<FKThing> { singleton(fileID: "FK/Caf\u{E9}.swift", line: 12, column: 12) { FKThing("nfc") } }
    var fkDecomposed: Provider<FKThing> {
        singleton(fileID: "FK/Cafe\u{301}.swift", line: 12, column: 12) { FKThing("nfd") }
    }
}

/// Two files are told apart by their bytes, not by Unicode's canonical equivalence.
@Suite struct FileWordEquivalenceTests {
    /// Two different byte sequences are two files (a file system keeps both), but the
    /// fallback compared them as `String`s, which are equal under canonical equivalence.
    @Test func twoFilesWhoseNamesAreCanonicallyEquivalentAreTwoRegistrations() {
        let container = DependencyContainer()
        #expect(container.fkComposed.key != container.fkDecomposed.key)
        #expect(container.fkComposed().tag == "nfc")
        #expect(container.fkDecomposed().tag == "nfd")
    }
}
