/// The frame of a call of a provider that a kept instance's `@Dependency` published
/// (``PropertyLink``): the factory, in the link's own container, that reads the
/// registration in the instance's container and resolves it there.
///
/// The call is app code's, not a construction: what it resolves outside every
/// construction is an outermost resolution, and a tracer hears of it once the call's
/// frame has ended, when ``ThreadFrames/leave(_:)`` delivers the batch
/// (``DeferredTraceFrame``). Inside a traced construction the frame passes that
/// construction's batch through instead, and the call's events join it.
///
/// ```swift
/// final class Coordinator {
///     @Dependency(\.makeScreen) var makeScreen: Provider<Screen>   // a factory
/// }
/// session.tracer = .printer
/// _ = session.coordinator().makeScreen()   // makeScreen: Screen [factory] built in …
/// ```
///
/// Only the object of a plain frame is one (``Frame/init(_:below:)``): a call that takes
/// the whole road of its factory (a `Task.immediate` on a construction's thread) runs in a
/// resolution, a construction, and is traced only inside a traced construction.
final class LinkCallFrame: DeferredTraceFrame, @unchecked Sendable {
    // @unchecked: what it adds to a frame is touched only by its owner (DeferredTraceFrame).
}
