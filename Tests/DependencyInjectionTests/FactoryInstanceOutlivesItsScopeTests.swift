import DependencyInjection
import Foundation
import Testing

final class OutlivingFactoryStore: Sendable {
    let user: String
    init(user: String) { self.user = user }
}

final class OutlivingFactoryModel: @unchecked Sendable {
    @Dependency(\.outlivingFactoryStore) var store
    @Dependency(\.outlivingFactoryUser) var user
}

extension DependencyContainer {
    var outlivingFactoryUser: Provider<String> { unimplemented() }
    var outlivingFactoryStore: Provider<OutlivingFactoryStore> { scoped { OutlivingFactoryStore(user: self.outlivingFactoryUser()) } }
    var outlivingFactoryModel: Provider<OutlivingFactoryModel> { factory { OutlivingFactoryModel() } }
    var outlivingFactoryGraphModel: Provider<OutlivingFactoryModel> { graph { OutlivingFactoryModel() } }
}

/// A factory's instance is not kept by its container, so its `@Dependency` properties keep
/// the container that built it: the scope may be dropped before their first read.
@Suite struct FactoryInstanceOutlivesItsScopeTests {
    @Test func aFactoryModelBuiltByADroppedScopeReadsItsPropertiesFromThatScope() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("a factory model's first read")
            func makeModel() -> OutlivingFactoryModel {
                let scope = DependencyContainer(scopeOf: DependencyContainer())
                scope.override(\.outlivingFactoryUser) { "ada" }
                return scope.outlivingFactoryModel()
            }
            let model = makeModel()
            precondition(model.user == "ada")
            precondition(model.store.user == "ada")
        }
    }

    @Test func aFactoryModelBuiltByADroppedWorldReadsItsPropertiesFromThatWorld() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("a factory model's first read")
            func makeModel() -> OutlivingFactoryModel {
                let world = DependencyContainer(parent: DependencyContainer())
                world.override(\.outlivingFactoryUser) { "bob" }
                return world.outlivingFactoryModel()
            }
            let model = makeModel()
            precondition(model.user == "bob")
        }
    }

    @Test func aGraphModelBuiltOutsideAnyResolutionByADroppedScope() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("a graph model's first read")
            func makeModel() -> OutlivingFactoryModel {
                let scope = DependencyContainer(scopeOf: DependencyContainer())
                scope.override(\.outlivingFactoryUser) { "cy" }
                return scope.outlivingFactoryGraphModel()
            }
            let model = makeModel()
            precondition(model.user == "cy")
        }
    }
}
