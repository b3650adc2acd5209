/// A reproducible source of random numbers (SplitMix64), so that a failing order can be
/// replayed from its seed.
///
/// ```swift
/// var random = SeededGenerator(seed: 7)
/// let order = (0..<5).shuffled(using: &random)
/// let pick = random.below(3)
/// let overrides = random.chance(25)
/// ```
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number from 0 up to, not including, `bound`.
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// True `percent` times in a hundred.
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}
