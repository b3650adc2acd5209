// A main-actor app with one screen model per account, each built from that account's
// settings. A test that overrides one account's settings gets that account's model
// rebuilt, and keeps the model the app built for every other account.
import DependencyInjection
import Observation
import Testing

struct ASSettings {
    let currency: String
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable final class ASAccountScreenModel {
    let account: Int
    let settings: ASSettings
    var isLoading = false

    init(account: Int, settings: ASSettings) {
        self.account = account
        self.settings = settings
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension DependencyContainer {
    subscript(asSettings account: Int) -> Provider<ASSettings> {
        singleton(account) { @MainActor in ASSettings(currency: "EUR") }
    }
    subscript(asScreenModel account: Int) -> Provider<ASAccountScreenModel> {
        singleton(account) { @MainActor in
            ASAccountScreenModel(account: account, settings: self[asSettings: account]())
        }
    }
}

@Suite struct AccountScreensTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func overridingOneAccountsSettingsRebuildsOnlyThatAccountsModel() {
        let world = DependencyContainer()
        let first = world[asScreenModel: 1]()
        let second = world[asScreenModel: 2]()
        first.isLoading = true
        world.override(\.[asSettings: 2]) { @MainActor in ASSettings(currency: "USD") }
        #expect(world[asScreenModel: 1]() === first)
        #expect(world[asScreenModel: 1]().isLoading)
        let rebuilt = world[asScreenModel: 2]()
        #expect(rebuilt !== second)
        #expect(rebuilt.settings.currency == "USD")
    }
}
