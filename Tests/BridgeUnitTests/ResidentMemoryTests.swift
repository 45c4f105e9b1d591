import Testing

@testable import Bridge

@Suite("Resident memory")
struct ResidentMemoryTests {
    @Test("RSS is read from /proc; the freed heap can be given back (glibc's malloc_trim is found)")
    func residentMemory() {
        #expect(ResidentMemory.bytes() > 1_000_000)
        #expect(ResidentMemory.releasesFreedHeap, "malloc_trim not found: the RSS after a republish stays at its peak")
        var blocks: [[UInt8]] = (0..<2_000).map { _ in [UInt8](repeating: 1, count: 16_384) }
        blocks.removeAll()
        ResidentMemory.releaseFreedHeap()
        #expect(ResidentMemory.bytes() > 0)
    }

    @Test("glibc takes the fixed heap thresholds aabridge run sets (mallopt found, both parameters accepted)")
    func heapThresholds() {
        #expect(ResidentMemory.fixHeapThresholds())
    }
}
