import Foundation
import Testing
@testable import DependencyInjection

/// A family's argument keeps its value with its type, and two arguments are one when their
/// types are the same and their values equal by that type's `==`: what every table a
/// member's key probes relies on.
@Suite struct TypedArgumentTests {
    /// An order's identity is its number; its note does not take part in `==`.
    struct OrderID: Hashable, Sendable {
        let number: Int
        let note: String
        static func == (lhs: Self, rhs: Self) -> Bool { lhs.number == rhs.number }
        func hash(into hasher: inout Hasher) { hasher.combine(number) }
    }

    /// A value whose hash changes from one call to the next: a misuse.
    final class DriftingHash: Hashable, @unchecked Sendable {
        private let calls = NSLock()
        private var count = 0
        static func == (lhs: DriftingHash, rhs: DriftingHash) -> Bool { lhs === rhs }
        func hash(into hasher: inout Hasher) {
            calls.lock()
            count += 1
            let seen = count
            calls.unlock()
            hasher.combine(seen)
        }
    }

    @Test func argumentsOfOneTypeAreOneWhenTheirValuesAreEqualByThatTypesEquality() {
        let first: RegistrationKey.Argument = RegistrationKey.TypedArgument(OrderID(number: 7, note: "first"))
        let again: RegistrationKey.Argument = RegistrationKey.TypedArgument(OrderID(number: 7, note: "again"))
        let other: RegistrationKey.Argument = RegistrationKey.TypedArgument(OrderID(number: 8, note: "first"))
        #expect(first == again && first.hash == again.hash)
        #expect(first != other)
        #expect((first.value as? OrderID)?.note == "first", "the value comes back as its type")
    }

    @Test func argumentsOfDifferentTypesAreNeverOne() {
        let int: RegistrationKey.Argument = RegistrationKey.TypedArgument(1 as Int)
        let byte: RegistrationKey.Argument = RegistrationKey.TypedArgument(1 as UInt8)
        let long: RegistrationKey.Argument = RegistrationKey.TypedArgument(1 as Int64)
        #expect(int != byte && byte != int)
        #expect(int != long && AnyHashable(1 as Int) == AnyHashable(1 as Int64), "AnyHashable takes them for one")
        #expect(int == RegistrationKey.TypedArgument(1 as Int) as RegistrationKey.Argument)
    }

    @Test func theCheckOfAnArgumentFindsAValueNotEqualToItselfAndAHashThatDrifts() {
        #expect(RegistrationKey.TypedArgument(3 as Int).checkedAgain == (true, true))
        #expect(RegistrationKey.TypedArgument(Double.nan).checkedAgain.equalToItself == false)
        #expect(RegistrationKey.TypedArgument(DriftingHash()).checkedAgain.sameHash == false)
    }
}
