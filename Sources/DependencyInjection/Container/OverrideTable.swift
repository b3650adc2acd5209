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
    /// The key of the one override, while there is exactly one.
    private var onlyKey: RegistrationKey?
    /// The one override, while there is exactly one: set exactly when `onlyKey` is.
    private var onlyOverride: AnyObject?
    /// Every override, once there are two or more; empty otherwise. A literal, unlike the
    /// tables of ``ContainerState``: `.init()` here saved a new container about 70
    /// instructions, but changed what the compiler inlined on the factory road, and a
    /// five-level chain cost 200 more.
    private var several: [RegistrationKey: AnyObject] = [:]

    init() {}

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
            several = [onlyKey!: onlyOverride!, key: override]
            (onlyKey, onlyOverride) = (nil, nil)
            return nil
        }
        if several.isEmpty {
            (onlyKey, onlyOverride) = (key, override)
            return nil
        }
        return several.updateValue(override, forKey: key)
    }

    /// Removes the override of `key`; returns it, for the caller to release after
    /// unlocking.
    mutating func removeValue(forKey key: RegistrationKey) -> AnyObject? {
        if onlyOverride != nil {
            guard isOnly(key) else { return nil }
            defer { (onlyKey, onlyOverride) = (nil, nil) }
            return onlyOverride
        }
        return several.isEmpty ? nil : several.removeValue(forKey: key)
    }

    /// The overridden keys, in no particular order.
    var keys: [RegistrationKey] {
        if let onlyKey { return [onlyKey] }
        var keys: [RegistrationKey] = []
        // One key at a time: appending the keys view goes through unspecialized code.
        for key in several.keys { keys.append(key) }
        return keys
    }

    /// Whether `key` is the key of the one override.
    private func isOnly(_ key: RegistrationKey) -> Bool {
        switch onlyKey {
        case .some(let only): only == key
        case .none: false
        }
    }
}
