import DependencyInjection
import Foundation
import Testing

/// An app's key for a family: its `description` must never run in a cycle's message.
struct CycleArgumentKey: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    let id: Int
    var description: String { "described by the app" }
    var debugDescription: String { "described by the app" }
}

extension DependencyContainer {
    /// `caLoop(3)` needs `caLoop(4)`, which needs `caLoop(3)`: the steps differ only by argument.
    var caLoop: ProviderFamily<Int, Node> {
        singleton { n in
            _ = self.caLoop(n == 3 ? 4 : 3)
            return Node()
        }
    }

    /// `[caTrack: "a"]` needs `[caTrack: "b"]`, which needs `[caTrack: "a"]`.
    subscript(caTrack id: String) -> Provider<Node> {
        factory(id) {
            _ = self[caTrack: id == "a" ? "b" : "a"]()
            return Node()
        }
    }

    /// Needs itself with the same key, an app type.
    subscript(caKey key: CycleArgumentKey) -> Provider<Node> {
        singleton(key) {
            _ = self[caKey: key]()
            return Node()
        }
    }

    /// Needs itself with the same long string.
    subscript(caLong text: String) -> Provider<Node> {
        factory(text) {
            _ = self[caLong: text]()
            return Node()
        }
    }

    /// Needs itself with the same UUID.
    subscript(caID id: UUID) -> Provider<Node> {
        factory(id) {
            _ = self[caID: id]()
            return Node()
        }
    }

    /// Needs itself with the same URL.
    subscript(caURL url: URL) -> Provider<Node> {
        factory(url) {
            _ = self[caURL: url]()
            return Node()
        }
    }

    /// An app-wide singleton that asks for `caLoop(5)`, which asks for it: a cycle
    /// through a family member and a plain registration.
    var caHead: Provider<Node> {
        singleton {
            _ = self.caMember(5)
            return Node()
        }
    }
    var caMember: ProviderFamily<Int, Node> {
        factory { _ in
            _ = self.caHead()
            return Node()
        }
    }
}

/// A cycle through members of one provider family names each member by its argument, as
/// the call that resolves it writes it: the members are one registration, and the
/// argument is what tells the steps of the cycle apart.
@Suite struct CycleArgumentTests {
    @Test func aCycleBetweenTwoMembersOfAFamilyNamesTheirArguments() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle between two members of a family")
            _ = DependencyContainer().caLoop(3)
        }
        let cycle = CycleChain(result)
        #expect(cycle?.description.hasPrefix("caLoop(3) (DependencyInjectionTests/CycleArgumentTests.swift:") == true)
        #expect(cycle?.names == ["caLoop", "caLoop", "caLoop"], "\(standardError(of: result))")
        #expect(cycle?.arguments == ["3", "4", "3"], "\(standardError(of: result))")
        #expect(cycle?.namesEachRegistrationOnce == true, "\(standardError(of: result))")
    }

    @Test func aSubscriptsArgumentTakesTheLabelsPlaceAndAStringIsQuoted() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle between two members of a subscript family")
            _ = DependencyContainer()[caTrack: "a"]()
        }
        let cycle = CycleChain(result)
        #expect(cycle?.description.hasPrefix(#"subscript(caTrack: "a") (DependencyInjectionTests/"#) == true,
                "\(standardError(of: result))")
        #expect(cycle?.names == ["subscript(caTrack:)", "subscript(caTrack:)", "subscript(caTrack:)"])
        #expect(cycle?.arguments == [#""a""#, #""b""#, #""a""#], "\(standardError(of: result))")
    }

    @Test func anArgumentOfAnAppTypeIsNamedByItsTypeWithoutRunningItsDescription() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle of a member keyed by an app type")
            _ = DependencyContainer()[caKey: CycleArgumentKey(id: 7)]()
        }
        let output = standardError(of: result)
        #expect(!output.contains("described by the app"), "\(output)")
        #expect(CycleChain(result)?.arguments == ["CycleArgumentKey", "CycleArgumentKey"], "\(output)")
    }

    @Test func aLongArgumentIsShortened() async {
        let long = String(repeating: "x", count: 500)
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle of a member keyed by a long string")
            _ = DependencyContainer()[caLong: String(repeating: "x", count: 500)]()
        }
        let output = standardError(of: result)
        let arguments = CycleChain(result)?.arguments ?? []
        #expect(arguments.count == 2, "\(output)")
        #expect(arguments.allSatisfy { $0 == "\"" + String(repeating: "x", count: 58) + "…" }, "\(output)")
        #expect(!output.contains(long))
    }

    @Test func aPlainRegistrationInTheCycleIsNamedWithoutAnArgument() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle through a singleton and a family member")
            _ = DependencyContainer().caHead()
        }
        let cycle = CycleChain(result)
        #expect(cycle?.isCycle(["caHead", "caMember", "caHead"]) == true, "\(standardError(of: result))")
        #expect(cycle?.arguments == [nil, "5", nil], "\(standardError(of: result))")
    }

    @Test func aUUIDAndAURLAreWrittenOut() async {
        let id = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle of a member keyed by a UUID")
            _ = DependencyContainer()[caID: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!]()
        }
        #expect(CycleChain(id)?.arguments == ["E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"],
                "\(standardError(of: id))")
        let url = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle of a member keyed by a URL")
            _ = DependencyContainer()[caURL: URL(string: "https://example.com/feed")!]()
        }
        #expect(CycleChain(url)?.arguments == ["https://example.com/feed", "https://example.com/feed"],
                "\(standardError(of: url))")
    }

    /// A string that holds the message's own separators (the arrow between steps, the
    /// ` (` before a location, a line break) is written with those characters escaped: the
    /// message stays one line of two steps, each a literal equal to the argument.
    @Test func aStringHoldingTheSeparatorsKeepsTheMessageReadable() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle of a member keyed by a string holding the separators")
            _ = DependencyContainer()[caLong: "x -> y (z)\u{2028}w"]()
        }
        let output = standardError(of: result)
        let line = output.split(separator: "\n").first { $0.contains("Circular dependency: ") }.map(String.init) ?? ""
        #expect(!line.contains { $0.isNewline }, "\(output)")
        let cycle = CycleChain(result)
        #expect(cycle?.links.count == 2, "\(output)")
        #expect(cycle?.arguments.first == #""x -\u{3E} y \u{28}z)\u{2028}w""#, "\(output)")
    }
}
