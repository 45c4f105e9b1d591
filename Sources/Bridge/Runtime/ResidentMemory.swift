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

    private typealias MallocTrim = @convention(c) (Int) -> Int32
    private static let mallocTrim: MallocTrim? = dlsym(nil, "malloc_trim").map { unsafeBitCast($0, to: MallocTrim.self) }
}
