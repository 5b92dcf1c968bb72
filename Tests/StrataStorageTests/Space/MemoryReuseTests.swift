import Foundation
import Testing
@testable import StrataStorage

/// Arenas give their chunks to a process-wide pool when a transaction ends, and take them from
/// it before mapping new ones; the pool keeps at most `pooledChunkLimit` chunks. Other tests
/// use the pool at the same time, so only what holds whatever they do is checked.
@Suite struct MemoryReuseTests {
    @Test func chunksAreReusedAndThePoolStaysBounded() {
        for round in 0..<3 {
            let arena = Arena()
            // More chunks than the pool keeps: four 60 KiB allocations fill a 256 KiB chunk.
            var blocks: [UnsafeMutableRawPointer] = []
            for index in 0..<((Arena.pooledChunkLimit + 16) * 4) {
                let block = arena.allocate(60 << 10, alignment: 4096)
                #expect(Int(bitPattern: block) % 4096 == 0)
                // A reused chunk holds the last transaction's bytes: the arena hands it out as
                // it is, and every user writes what it reads.
                block.storeBytes(of: UInt64(round * 1_000 + index), as: UInt64.self)
                blocks.append(block)
            }
            for (index, block) in blocks.enumerated() {
                #expect(block.load(as: UInt64.self) == UInt64(round * 1_000 + index))
            }
            arena.reset()
            #expect(Arena.pooledChunks <= Arena.pooledChunkLimit)
            // The first chunk stays with the arena; the next allocation starts from it again.
            #expect(arena.allocate(64, alignment: 8) == blocks[0])
        }
        #expect(Arena.pooledChunks <= Arena.pooledChunkLimit)
    }
}
