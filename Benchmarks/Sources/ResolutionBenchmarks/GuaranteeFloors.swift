import DependencyInjection

// The lower bounds of the four operations whose targets are not met: what any engine that
// keeps the package's promises must spend on top of the same operation written by hand,
// counted as the Swift runtime's own primitives, with no engine around them.
//
// Each bound adds to the by-hand floor only work that a promise cannot do without,
// whatever the engine (the binding is counted where it costs the most, outside any task
// and under no other binding, where the runtime allocates its storage, as for code on an
// app's main thread):
//
// - A task that a singleton's construction starts must see the construction (what it
//   creates then holds the container weakly): in Swift, a task inherits nothing from the
//   code that starts it but its task-local values, so every such construction binds one
//   (`floor-bind`: one reference bound around an empty body).
// - A test's world is a container that is created and dropped: one object
//   (`floor-object`).
// - `@Dependency(\.x)`'s lazily resolved value needs a storage object of its own, since two
//   threads may read it first (`floor-object`). It names its registration by a key path,
//   which no longer counts: the getter of a key path literal is called directly in an
//   optimized build (`PropertyGetter`). `floor-projection` is what reading a key path the
//   runtime's way costs (the runtime's projection of a computed property whose getter only
//   refers to the container), as a debug build, or a key path with an argument, still does.
//
// `instructions.sh` prints the bounds beside the targets. A lower bound can show a target
// out of reach, never that it can be reached: a bound well under its target says only
// that the promises do not put the target out of reach. Like every loop of HotPaths.swift,
// these contain no closure and are never inlined.

/// The stand-in for a construction's frame: the object a binding refers to.
final class FloorFrame: Sendable {
    let depth: Int
    init(depth: Int) { self.depth = depth }
}

/// What a construction binds: one reference, in a struct of its own (as the engine binds
/// its frame), so that the runtime copies and destroys it with a retain and a release.
struct FloorBound: Sendable {
    let frame: FloorFrame?

    @TaskLocal static var current = FloorBound(frame: nil)
}

/// The construction's body while bound: nothing, so that only the binding is counted.
@inline(never)
func floorConstructionBody() {}

/// The least a registration's getter can return: a value that refers to its container,
/// as every provider does. Projecting a key path to it costs what the runtime's projection
/// costs, with no engine code in the getter.
struct FloorRegistration {
    let container: DependencyContainer
}

extension DependencyContainer {
    /// A registration whose getter does nothing but refer to the container.
    var floorRegistration: FloorRegistration { FloorRegistration(container: self) }
}

/// Consumes a projected registration, without boxing it.
@inline(never)
@_optimize(none)
func blackHole(registration: FloorRegistration) {}

/// Binds `frame` as a task-local value around an empty body, `count` times.
@inline(never)
func hotPathFloorBindLoop(_ frame: FloorFrame, _ count: Int) {
    for _ in 0..<count {
        FloorBound.$current.withValue(FloorBound(frame: frame), operation: floorConstructionBody)
    }
}

/// Creates and drops one small object, `count` times.
@inline(never)
func hotPathFloorObjectLoop(_ count: Int, _ depth: Int) {
    for _ in 0..<count {
        blackHole(FloorFrame(depth: depth))
    }
}

/// Projects `path` on `container`, `count` times: what the first read of a `@Dependency`
/// whose storage kept its key path (a debug build, a key path with an argument) does once.
@inline(never)
func hotPathFloorProjectionLoop(
    _ container: DependencyContainer, _ path: KeyPath<DependencyContainer, FloorRegistration>, _ count: Int
) {
    for _ in 0..<count {
        blackHole(registration: container[keyPath: path])
    }
}

/// Runs one of the lower-bound loops, after checking that each does its work.
func runFloorHotPath(_ hotPath: HotPath, count: Int) {
    let frame = FloorFrame(depth: 1)
    FloorBound.$current.withValue(FloorBound(frame: frame)) {
        precondition(FloorBound.current.frame === frame, "the binding is not seen inside it")
    }
    precondition(FloorBound.current.frame == nil, "the binding outlived its body")
    let container = DependencyContainer()
    let path: KeyPath<DependencyContainer, FloorRegistration> = \.floorRegistration
    precondition(container[keyPath: path].container === container, "the projection is not the registration")
    switch hotPath {
    case .floorBind: hotPathFloorBindLoop(frame, count)
    case .floorProjection: hotPathFloorProjectionLoop(container, path, count)
    default: hotPathFloorObjectLoop(count, frame.depth)
    }
}
