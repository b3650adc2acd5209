import DependencyInjection
import Foundation
import Testing

struct AccountID: Hashable, Sendable {
    let raw: Int
    init(_ raw: Int) { self.raw = raw }
}

protocol AccountSession: AnyObject, Sendable {
    var account: AccountID { get }
    var source: String { get }
}

final class LiveAccountSession: AccountSession {
    let account: AccountID
    let source = "live"
    init(account: AccountID) { self.account = account }
}

final class StubAccountSession: AccountSession {
    let account: AccountID
    let source: String
    init(account: AccountID, source: String = "stub") {
        self.account = account
        self.source = source
    }
}

final class Mailbox: Sendable {
    let session: any AccountSession
    init(session: any AccountSession) { self.session = session }
}

/// A main-actor object that is not `Sendable`.
final class DraftEditor {
    let id: Int
    var text = ""
    init(id: Int, text: String = "") {
        self.id = id
        self.text = text
    }
}

private let alice = AccountID(1)
private let bob = AccountID(2)

extension DependencyContainer {
    /// One session per account, counted per account.
    var accountSession: ProviderFamily<AccountID, any AccountSession> {
        singleton { (account: AccountID) in
            self.count("accountSession.\(account.raw)")
            return LiveAccountSession(account: account)
        }
    }

    /// A singleton built from a family singleton.
    var aliceMailbox: Provider<Mailbox> {
        singleton {
            self.count("aliceMailbox")
            return Mailbox(session: self.accountSession(alice))
        }
    }

    /// A singleton family built from another family, argument for argument.
    var mailbox: ProviderFamily<AccountID, Mailbox> {
        singleton { (account: AccountID) in Mailbox(session: self.accountSession(account)) }
    }

    var accountGreeting: ProviderFamily<AccountID, String> {
        factory { (account: AccountID) in "hello \(account.raw)" }
    }

    var avatarCache: ProviderFamily<Int, ImageCache> {
        shared { (size: Int) in
            self.count("avatarCache")
            return ImageCache()
        }
    }

    /// Counts down through itself: each argument is its own registration.
    var familyCountdown: ProviderFamily<Int, Int> {
        factory { (n: Int) in n == 0 ? 0 : 1 + self.familyCountdown(n - 1) }
    }

    /// Builds a session for an account only once the test lets it.
    var gatedAccountSession: ProviderFamily<AccountID, any AccountSession> {
        singleton { (account: AccountID) in
            (self.getValue(forKey: "gate") as ConstructionGate?)?.enterAndWait()
            return LiveAccountSession(account: account)
        }
    }

    @MainActor var draftEditor: ProviderFamily<Int, DraftEditor> {
        singleton { @MainActor (id: Int) in DraftEditor(id: id) }
    }

    /// `familyCycleHead` needs `familyCycleLink(1)`, which needs `familyCycleHead`.
    var familyCycleHead: Provider<Int> { singleton { self.familyCycleLink(1) } }
    var familyCycleLink: ProviderFamily<Int, Int> { factory { (_: Int) in self.familyCycleHead() } }
}

/// A registration with an argument that is one property, `ProviderFamily`: overridden for
/// every argument with a closure that receives it, and reset for all at once.
@Suite struct ProviderFamilyTests {
    // MARK: - Resolution

    @Test func eachArgumentResolvesItsOwnSingletonBuiltOnce() {
        let container = DependencyContainer()
        let builds = container.counter("accountSession.1")
        let first = container.accountSession(alice)
        #expect(first.account == alice)
        #expect(container.accountSession(alice) === first)
        #expect(container.accountSession[alice]() === first)
        #expect(container.accountSession(bob) !== first)
        #expect(container.accountSession(bob).account == bob)
        #expect(builds.count == 1)
        #expect(container.instanceIfBuilt(\.accountSession[alice]) === first)
        #expect(container.instanceIfBuilt(\.accountSession[AccountID(3)]) == nil)
    }

    @Test func aRecursiveFamilyResolvesEveryArgumentDownToZero() {
        #expect(DependencyContainer().familyCountdown(20) == 20)
    }

    @Test func aSharedFamilyKeepsOneLiveInstancePerArgument() {
        let container = DependencyContainer()
        let builds = container.counter("avatarCache")
        let small = container.avatarCache(32)
        #expect(container.avatarCache(32) === small)
        #expect(container.avatarCache(64) !== small)
        #expect(builds.count == 2)
    }

    @Test func argumentlessClosuresStillMakeProviders() {
        let container = DependencyContainer()
        let number = container.factory { 1 }
        let shared = container.shared { ImageCache() }
        let single = container.singleton { "one" }
        #expect(number() == 1)
        #expect(shared() === shared())
        #expect(single() == "one")
    }

    @Test func aDependencyPropertyResolvesOneArgument() {
        let container = DependencyContainer()
        final class Screen {
            @Dependency var session: any AccountSession
            init(_ container: DependencyContainer) {
                _session = Dependency(\.accountSession[bob], container: container)
            }
        }
        #expect(Screen(container).session === container.accountSession(bob))
    }

    @Test func aTraceNamesTheFamilyForEachArgumentAndItsOverride() {
        let container = DependencyContainer()
        let events = Collected<String>()
        container.tracer = ResolutionTracer { batch in
            for event in batch { events.append("\(event.name) \(event.scope) \(event.outcome.rawValue)") }
        }
        _ = container.accountSession(alice)
        container.override(\.accountSession) { account in StubAccountSession(account: account) }
        _ = container.accountSession(bob)
        _ = container.accountSession(bob)
        #expect(events.values == [
            "accountSession singleton built", "accountSession singleton built from override",
            "accountSession singleton cached",
        ])
    }

    @MainActor @Test func aMainActorFamilyKeepsValuesThatAreNotSendableAndTakesAMainActorOverride() {
        let container = DependencyContainer()
        let first = container.draftEditor(1)
        #expect(container.draftEditor(1) === first)
        #expect(container.draftEditor(2).id == 2)
        container.override(\.draftEditor) { @MainActor id in DraftEditor(id: id, text: "stub") }
        #expect(container.draftEditor(1) !== first)
        #expect(container.draftEditor(1).text == "stub")
        #expect(container.draftEditor(3).id == 3)
    }

    // MARK: - Overriding the whole family

    @Test func theFamilyOverrideReceivesTheArgumentItBuildsFor() {
        let container = DependencyContainer()
        container.override(\.accountSession) { account in StubAccountSession(account: account) }
        #expect(container.accountSession(alice).account == alice)
        #expect(container.accountSession(bob).account == bob)
        #expect(container.accountSession(alice).source == "stub")
        #expect(container.accountSession(alice) === container.accountSession(alice))
    }

    @Test func theFamilyOverrideReachesEveryArgumentAndNoOtherContainer() {
        let parent = DependencyContainer()
        let overridden = DependencyContainer(parent: parent)
        let sibling = DependencyContainer(parent: parent)
        overridden.override(\.accountGreeting) { account in "stub \(account.raw)" }
        #expect((1...5).map { overridden.accountGreeting(AccountID($0)) } == (1...5).map { "stub \($0)" })
        #expect(sibling.accountGreeting(alice) == "hello 1")
        #expect(parent.accountGreeting(bob) == "hello 2")
    }

    @Test func aFactoryArgumentOverrideDoesNotLeakToOtherArguments() {
        let container = DependencyContainer()
        container.override(\.accountGreeting[alice]) { "only alice" }
        #expect(container.accountGreeting(alice) == "only alice")
        #expect(container.accountGreeting(bob) == "hello 2")
    }

    @Test func cachedSingletonsOfEveryArgumentAreDroppedByAFamilyOverride() {
        let container = DependencyContainer()
        let liveAlice = container.accountSession(alice)
        let liveBob = container.accountSession(bob)
        container.override(\.accountSession) { account in StubAccountSession(account: account) }
        let stubAlice = container.accountSession(alice)
        #expect(stubAlice !== liveAlice && stubAlice.source == "stub")
        #expect(container.accountSession(bob) !== liveBob)
        #expect(container.accountSession(bob).source == "stub")
        #expect(container.accountSession(alice) === stubAlice)
    }

    @Test func singletonsBuiltFromAFamilySingletonAreRebuiltOnAFamilyOverride() {
        let container = DependencyContainer()
        let builds = container.counter("aliceMailbox")
        #expect(container.aliceMailbox().session.source == "live")
        #expect(container.mailbox(bob).session.source == "live")
        container.override(\.accountSession) { account in StubAccountSession(account: account) }
        #expect(container.aliceMailbox().session.source == "stub")
        #expect(container.mailbox(bob).session.source == "stub")
        #expect(container.mailbox(bob).session.account == bob)
        #expect(builds.count == 2)
    }

    @Test func anInstanceInFlightDuringAFamilyOverrideIsHandedOutButNotKept() {
        let container = DependencyContainer()
        let gate = ConstructionGate()
        container.setValue(gate, forKey: "gate")
        let handedOut = Collected<any AccountSession>()
        let done = DispatchSemaphore(value: 0)
        Thread {
            handedOut.append(container.gatedAccountSession(alice))
            done.signal()
        }.start()
        gate.entered.wait()
        container.override(\.gatedAccountSession) { account in StubAccountSession(account: account) }
        gate.open()
        done.wait()
        container.removeValue(forKey: "gate")  // later constructions go through
        #expect(handedOut.values.first?.source == "live")
        #expect(container.gatedAccountSession(alice).source == "stub")
    }

    // MARK: - Overriding one argument

    @Test func anArgumentOverrideWinsOverTheFamilyOverrideWhicheverCameFirst() {
        let argumentFirst = DependencyContainer()
        argumentFirst.override(\.accountSession[alice]) { StubAccountSession(account: alice, source: "alice") }
        argumentFirst.override(\.accountSession) { account in StubAccountSession(account: account) }
        let familyFirst = DependencyContainer()
        familyFirst.override(\.accountSession) { account in StubAccountSession(account: account) }
        _ = familyFirst.accountSession(alice)
        familyFirst.override(\.accountSession[alice]) { StubAccountSession(account: alice, source: "alice") }
        for container in [argumentFirst, familyFirst] {
            #expect(container.accountSession(alice).source == "alice")
            #expect(container.accountSession(bob).source == "stub")
        }
    }

    @Test func resettingOneArgumentFallsBackToTheFamilyOverride() {
        let container = DependencyContainer()
        container.override(\.accountSession) { account in StubAccountSession(account: account) }
        container.override(\.accountSession[alice]) { StubAccountSession(account: alice, source: "alice") }
        #expect(container.accountSession(alice).source == "alice")
        container.reset(\.accountSession[alice])
        #expect(container.accountSession(alice).source == "stub")
    }

    @Test func aChildsFamilyOverrideWinsOverItsParentsArgumentOverride() {
        let parent = DependencyContainer()
        parent.override(\.accountSession[alice]) { StubAccountSession(account: alice, source: "parent") }
        let child = DependencyContainer(parent: parent)
        child.override(\.accountSession) { account in StubAccountSession(account: account, source: "child") }
        #expect(parent.accountSession(alice).source == "parent")
        #expect(child.accountSession(alice).source == "child")
    }

    // MARK: - Reset

    @Test func resettingTheFamilyRemovesEveryOverrideOfIt() {
        let container = DependencyContainer()
        container.override(\.accountSession) { account in StubAccountSession(account: account) }
        container.override(\.accountSession[alice]) { StubAccountSession(account: alice, source: "alice") }
        let stubBob = container.accountSession(bob)
        #expect(container.accountSession(alice).source == "alice")
        container.reset(\.accountSession)
        #expect(container.accountSession(alice).source == "live")
        #expect(container.accountSession(bob).source == "live")
        #expect(container.accountSession(bob) !== stubBob)
        #expect(container.accountSession(AccountID(3)).source == "live")
    }

    @Test func resettingTheFamilyDropsWhatWasBuiltFromItsOverride() {
        let container = DependencyContainer()
        container.override(\.accountSession) { account in StubAccountSession(account: account) }
        #expect(container.aliceMailbox().session.source == "stub")
        container.reset(\.accountSession)
        #expect(container.aliceMailbox().session.source == "live")
    }

    // MARK: - Child containers

    @Test func aChildSeesItsParentsFamilyOverrideAndDropsWhatItBuiltBefore() {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        let live = child.accountSession(alice)
        let liveMailbox = child.aliceMailbox()
        parent.override(\.accountSession) { account in StubAccountSession(account: account) }
        #expect(child.accountSession(alice) !== live)
        #expect(child.accountSession(alice).source == "stub")
        #expect(child.accountSession(bob).source == "stub")
        #expect(child.aliceMailbox() !== liveMailbox)
        #expect(child.aliceMailbox().session.source == "stub")
        parent.reset(\.accountSession)
        #expect(child.accountSession(alice).source == "live")
    }

    @Test func aChildKeepsWhatItBuiltFromItsOwnOverrideWhenItsParentChanges() {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        child.override(\.accountSession) { account in StubAccountSession(account: account, source: "child") }
        let own = child.accountSession(alice)
        parent.override(\.accountSession) { account in StubAccountSession(account: account) }
        parent.override(\.accountSession[alice]) { StubAccountSession(account: alice, source: "parent") }
        #expect(child.accountSession(alice) === own)
    }

    @Test func aChildKeepsItsOwnArgumentOverrideWhenItsParentOverridesTheFamily() {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        child.override(\.accountSession[alice]) { StubAccountSession(account: alice, source: "child") }
        let own = child.accountSession(alice)
        let live = child.accountSession(bob)
        parent.override(\.accountSession) { account in StubAccountSession(account: account) }
        #expect(child.accountSession(alice) === own)
        #expect(child.accountSession(bob) !== live)
        #expect(child.accountSession(bob).source == "stub")
    }

    // MARK: - Concurrency

    /// Threads resolve different arguments while one overrides and resets the family. Each
    /// resolution gets an instance for its argument, and once the last override is in, no
    /// argument is served from the registration or from an earlier override. The
    /// overriding thread starts once every resolving thread has cached something, which
    /// the overrides must then drop.
    @Test func resolvingArgumentsWhileTheFamilyIsOverriddenAndResetIsRaceFree() async {
        let container = DependencyContainer()
        let child = DependencyContainer(parent: container)
        let (threads, rounds) = (6, 300)
        let cached = Arrivals()
        let wrong = Collected<String>()
        let threadsEnded = await concurrentlyOffThePool(threads: threads) { index in
            if index == 0 {
                cached.wait(for: threads - 1)
                for round in 0..<rounds {
                    if round.isMultiple(of: 2) {
                        container.override(\.accountSession) { account in StubAccountSession(account: account) }
                    } else {
                        container.reset(\.accountSession)
                    }
                }
                container.override(\.accountSession) { account in StubAccountSession(account: account, source: "last") }
                return
            }
            for round in 0..<rounds {
                let account = AccountID((index + round) % 4)
                let resolver = round.isMultiple(of: 3) ? child : container
                let session = resolver.accountSession(account)
                if session.account != account { wrong.append("\(session.account) for \(account)") }
                let mailbox = resolver.mailbox(account)
                if mailbox.session.account != account { wrong.append("mailbox of \(account)") }
                if round == 0 { cached.arrive() }
            }
        }
        #expect(threadsEnded, "the threads did not end before the hang limit")
        #expect(wrong.values.isEmpty, "\(wrong.values)")
        for container in [container, child] {
            for raw in 0..<4 {
                #expect(container.accountSession(AccountID(raw)).source == "last")
                #expect(container.mailbox(AccountID(raw)).session.source == "last")
            }
        }
    }

    // MARK: - Cycles

    @Test func aCycleThroughAFamilyNamesTheFamily() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle through a family")
            _ = DependencyContainer().familyCycleHead()
        }
        let cycle = CycleChain(result)
        #expect(cycle?.isCycle(["familyCycleHead", "familyCycleLink", "familyCycleHead"]) == true,
                "\(standardError(of: result))")
    }
}
