import DependencyInjection
import Foundation
import Testing

final class GenericArgumentCache: Sendable {
    let label: String
    init(_ label: String) { self.label = label }
}

extension DependencyContainer {
    /// One registration for every argument type: each argument, of whichever type, is a
    /// registration of its own.
    subscript<ID: Hashable & Sendable>(genericArgumentCache id: ID) -> Provider<GenericArgumentCache> {
        singleton(id) { GenericArgumentCache("\(ID.self):\(id)") }
    }
}

@Suite struct GenericArgumentTypeIdentityTests {
    /// `Int(1)` and `UInt8(1)` are different arguments (different types, different key
    /// paths); each must get its own instance, built by its own closure.
    @Test func argumentsOfDifferentTypesWithTheSameNumericValueAreDifferentArguments() {
        let container = DependencyContainer()
        let wide = container[genericArgumentCache: 1 as Int]
        let narrow = container[genericArgumentCache: 1 as UInt8]
        let wideInstance = wide()
        let narrowInstance = narrow()
        #expect(wideInstance.label == "Int:1")
        #expect(narrowInstance.label == "UInt8:1", "UInt8(1) was served the instance built for Int(1)")
        #expect(wideInstance !== narrowInstance)
    }

    @Test func anOverrideOfOneArgumentTypeDoesNotReplaceAnother() {
        let container = DependencyContainer()
        container.override(\.[genericArgumentCache: 2 as Int]) { GenericArgumentCache("override") }
        #expect(container[genericArgumentCache: 2 as Int]().label == "override")
        #expect(container[genericArgumentCache: 2.0 as Double]().label == "Double:2.0", "the Int override reached a Double argument")
    }
}
