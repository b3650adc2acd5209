import Testing
@testable import DependencyInjection

/// Objects of one kind are allocated a fixed distance apart; the stripe of each must not
/// depend on that distance, or many of them would queue on a few locks.
@Suite struct LockStripeTests {
    @Test(arguments: [0x6000_0123_4560, 0x7F00_1000_0000, 0x1_0000_0010] as [UInt])
    func objectsAnyFixedDistanceApartSpreadOverHalfTheStripes(base: UInt) {
        for spacing in stride(from: 16, through: 8192, by: 16) {
            let stripes = Set((0..<64).map { _LockStripes.stripe(of: base + UInt($0 * spacing)) })
            #expect(stripes.count >= 32, "64 objects \(spacing) bytes apart share only \(stripes.count) stripes")
        }
    }
}
