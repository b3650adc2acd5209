import Foundation
import Testing

/// The chain of a `Circular dependency: a (Module/File.swift:12) -> b (…) -> a` message,
/// read from what an exit test's process wrote to standard error.
struct CycleChain: CustomStringConvertible {
    struct Link: Equatable {
        let name: String
        /// `Module/File.swift:line`, or nil for the closing name.
        let location: String?
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

    var names: [String] { links.map(\.name) }

    /// Every name once with its location, then the first name again without one.
    var namesEachRegistrationOnce: Bool {
        guard links.count >= 2, let first = links.first, let last = links.last else { return false }
        let open = links.dropLast()
        return last.name == first.name && last.location == nil
            && Set(open.map(\.name)).count == open.count
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
