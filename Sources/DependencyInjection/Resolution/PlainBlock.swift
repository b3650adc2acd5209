#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One block of a thread's stack of plain frames: two words that link it to the blocks
/// below and above it, then ``ThreadFrames/plainBlockCapacity`` places.
///
/// Blocks are linked, not grown: a word names a plain frame by its address, so a plain
/// frame must never move while it is filed. A thread makes its first block with its slot,
/// and each further one the first time its chain outgrows the blocks it has; they go when
/// the thread ends.
///
/// ```swift
/// let first = PlainBlock.make(below: nil)
/// let place = first.frames + 3                     // the fourth plain frame
/// let next = first.above ?? first.makeAbove()      // past the 64th
/// ```
struct PlainBlock {
    let address: UnsafeMutableRawPointer

    private static let headerSize = 2 * MemoryLayout<UnsafeMutableRawPointer?>.stride

    /// A new block, empty, above `below`.
    static func make(below: PlainBlock?) -> PlainBlock {
        let size = headerSize + ThreadFrames.plainBlockCapacity * MemoryLayout<PlainFrame>.stride
        let block = PlainBlock(address: malloc(size)!)
        block.links.initialize(repeating: nil, count: 2)
        block.links[0] = below?.address
        return block
    }

    private var links: UnsafeMutablePointer<UnsafeMutableRawPointer?> {
        address.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
    }

    var below: PlainBlock? { links[0].map(PlainBlock.init) }
    var above: PlainBlock? { links[1].map(PlainBlock.init) }

    /// A new block above this one, kept for the next time the stack grows past this one.
    func makeAbove() -> PlainBlock {
        let block = PlainBlock.make(below: self)
        links[1] = block.address
        return block
    }

    /// The first place. Places are 8-byte aligned, so a word can mark them with its lowest bit.
    var frames: UnsafeMutablePointer<PlainFrame> {
        (address + Self.headerSize).assumingMemoryBound(to: PlainFrame.self)
    }
}
