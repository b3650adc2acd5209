import DependencyInjection
import Foundation
import Testing

/// A class argument, so that a test can see with a weak reference whether anything keeps it.
final class TransientArgumentArgument: Hashable, Sendable {
    let raw: Int
    init(_ raw: Int) { self.raw = raw }
    static func == (lhs: TransientArgumentArgument, rhs: TransientArgumentArgument) -> Bool { lhs.raw == rhs.raw }
    func hash(into hasher: inout Hasher) { hasher.combine(raw) }
}

final class TransientArgumentValue: Sendable {
    let raw: Int
    init(_ raw: Int) { self.raw = raw }
}

final class TransientArgumentHolder: Sendable {
    let values: [TransientArgumentValue]
    init(_ values: [TransientArgumentValue]) { self.values = values }
}

final class TransientArgumentWeakArguments: @unchecked Sendable {
    private let lock = NSLock()
    private var refs: [() -> TransientArgumentArgument?] = []
    func make(_ raw: Int) -> TransientArgumentArgument {
        let argument = TransientArgumentArgument(raw)
        lock.withLock { refs.append({ [weak argument] in argument }) }
        return argument
    }
    var alive: Int { lock.withLock { refs.filter { $0() != nil }.count } }
}

extension DependencyContainer {
    subscript(transientArgumentFactory argument: TransientArgumentArgument) -> Provider<TransientArgumentValue> {
        factory(argument) { TransientArgumentValue(argument.raw) }
    }
    subscript(transientArgumentGraph argument: TransientArgumentArgument) -> Provider<TransientArgumentValue> {
        graph(argument) { TransientArgumentValue(argument.raw) }
    }
    var transientArgumentFamily: ProviderFamily<TransientArgumentArgument, TransientArgumentValue> {
        factory { (argument: TransientArgumentArgument) in TransientArgumentValue(argument.raw) }
    }
    var transientArgumentArguments: TransientArgumentWeakArguments? { getValue(forKey: "transient-argument.arguments") }
    /// A singleton built from a thousand transient arguments.
    var transientArgumentHolder: Provider<TransientArgumentHolder> {
        singleton {
            let arguments = self.transientArgumentArguments!
            return TransientArgumentHolder((0..<1000).map { raw in
                let argument = arguments.make(raw)
                return [self[transientArgumentFactory: argument](), self[transientArgumentGraph: argument](), self.transientArgumentFamily(argument)][raw % 3]
            })
        }
    }
}

@Suite struct TransientArgumentRetentionTests {
    @Test(arguments: [false, true])
    func factoryAndGraphArgumentsAreNotKeptByTheContainer(traced: Bool) {
        let container = DependencyContainer()
        if traced { container.tracer = ResolutionTracer { _ in } }
        let scope = DependencyContainer(scopeOf: container)
        let weak = TransientArgumentWeakArguments()
        for raw in 0..<3000 {
            let where_ = raw % 2 == 0 ? container : scope
            _ = where_[transientArgumentFactory: weak.make(raw)]()
            _ = where_[transientArgumentGraph: weak.make(raw)]()
            _ = where_.transientArgumentFamily(weak.make(raw))
        }
        #expect(weak.alive == 0, "\(weak.alive) arguments of transient resolutions are still kept")
        container.tracer = nil
    }

    @Test(arguments: [false, true])
    func argumentsResolvedWhileASingletonIsBuiltAreNotKeptAfterIt(traced: Bool) {
        let container = DependencyContainer()
        if traced { container.tracer = ResolutionTracer { _ in } }
        let weak = TransientArgumentWeakArguments()
        container.setValue(weak, forKey: "transient-argument.arguments")
        for _ in 0..<3 {
            let holder = container.transientArgumentHolder()
            #expect(holder.values.count == 1000)
            container.reset(\.transientArgumentHolder)
        }
        _ = container.transientArgumentHolder()
        #expect(weak.alive == 0, "\(weak.alive) arguments resolved during a singleton's construction are kept")
        container.tracer = nil
    }
}
