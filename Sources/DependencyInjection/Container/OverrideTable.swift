/// The overrides installed in one container, by key: what ``ContainerState/overrides``
/// keeps.
///
/// Most containers that override anything override one registration: a test's world
/// replaces the client it talks to, a request's scope installs its user. So the first
/// override is kept inline, and a dictionary only from the second on. A dictionary for
/// the first cost every test world and every request about 700 instructions to fill and
/// 400 to free.
///
/// ```swift
/// var overrides = OverrideTable()
/// overrides.updateValue(stub, forKey: clientKey)   // nil: nothing was replaced
/// overrides[clientKey] === stub                     // true
/// ```
struct OverrideTable {
    /// The key of the one override, while there is exactly one; the key of no registration
    /// otherwise. Not optional: an optional key was copied, compared and destroyed out of
    /// line, through its type's value witnesses (about 120 instructions per test world).
    private var onlyKey = _SingletonTable.noKey
    /// The one override, while there is exactly one: `onlyKey` is its key.
    private var onlyOverride: AnyObject?
    /// Every override, once there are two or more; empty otherwise. Made with `.init()`,
    /// as the tables of ``ContainerState`` are: a `[:]` literal cost every new container
    /// a call of `init(dictionaryLiteral:)`, about 25 instructions (a request in a scope,
    /// with the table of ``DependentKeys`` made the same way, 66). An earlier engine paid
    /// 200 more on a five-level chain for it, as the compiler inlined the factory road
    /// differently; this one pays nothing there.
    private var several: [RegistrationKey: AnyObject] = .init()

    init() {}

    @inline(__always)
    var isEmpty: Bool { onlyOverride == nil && several.isEmpty }

    subscript(key: RegistrationKey) -> AnyObject? {
        if onlyOverride != nil { return isOnly(key) ? onlyOverride : nil }
        return several.isEmpty ? nil : several[key]
    }

    /// Installs `override` for `key`; returns the override it replaces, for the caller to
    /// release after unlocking.
    mutating func updateValue(_ override: AnyObject, forKey key: RegistrationKey) -> AnyObject? {
        if onlyOverride != nil {
            if isOnly(key) {
                defer { onlyOverride = override }
                return onlyOverride
            }
            several = [onlyKey: onlyOverride!, key: override]
            (onlyKey, onlyOverride) = (_SingletonTable.noKey, nil)
            return nil
        }
        if several.isEmpty {
            (onlyKey, onlyOverride) = (key, override)
            return nil
        }
        return several.updateValue(override, forKey: key)
    }

    /// Removes the override of `key`, handing it to `released`, which releases it after
    /// unlocking, with the argument of the key it was installed under.
    ///
    /// That key is the table's own: `reset(\.[session: token])` names the registration
    /// with an argument equal to the installed one, but another object, so the table's
    /// copy may be the last reference to the argument the override was installed with,
    /// whose `deinit` must not run under the lock.
    ///
    /// ```swift
    /// state.overrides.removeValue(forKey: key, into: &released)
    /// ```
    ///
    /// - Returns: The override removed, if any.
    @discardableResult
    mutating func removeValue(forKey key: RegistrationKey, into released: inout Released) -> AnyObject? {
        if onlyOverride != nil {
            guard isOnly(key) else { return nil }
            defer { (onlyKey, onlyOverride) = (_SingletonTable.noKey, nil) }
            released.keep(onlyKey.argument)
            released.keep(onlyOverride)
            return onlyOverride
        }
        guard !several.isEmpty, let removed = several.removeValue(forKey: key, keepingArgumentIn: &released) else {
            return nil
        }
        released.append(removed)
        return removed
    }

    /// The overridden keys, in no particular order.
    var keys: [RegistrationKey] {
        if onlyOverride != nil { return Self.array(of: onlyKey) }
        var keys: [RegistrationKey] = []
        // One key at a time: appending the keys view goes through unspecialized code.
        for key in several.keys { keys.append(key) }
        return keys
    }

    /// `[key]`, made where the key is a parameter: made from the stored key, the literal
    /// copied it out of line, through its value witnesses (about 50 instructions on every
    /// request in a scope).
    @inline(never)
    private static func array(of key: RegistrationKey) -> [RegistrationKey] { [key] }

    /// Whether `key` is the key of the one override, while there is one.
    @inline(__always)
    private func isOnly(_ key: RegistrationKey) -> Bool { onlyKey == key }
}

extension Dictionary where Key == RegistrationKey {
    /// Removes the entry of `key` and returns its value, handing `released` the argument of
    /// the key the dictionary stored it under, which may be the last reference to it (see
    /// ``OverrideTable/removeValue(forKey:into:)``).
    ///
    /// ```swift
    /// released.keep(state.decorations.removeValue(forKey: key, keepingArgumentIn: &released))
    /// ```
    mutating func removeValue(forKey key: RegistrationKey, keepingArgumentIn released: inout Released) -> Value? {
        guard let index = index(forKey: key) else { return nil }
        let (stored, value) = remove(at: index)
        released.keep(stored.argument)
        return value
    }
}

extension ContainerState {
    /// Removes the override and the decorations of `key`, handing them to `released` with
    /// the arguments of the keys they were installed under. Out of line: installing an
    /// override, the usual change, does not carry it.
    @inline(never)
    mutating func removeOverride(of key: RegistrationKey, into released: inout Released) {
        overrides.removeValue(forKey: key, into: &released)
        if hasDecorations { released.keep(decorations.removeValue(forKey: key, keepingArgumentIn: &released)) }
    }

    /// Removes the override and the decorations of every argument of the provider family
    /// `family`, as ``removeOverride(of:into:)`` does for one key.
    @inline(never)
    mutating func removeOverridesOfArguments(of family: RegistrationKey, into released: inout Released) {
        let overridden = overrides.keys.filter { $0.argument != nil && $0.registration == family }
        for argument in overridden { overrides.removeValue(forKey: argument, into: &released) }
        guard hasDecorations else { return }
        let decorated = decorations.keys.filter { $0.argument != nil && $0.registration == family }
        for argument in decorated {
            released.keep(decorations.removeValue(forKey: argument, keepingArgumentIn: &released))
        }
    }
}
