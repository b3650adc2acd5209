import DependencyInjection
import Testing

/// A value type no registration reads, stored where a `String` is asked for.
private struct WrongTypeToken: Sendable, Equatable { let raw: String }

/// Promises of less-visited doc comments that no other test pinned.
///
/// 1. Sources/DependencyInjection/Container/DependencyContainer+Values.swift:20-25
///    (`getValue(forKey:)`): "Returns the value stored under `key`, looking in the parent
///    when this container has none. The result type decides what is accepted: a value
///    stored as another type reads as `nil`." With
///    Sources/DependencyInjection/Container/DependencyContainer.swift:42-43 (`parent`):
///    "Lookups of values and overrides walk from a container up through its parents, and
///    the first one found wins." A child's value of another type is the one found: it
///    reads as `nil`, and the parent's value of the asked type does not show through
///    until the child's is removed.
@Suite struct LessVisitedPromiseTests {
    @Test func aChildsValueOfAnotherTypeReadsAsNilRatherThanTheParentsValue() {
        let parent = DependencyContainer()
        parent.setValue("ext-parent", forKey: "extKey")
        let child = DependencyContainer(parent: parent)
        #expect((child.getValue(forKey: "extKey") as String?) == "ext-parent")

        child.setValue(WrongTypeToken(raw: "ext-child"), forKey: "extKey")
        #expect((child.getValue(forKey: "extKey") as String?) == nil)
        #expect((child.getValue(forKey: "extKey") as WrongTypeToken?) == WrongTypeToken(raw: "ext-child"))
        #expect((parent.getValue(forKey: "extKey") as String?) == "ext-parent")

        child.removeValue(forKey: "extKey")
        #expect((child.getValue(forKey: "extKey") as String?) == "ext-parent")
    }

    @Test func aGrandchildFindsTheNearestValueEvenOfAnotherType() {
        let root = DependencyContainer()
        root.setValue("ext-root", forKey: "extKey")
        let middle = DependencyContainer(parent: root)
        middle.setValue(7, forKey: "extKey")
        let leaf = DependencyContainer(parent: middle)
        #expect((leaf.getValue(forKey: "extKey") as String?) == nil)
        #expect((leaf.getValue(forKey: "extKey") as Int?) == 7)
    }
}
