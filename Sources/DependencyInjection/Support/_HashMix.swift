/// Spreads the bits of a few machine words that already identify a value (an address, a
/// source position) into a hash value, with one xor-shift-multiply round per step.
///
/// Hash tables keyed by such values use it in place of `Hasher`, whose SipHash costs more
/// than the rest of a cached resolution. The seed is `Hasher`'s per-table seed, so tables
/// still differ in their layouts.
///
/// ```swift
/// func _rawHashValue(seed: Int) -> Int {
///     _mixHash(UInt64(UInt(bitPattern: address)), seed: seed)
/// }
/// ```
@inlinable
func _mixHash(_ bits: UInt64, seed: Int) -> Int {
    var bits = bits ^ UInt64(UInt(bitPattern: seed))
    bits = (bits ^ (bits &>> 30)) &* 0xBF58_476D_1CE4_E5B9
    bits = (bits ^ (bits &>> 27)) &* 0x94D0_49BB_1331_11EB
    return Int(truncatingIfNeeded: bits ^ (bits &>> 31))
}
