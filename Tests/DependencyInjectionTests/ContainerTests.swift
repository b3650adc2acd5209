import DependencyInjection
import Testing

@Suite struct ContainerTests {
    // MARK: - Key-value storage

    @Test func storedValuesReadBackWithTheirType() {
        let container = DependencyContainer()
        container.setValue("Test!", forKey: "string")
        container.setValue(10, forKey: "int")

        let string: String? = container.getValue(forKey: "string")
        let int: Int? = container.getValue(forKey: "int")
        let float: Float? = container.getValue(forKey: "int")
        let missing: String? = container.getValue(forKey: "missing")

        #expect(string == "Test!")
        #expect(int == 10)
        #expect(float == nil)
        #expect(missing == nil)
    }

    @Test func setValueReplacesAndRemoveValueRemoves() {
        let container = DependencyContainer()
        container.setValue(1, forKey: "n")
        container.setValue(2, forKey: "n")
        #expect(container.getValue(forKey: "n") == 2)

        container.removeValue(forKey: "n")
        #expect((container.getValue(forKey: "n") as Int?) == nil)
    }

    @Test func removeAllClearsValuesOnly() {
        let container = DependencyContainer(isMocked: true)
        container.setValue("a", forKey: "a")
        container.setValue("b", forKey: "b")
        container.removeAll()
        #expect((container.getValue(forKey: "a") as String?) == nil)
        #expect((container.getValue(forKey: "b") as String?) == nil)
        #expect(container.isMocked)
    }

    @Test func registrationsReadStoredValues() {
        let container = DependencyContainer()
        #expect(container.token == nil)
        container.setValue("secret", forKey: "token")
        #expect(container.token == "secret")
    }

    // MARK: - Static containers and isMocked

    @Test func mocksIsMockedAndDefaultIsNot() {
        #expect(DependencyContainer.mocks.isMocked)
        #expect(!DependencyContainer.default.isMocked)
        #expect(DependencyContainer.mocks !== DependencyContainer.default)
        #expect(!DependencyContainer().isMocked)
    }

    @Test func registrationsBranchOnIsMocked() {
        #expect(DependencyContainer.mocks.baseURL == "http://localhost:8080")
        #expect(DependencyContainer.default.baseURL == "https://api.example.com")
        #expect(DependencyContainer(isMocked: true).baseURL == "http://localhost:8080")
    }

    // MARK: - Child containers

    @Test func childReadsParentValuesAndInheritsIsMocked() {
        let parent = DependencyContainer(isMocked: true)
        parent.setValue("parent", forKey: "who")
        let child = DependencyContainer(parent: parent)

        #expect(child.isMocked)
        #expect(child.parent === parent)
        #expect(child.getValue(forKey: "who") == "parent")
        #expect(DependencyContainer(parent: DependencyContainer()).isMocked == false)
    }

    @Test func childValuesShadowParentAndNeverReachIt() {
        let parent = DependencyContainer()
        parent.setValue("parent", forKey: "who")
        let child = DependencyContainer(parent: parent)

        child.setValue("child", forKey: "who")
        child.setValue(1, forKey: "only-child")
        #expect(child.getValue(forKey: "who") == "child")
        #expect(parent.getValue(forKey: "who") == "parent")
        #expect((parent.getValue(forKey: "only-child") as Int?) == nil)

        child.removeValue(forKey: "who")
        #expect(child.getValue(forKey: "who") == "parent")
        child.removeAll()
        #expect(parent.getValue(forKey: "who") == "parent")
    }

    @Test func grandchildSeesWholeChain() {
        let root = DependencyContainer()
        root.setValue("root", forKey: "r")
        let middle = DependencyContainer(parent: root)
        middle.setValue("middle", forKey: "m")
        let leaf = DependencyContainer(parent: middle)
        #expect(leaf.getValue(forKey: "r") == "root")
        #expect(leaf.getValue(forKey: "m") == "middle")
    }

    @Test func parentDoesNotKeepChildrenAlive() {
        let parent = DependencyContainer()
        weak var weakChild: DependencyContainer?
        do {
            let child = DependencyContainer(parent: parent)
            weakChild = child
            #expect(weakChild != nil)
        }
        #expect(weakChild == nil)
    }
}
