#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's resident set size, read from /proc/self/statm (for `bridge/health`).
public enum ResidentMemory {
    public static func bytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Gives the heap pages that are free again back to the system. A republish of every
    /// retained topic (every connection) queues several messages per accessory at once; once
    /// the broker has acknowledged them, the allocator keeps most of the freed pages unless
    /// asked (docs/performance.md, "The runtime redesign").
    public static func releaseFreedHeap() {
        // glibc's malloc_trim is in <malloc.h>, which no Swift module map exports: looked up
        // once by name, and nothing is done where the C library has none (musl).
        guard let trim = mallocTrim else { return }
        _ = trim(0)
    }

    /// Whether ``releaseFreedHeap()`` can do anything here (glibc).
    public static var releasesFreedHeap: Bool { mallocTrim != nil }

    /// Fixes glibc's two heap thresholds at their initial 128 KiB (`mallopt`), for the daemon
    /// (`aabridge run`, before the store is loaded). glibc otherwise raises both at run time to
    /// the largest block freed so far (a republish frees `bridge/accessories` payloads of
    /// several MiB): a block below the mmap threshold comes from the heap instead of a mapping
    /// of its own that is returned whole when freed, and every arena keeps up to twice that
    /// threshold of free heap at its top, which `malloc_trim` does not release in the arenas of
    /// other threads (docs/performance.md, "Memory").
    /// - Returns: whether the C library took both settings (false where it has no `mallopt`).
    @discardableResult
    public static func fixHeapThresholds() -> Bool {
        guard let mallopt else { return false }
        // <malloc.h>: M_TRIM_THRESHOLD -1, M_MMAP_THRESHOLD -3; mallopt returns 1 on success.
        let threshold: Int32 = 128 * 1024
        return mallopt(-3, threshold) == 1 && mallopt(-1, threshold) == 1
    }

    private typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
    private static let mallopt: Mallopt? = dlsym(nil, "mallopt").map { unsafeBitCast($0, to: Mallopt.self) }

    private typealias MallocTrim = @convention(c) (Int) -> Int32
    private static let mallocTrim: MallocTrim? = dlsym(nil, "malloc_trim").map { unsafeBitCast($0, to: MallocTrim.self) }
}
