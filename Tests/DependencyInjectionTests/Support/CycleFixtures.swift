import DependencyInjection
import Foundation

final class Node: Sendable {}

extension DependencyContainer {
    var left: Provider<Node> { factory { _ = self.right(); return Node() } }
    var right: Provider<Node> { factory { _ = self.left(); return Node() } }
    var selfish: Provider<Node> { singleton { _ = self.selfish(); return Node() } }
    var ping: Provider<Node> { singleton { _ = self.pong(); return Node() } }
    var pong: Provider<Node> { factory { _ = self.ping(); return Node() } }

    /// `crossA` and `crossB` need each other; resolved on two threads at once, each
    /// thread builds one and waits for the other.
    var crossA: Provider<Node> {
        singleton {
            (self.getValue(forKey: "rendezvous") as Rendezvous?)?.arrive()
            _ = self.crossB()
            return Node()
        }
    }
    var crossB: Provider<Node> {
        singleton {
            (self.getValue(forKey: "rendezvous") as Rendezvous?)?.arrive()
            _ = self.crossA()
            return Node()
        }
    }

    var lazyParent: Provider<LazyParent> { singleton { LazyParent() } }
    var lazyChild: Provider<LazyChild> { singleton { LazyChild() } }
}

/// Objects that refer to each other through lazily resolved properties: not a cycle.
final class LazyParent: @unchecked Sendable { @Dependency(\.lazyChild) var child }
final class LazyChild: @unchecked Sendable { @Dependency(\.lazyParent) var parent }
