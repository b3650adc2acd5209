import DependencyInjection
import Foundation
import Testing

/// The cycle a process reported before it stopped, read from its standard error.
///
/// The package reports `Circular dependency: a (Module/File.swift:3) -> b (…) -> a`: each
/// registration once with where it is declared, and the first again at the end.
struct CycleMessage {
    /// The names in the chain, the closing repetition included.
    let names: [String]
    /// The `fileID:line` of each name but the closing one.
    let locations: [String]
    let line: String

    init?(_ output: String) {
        guard let range = output.range(of: "Circular dependency: ") else { return nil }
        line = String(output[range.upperBound...].prefix { $0 != "\n" })
        var names: [String] = []
        var locations: [String] = []
        for part in line.components(separatedBy: " -> ") {
            if let open = part.range(of: " (", options: .backwards), part.hasSuffix(")") {
                names.append(String(part[..<open.lowerBound]))
                locations.append(String(part[open.upperBound...].dropLast()))
            } else {
                names.append(part)
            }
        }
        self.names = names
        self.locations = locations
    }

    /// Whether the chain is `expected` (closing name included) or a rotation of it, every
    /// name but the closing one located in this test module, none in the library.
    func isCycle(_ expected: [String]) -> Bool {
        guard names.count == expected.count, locations.count == names.count - 1,
            locations.allSatisfy({ $0.hasPrefix("DependencyInjectionTests/") })
        else { return false }
        let ring = Array(expected.dropLast())
        return ring.indices.contains { shift in
            Array(ring[shift...] + ring[..<shift]) + [ring[shift]] == names
        }
    }
}

extension CycleMessage {
    /// The cycle an exit test's process reported on standard error, if any.
    init?(_ result: ExitTest.Result?) {
        self.init(String(decoding: result?.standardErrorContent ?? [], as: UTF8.self))
    }
}
