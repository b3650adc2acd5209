import DependencyInjection
import Foundation
import Testing

final class TypedArgumentBox: Sendable {
    let label: String
    init(_ label: String) { self.label = label }
}

final class TypedArgumentConsumer: Sendable {
    let box: TypedArgumentBox
    init(_ box: TypedArgumentBox) { self.box = box }
}

/// A hashable class whose subclasses compare with the base's `==`.
class TypedArgumentAccount: Hashable, @unchecked Sendable {
    let id: Int
    init(_ id: Int) { self.id = id }
    static func == (lhs: TypedArgumentAccount, rhs: TypedArgumentAccount) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
final class TypedArgumentPremiumAccount: TypedArgumentAccount, @unchecked Sendable {}

protocol TypedArgumentKeyish: Hashable, Sendable {}
extension Int: TypedArgumentKeyish {}
extension UInt8: TypedArgumentKeyish {}

extension DependencyContainer {
    subscript<ID: Hashable & Sendable>(typedArgumentCache id: ID) -> Provider<TypedArgumentBox> {
        singleton(id) { TypedArgumentBox("\(ID.self):\(id)") }
    }
    subscript<ID: Hashable & Sendable>(typedArgumentShared id: ID) -> Provider<TypedArgumentBox> {
        shared(id) { TypedArgumentBox("\(ID.self):\(id)") }
    }
    /// Built from the `Int` argument 1 only.
    var typedArgumentIntConsumer: Provider<TypedArgumentConsumer> { singleton { TypedArgumentConsumer(self[typedArgumentCache: 1 as Int]()) } }

    var typedArgumentAccounts: ProviderFamily<TypedArgumentAccount, TypedArgumentBox> { singleton { account in TypedArgumentBox("account \(account.id)") } }

    /// `Int` 1 resolves `UInt8` 1, which resolves `Int` 1: a cycle.
    subscript<ID: Hashable & Sendable>(typedArgumentLoop id: ID) -> Provider<TypedArgumentBox> {
        singleton(id) {
            if let wide = id as? Int { return TypedArgumentBox(self[typedArgumentLoop: UInt8(wide)]().label) }
            if let narrow = id as? UInt8 { return TypedArgumentBox(self[typedArgumentLoop: Int(narrow)]().label) }
            return TypedArgumentBox("leaf")
        }
    }

    /// A member for an `Int` resolves the member for the `UInt8` of the same value: no
    /// cycle, two registrations' instances.
    subscript<ID: Hashable & Sendable>(typedArgumentHop id: ID) -> Provider<TypedArgumentBox> {
        singleton(id) {
            if let wide = id as? Int { return TypedArgumentBox("wide over " + self[typedArgumentHop: UInt8(wide)]().label) }
            return TypedArgumentBox("\(ID.self):\(id)")
        }
    }
}

/// Resolves through a generic context: the argument's type there is the caller's.
func typedArgumentResolveGenerically<T: Hashable & Sendable>(_ container: DependencyContainer, _ id: T) -> TypedArgumentBox {
    container[typedArgumentCache: id]()
}

/// Resolves through a generic context constrained to a protocol of the test's.
func typedArgumentResolveKeyish<T: TypedArgumentKeyish>(_ container: DependencyContainer, _ id: T) -> TypedArgumentBox {
    container[typedArgumentCache: id]()
}

@Suite struct ArgumentTypeIdentityAttackTests {
    @Test func aGenericHelperResolvesTheSameArgumentAsADirectCall() {
        let container = DependencyContainer()
        let direct = container[typedArgumentCache: 7]()
        #expect(typedArgumentResolveGenerically(container, 7) === direct)
        #expect(typedArgumentResolveKeyish(container, 7) === direct)
        #expect(typedArgumentResolveGenerically(container, UInt8(7)) !== direct)
    }

    @Test func anExistentialArgumentIsOpenedToItsDynamicType() {
        let container = DependencyContainer()
        let direct = container[typedArgumentCache: 9]()
        let erased: any Hashable & Sendable = 9
        #expect(container[typedArgumentCache: erased]() === direct)
        #expect(typedArgumentResolveGenerically(container, erased) === direct)
    }

    @Test func anOverrideThroughAGenericHelperReachesTheDirectCall() {
        let container = DependencyContainer()
        func install<T: Hashable & Sendable>(_ id: T) {
            container.override(\.[typedArgumentCache: id]) { TypedArgumentBox("override") }
        }
        install(4)
        #expect(container[typedArgumentCache: 4]().label == "override")
        #expect(container[typedArgumentCache: UInt8(4)]().label == "UInt8:4")
        container.reset(\.[typedArgumentCache: UInt8(4)])
        #expect(container[typedArgumentCache: 4]().label == "override", "resetting the UInt8 argument dropped the Int override")
        container.reset(\.[typedArgumentCache: 4])
        #expect(container[typedArgumentCache: 4]().label == "Int:4")
    }

    @Test func instanceIfBuiltTellsTypesApart() {
        let container = DependencyContainer()
        _ = container[typedArgumentCache: 3]()
        #expect(container.instanceIfBuilt(\.[typedArgumentCache: 3])?.label == "Int:3")
        #expect(container.instanceIfBuilt(\.[typedArgumentCache: UInt8(3)]) == nil)
        #expect(container.instanceIfBuilt(\.[typedArgumentCache: Int64(3)]) == nil)
        _ = container[typedArgumentCache: UInt8(3)]()
        #expect(container.instanceIfBuilt(\.[typedArgumentCache: UInt8(3)])?.label == "UInt8:3")
    }

    /// An override of the `Int` argument reaches what was built from it; one of the
    /// `UInt8` argument leaves the `Int` argument's instance itself alone.
    @Test func anOverrideOfOneArgumentTypeRebuildsWhatTheOtherBuiltFromTheRightOne() {
        let container = DependencyContainer()
        _ = container.typedArgumentIntConsumer()
        container.override(\.[typedArgumentCache: UInt8(1)]) { TypedArgumentBox("narrow override") }
        #expect(container.typedArgumentIntConsumer().box.label == "Int:1")
        container.override(\.[typedArgumentCache: 1 as Int]) { TypedArgumentBox("wide override") }
        #expect(container.typedArgumentIntConsumer().box.label == "wide override")
        container.reset(\.[typedArgumentCache: UInt8(1)])
        #expect(container.typedArgumentIntConsumer().box.label == "wide override")
    }

    /// A cycle through one value under two types: the message must tell the steps apart.
    @Test func aCycleThroughOneValueOfTwoTypesNamesTheTypes() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle through one value of two types")
            _ = DependencyContainer()[typedArgumentLoop: 1 as Int]()
        }
        let output = standardError(of: result)
        #expect(output.contains("Circular dependency"), "\(output)")
        #expect(output.contains("UInt8"), "the message does not tell 1 as Int from 1 as UInt8: \(output)")
    }

    @Test func aMemberResolvingTheSameValueOfAnotherTypeIsNoCycle() {
        let container = DependencyContainer()
        #expect(container[typedArgumentHop: 5]().label == "wide over UInt8:5")
        #expect(container[typedArgumentHop: UInt8(5)]().label == "UInt8:5")
    }

    @Test func sharedInstancesOfCollidingArgumentsAreSweptOnTheirOwn() {
        let container = DependencyContainer()
        var wide: TypedArgumentBox? = container[typedArgumentShared: 2]()
        let narrow = container[typedArgumentShared: UInt8(2)]()
        let long = container[typedArgumentShared: Int64(2)]()
        #expect(wide !== narrow && narrow !== long)
        wide = nil
        // Churn other arguments so dead instances are swept.
        for value in 0..<200 { _ = container[typedArgumentShared: UInt16(value)]() }
        #expect(container[typedArgumentShared: UInt8(2)]() === narrow)
        #expect(container[typedArgumentShared: Int64(2)]() === long)
        #expect(container[typedArgumentShared: 2]().label == "Int:2")
        _ = wide
    }

    @Test func manyCollidingArgumentTypesEachGetTheirOwnInstance() {
        let container = DependencyContainer()
        var seen: [ObjectIdentifier: String] = [:]
        for value in 0..<64 {
            let boxes = [
                container[typedArgumentCache: value](), container[typedArgumentCache: Int8(value)](), container[typedArgumentCache: UInt8(value)](),
                container[typedArgumentCache: Int16(value)](), container[typedArgumentCache: UInt32(value)](),
                container[typedArgumentCache: Double(value)](), container[typedArgumentCache: Float(value)](),
                container[typedArgumentCache: Optional(value)](),
            ]
            for box in boxes { seen[ObjectIdentifier(box), default: ""] += box.label }
        }
        #expect(seen.count == 64 * 8)
        for value in 0..<64 {
            #expect(container[typedArgumentCache: UInt8(value)]().label == "UInt8:\(value)")
            #expect(container[typedArgumentCache: Float(value)]().label == "Float:\(Float(value))")
        }
    }

    /// The family's argument is the base class: a subclass instance is that argument,
    /// wherever the key is built (call, one argument's override, the family's override).
    @Test func aSubclassArgumentOfABaseClassFamilyIsOneArgumentEverywhere() {
        let container = DependencyContainer()
        let premium = TypedArgumentPremiumAccount(1)
        let plain = TypedArgumentAccount(1)
        let viaPremium = container.typedArgumentAccounts(premium)
        #expect(container.typedArgumentAccounts(plain) === viaPremium)
        container.override(\.typedArgumentAccounts[premium]) { TypedArgumentBox("one") }
        #expect(container.typedArgumentAccounts(plain).label == "one")
        #expect(container.instanceIfBuilt(\.typedArgumentAccounts[plain])?.label == "one")
        container.reset(\.typedArgumentAccounts)
        container.override(\.typedArgumentAccounts) { account in TypedArgumentBox("family \(type(of: account)) \(account.id)") }
        #expect(container.typedArgumentAccounts(premium).label == "family TypedArgumentPremiumAccount 1")
        #expect(container.typedArgumentAccounts(TypedArgumentAccount(2)).label == "family TypedArgumentAccount 2")
    }

    /// One object passed to a generic subscript under its own class and under its base
    /// class: the subscript takes it as two types, so as two arguments, as it takes
    /// `1 as Int` and `1 as UInt8` (their key paths differ too). A provider family over the
    /// base class takes both as one (above).
    @Test func oneObjectUnderTwoStaticTypesIsTwoArgumentsOfAGenericSubscript() {
        let container = DependencyContainer()
        let premium = TypedArgumentPremiumAccount(1)
        let asItself = container[typedArgumentCache: premium]()
        let asBase = container[typedArgumentCache: premium as TypedArgumentAccount]()
        #expect(asItself !== asBase)
        #expect(container[typedArgumentCache: premium]() === asItself)
    }

    @Test func anOptionalAndItsWrappedValueAreTwoArguments() {
        let container = DependencyContainer()
        let wrapped = container[typedArgumentCache: 1]()
        let optional = container[typedArgumentCache: Optional(1)]()
        #expect(wrapped !== optional)
        #expect(optional.label == "Optional<Int>:Optional(1)")
    }

    /// A scope overrides the `Int` argument and shares the app's instance for the `UInt8` one.
    @Test func aScopeOverridingOneArgumentTypeSharesTheOther() {
        let app = DependencyContainer()
        let appNarrow = app[typedArgumentCache: UInt8(6)]()
        let appWide = app[typedArgumentCache: 6]()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.[typedArgumentCache: 6]) { TypedArgumentBox("scoped") }
        #expect(scope[typedArgumentCache: 6]().label == "scoped")
        #expect(scope[typedArgumentCache: UInt8(6)]() === appNarrow)
        #expect(app[typedArgumentCache: 6]() === appWide)
    }

    /// Threads released together resolve the same values under many types: each type's
    /// instance is one across threads.
    @Test func collidingArgumentTypesUnderConcurrentFirstBuilds() async {
        let container = DependencyContainer()
        let results = Collected<(String, ObjectIdentifier)>()
        let finished = await concurrentlyOffThePool(threads: 8) { index in
            for value in 0..<50 {
                let box: TypedArgumentBox
                switch (index + value) % 4 {
                case 0: box = container[typedArgumentShared: value]()
                case 1: box = container[typedArgumentShared: UInt8(value)]()
                case 2: box = container[typedArgumentShared: Int64(value)]()
                default: box = container[typedArgumentShared: Double(value)]()
                }
                results.append((box.label, ObjectIdentifier(box)))
                withExtendedLifetime(box) {}
            }
        }
        #expect(finished)
        var byLabel: [String: Set<ObjectIdentifier>] = [:]
        for (label, id) in results.takeAll() { byLabel[label, default: []].insert(id) }
        #expect(byLabel.count == 200)
    }
}
