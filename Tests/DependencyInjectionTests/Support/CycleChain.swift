import Foundation
import Testing

/// The chain of a `Circular dependency: a (Module/File.swift:12) -> b (…) -> a` message,
/// read from what an exit test's process wrote to standard error.
struct CycleChain: CustomStringConvertible {
    struct Link: Equatable {
        /// The registration, without the argument a family's member is named with:
        /// `loop` for `loop(3)`, `subscript(track:)` for `subscript(track: 3)`.
        let name: String
        /// The argument, as the message writes it (`3`, `"a"`, a type's name), if any.
        let argument: String?
        /// `Module/File.swift:line`, or nil for the closing name.
        let location: String?

        init(name: String, location: String?) {
            self.location = location
            // `subscript(track: 3)`: one label, then the argument.
            if name.hasPrefix("subscript("), name.hasSuffix(")"), let colon = name.range(of: ": "),
                !name[..<colon.lowerBound].contains(":")
            {
                (self.name, argument) = (
                    String(name[..<colon.lowerBound]) + ":)", String(name[colon.upperBound...].dropLast())
                )
            } else if !name.hasPrefix("@Dependency"), !name.hasPrefix("subscript("), name.hasSuffix(")"),
                let open = name.firstIndex(of: "(")
            {
                // `loop(3)`: a family's property, called with its argument.
                (self.name, argument) = (String(name[..<open]), String(name[name.index(after: open)...].dropLast()))
            } else if let with = name.range(of: " with ") {
                (self.name, argument) = (String(name[..<with.lowerBound]), String(name[with.upperBound...]))
            } else {
                (self.name, argument) = (name, nil)
            }
        }
    }

    /// The text after `Circular dependency: `, up to the end of its line.
    let description: String
    let links: [Link]

    init?(_ result: ExitTest.Result?) {
        let output = standardError(of: result)
        guard let start = output.range(of: "Circular dependency: ") else { return nil }
        description = String(output[start.upperBound...].prefix { $0 != "\n" })
        links = description.split(separator: " -> ", omittingEmptySubsequences: false).map { part in
            // A name may contain parentheses (`@Dependency(\.x)`), a location follows " (".
            if part.hasSuffix(")"), let open = part.range(of: " (", options: .backwards) {
                return Link(
                    name: String(part[..<open.lowerBound]),
                    location: String(part[open.upperBound...].dropLast()))
            }
            return Link(name: String(part), location: nil)
        }
    }

    /// The registrations, without arguments.
    var names: [String] { links.map(\.name) }

    /// The arguments of the links, `nil` for a link that has none.
    var arguments: [String?] { links.map(\.argument) }

    /// Every name once with its location, then the first name again without one.
    var namesEachRegistrationOnce: Bool {
        guard links.count >= 2, let first = links.first, let last = links.last else { return false }
        let open = links.dropLast()
        return last.name == first.name && last.argument == first.argument && last.location == nil
            && Set(open.map { "\($0.name) \($0.argument ?? "")" }).count == open.count
            && open.allSatisfy { $0.location != nil }
    }

    /// Whether every location is in `fileID` (a file of the tests, never of the library).
    func locatesEveryLink(in fileID: String) -> Bool {
        links.dropLast().allSatisfy { $0.location?.hasPrefix(fileID) == true }
            && !description.contains("DependencyInjection/")
    }

    /// The location of the link named `name`.
    func location(of name: String) -> String? {
        links.first { $0.name == name && $0.location != nil }?.location
    }

    /// Whether the chain is `expected` (closing name included) or a rotation of it, each
    /// registration named once, located in this test module and never in the library.
    func isCycle(_ expected: [String]) -> Bool {
        guard namesEachRegistrationOnce, locatesEveryLink(in: "DependencyInjectionTests"),
            names.count == expected.count
        else { return false }
        let ring = Array(expected.dropLast())
        return ring.indices.contains { shift in Array(ring[shift...] + ring[..<shift]) + [ring[shift]] == names }
    }
}
