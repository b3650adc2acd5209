/// How a `@Dependency` property reads its registration on its first read: a closure that
/// the wrapper's initializer makes where the property is declared, and that captures
/// nothing but the property's key path.
///
/// `@Dependency(\.httpClient)` names its registration by a key path, and reading a key path
/// handed around as a value goes through the runtime's generic key-path code: about 750
/// instructions on every property's first read, where the getter itself costs a few dozen.
/// A closure that captures a key path literal and nothing else is one the optimizer
/// specializes for that literal, where the closure is made: its read of the key path
/// becomes a call of the getter, and, having nothing left to capture, the closure becomes
/// a plain function. So the initializer, always inlined, makes the closure at the
/// declaration, and the storage keeps the plain function, in one word
/// (``_PropertyGetterWord``).
///
/// A closure that still captures its key path hands the key path back when it is called
/// with no container, and the storage keeps the key path instead, which the wrapper reads
/// through the runtime as before: in a debug build, which specializes nothing, and for a
/// key path with arguments (a subscript's or a provider family's argument, even a literal
/// one, such as `\.[track: 3]`, or a value of the object's, `\.[session: id]`), or one not
/// written as a literal in the declaration (held in a variable, made by a helper).
///
/// ```swift
/// let getter = PropertyGetter { container, step in
///     guard let container else { return keyPath }   // asked for the key path
///     return Dependency.resolve(container[keyPath: keyPath], at: keyPath, in: container, &step)
/// }
/// ```
@usableFromInline
struct PropertyGetter {
    /// Resolves the property in a container, as far as the step allows, and returns the box
    /// (``DependencyStorage/Resolve``'s terms); called with no container, returns the key
    /// path it captured.
    @usableFromInline let resolve: (_ container: DependencyContainer?, _ step: inout DependencyStorage.FirstReadStep) -> AnyObject?

    @inlinable
    init(_ resolve: @escaping (DependencyContainer?, inout DependencyStorage.FirstReadStep) -> AnyObject?) {
        self.resolve = resolve
    }
}

/// A ``PropertyGetter`` kept in one word of a ``DependencyStorage``, where the storage kept
/// its key path: the getter's function when the getter captures nothing, or else the key
/// path it hands back, retained, with its lowest bit set (and the next one too when the
/// getter captured nothing but its function's address is odd; see ``init(_:)``).
///
/// A closure is a function and a context, two words, and one that captures nothing has no
/// context: its function alone calls it. Keeping the function rather than the closure
/// keeps the storage at three words, a block of 48 bytes (a fourth word makes it 64). The
/// unsafe part is here alone: reading a closure's two words, and making a closure of a
/// function with no context, which is how Swift calls a function that captures nothing.
///
/// ```swift
/// let word = _PropertyGetterWord(getter)
/// let box = word.resolve(in: container, &step, projecting: resolve)
/// word.release()   // in the storage's deinit
/// ```
struct _PropertyGetterWord {
    private let bits: UInt

    /// Keeps `getter`'s function if the getter captures nothing and the function's lowest
    /// bit is clear, which the tag needs; else the key path the getter hands back. A
    /// function's address is even on arm64, and on x86_64 in a build optimized for speed,
    /// but a build optimized for size (`-Osize`) places about half of them at odd
    /// addresses: the properties of those declarations keep their key paths.
    init(_ getter: PropertyGetter) {
        // The struct, not its closure: a closure passed to a generic function as a value is
        // wrapped in another, and would never read as one without a context.
        let (function, context) = unsafeBitCast(getter, to: (UnsafeRawPointer, UnsafeRawPointer?).self)
        if context == nil, UInt(bitPattern: function) & Self.keptKeyPath == 0 {
            bits = UInt(bitPattern: function)
            return
        }
        var step = DependencyStorage.FirstReadStep.look
        let keyPath = getter.resolve(nil, &step)
        precondition(keyPath is AnyKeyPath, "a property's getter hands back its key path when called with no container")
        let address = UInt(bitPattern: Unmanaged.passRetained(keyPath.unsafelyUnwrapped).toOpaque())
        assert(address & Self.tags == 0, "an object's address leaves its two lowest bits clear")
        bits = address | Self.keptKeyPath | (context == nil ? Self.capturedNothing : 0)
    }

    /// The tag of a kept key path.
    private static let keptKeyPath: UInt = 0b01
    /// With ``keptKeyPath``: the getter captured nothing, but its function's address is odd.
    private static let capturedNothing: UInt = 0b10
    private static let tags: UInt = 0b11

    /// The key path kept, if any.
    var keyPath: AnyKeyPath? {
        guard bits & Self.keptKeyPath != 0 else { return nil }
        return Unmanaged<AnyKeyPath>.fromOpaque(UnsafeRawPointer(bitPattern: bits & ~Self.tags).unsafelyUnwrapped)
            .takeUnretainedValue()
    }

    /// Whether the getter captured nothing, a plain function, whether the word keeps the
    /// function or, for one at an odd address, its key path: for tests.
    var getterCapturedNothing: Bool {
        bits & Self.keptKeyPath == 0 || bits & Self.capturedNothing != 0
    }

    /// Resolves the property in `container` as far as `step` allows: through the getter's
    /// function, or by reading the key path with `resolve`, which the wrapper passes. The
    /// box comes with a reference for the caller to hand on.
    func resolve(
        in container: DependencyContainer, _ step: inout DependencyStorage.FirstReadStep,
        projecting resolve: DependencyStorage.Resolve
    ) -> Unmanaged<AnyBox>? {
        if let keyPath { return resolve(container, keyPath, &step).map { Unmanaged.passRetained($0) } }
        let function = UnsafeRawPointer(bitPattern: bits).unsafelyUnwrapped
        let getter = unsafeBitCast((function, UnsafeRawPointer?.none), to: PropertyGetter.self)
        return getter.resolve(container, &step).map { Unmanaged.passRetained(unsafeDowncast($0, to: AnyBox.self)) }
    }

    /// Releases the key path kept, if any: the storage's `deinit` calls it.
    func release() {
        guard bits & Self.keptKeyPath != 0 else { return }
        Unmanaged<AnyKeyPath>.fromOpaque(UnsafeRawPointer(bitPattern: bits & ~Self.tags).unsafelyUnwrapped).release()
    }
}
