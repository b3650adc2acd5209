import DependencyInjection
import Testing

/// A menu level, built from the level below it.
final class ALSMenu: Sendable {
    let level: Int
    let submenu: ALSMenu?
    init(level: Int, submenu: ALSMenu? = nil) { (self.level, self.submenu) = (level, submenu) }
}

extension DependencyContainer {
    /// A subscript whose `factory` does not take the argument: one registration.
    subscript(alsLabel level: Int) -> Provider<ALSMenu> { factory { ALSMenu(level: level) } }
    /// The same with `singleton`: one instance for every argument.
    subscript(alsShared level: Int) -> Provider<ALSMenu> { singleton { ALSMenu(level: level) } }
    /// The recursion of Scopes.md, written without passing the argument to `factory`.
    subscript(alsMenu level: Int) -> Provider<ALSMenu> {
        factory { ALSMenu(level: level, submenu: level > 0 ? self[alsMenu: level - 1]() : nil) }
    }
}

/// Pins RegisteringDependencies.md and Scopes.md: "A subscript whose scope function does
/// not take the argument is one registration for every argument: one override replaces
/// them all, a construction that resolves the subscript with another argument is
/// reported as a cycle".
@Suite struct ArgumentlessSubscriptTests {
    @Test func oneOverrideReplacesEveryArgument() {
        let container = DependencyContainer()
        #expect(container[alsLabel: 1]().level == 1)
        container.override(\.[alsLabel: 3]) { ALSMenu(level: -1) }
        #expect(container[alsLabel: 3]().level == -1)
        #expect(container[alsLabel: 2]().level == -1, "the override of one argument did not reach another")
        #expect(container[alsLabel: 99]().level == -1, "the override of one argument did not reach another")
    }

    @Test func aSingletonIsOneInstanceForEveryArgument() {
        let container = DependencyContainer()
        let first = container[alsShared: 1]()
        #expect(container[alsShared: 2]() === first)
        #expect(first.level == 1)
    }

    @Test func aConstructionThatResolvesAnotherArgumentIsReportedAsACycle() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("an argumentless subscript that resolves itself with another argument")
            _ = DependencyContainer()[alsMenu: 3]()
        }
        let output = standardError(of: result)
        let cycle = CycleChain(result)
        #expect(cycle != nil, "\(output)")
        #expect(cycle?.names.allSatisfy { $0 == "subscript(alsMenu:)" } == true, "\(output)")
        #expect(cycle?.names.count == 2, "\(output)")
        #expect(cycle?.locatesEveryLink(in: "DependencyInjectionTests/ArgumentlessSubscriptTests.swift") == true,
                "\(output)")
    }
}
