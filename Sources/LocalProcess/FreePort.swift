import Synchronization

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

/// Loopback ports for the brokers, consoles and databases of the tests and the benchmarks.
///
/// A port is chosen below the kernel's ephemeral range (`ip_local_port_range`), never twice in
/// one process, and only if it can be bound right now. Why not the kernel's `bind(0)`: that port
/// comes from the ephemeral range, and between the release here and the bridge's own `bind` the
/// kernel may hand it to any outgoing connection of a test running beside it (the source port of a
/// client connecting to its broker); the bridge then runs without its console. Each process starts
/// at an offset of its own so that test processes running side by side rarely try the same port.
public enum FreePort {
    private static let handedOut = Mutex<Int?>(nil)

    /// A loopback port nothing listens on, outside the ephemeral range, not handed out before.
    public static func find() throws -> Int {
        let range = candidates()
        return try handedOut.withLock { last -> Int in
            let span = range.count
            var next = last.map { $0 + 1 } ?? (range.lowerBound + Int(getpid()) * 97 % span)
            for _ in 0..<span {
                if !range.contains(next) { next = range.lowerBound }
                if canBind(port: next) {
                    last = next
                    return next
                }
                next += 1
            }
            throw LocalProcessError("no free loopback port in \(range.lowerBound)...\(range.upperBound)")
        }
    }

    /// 10000 up to the start of the ephemeral range (32768 unless configured otherwise).
    private static func candidates() -> ClosedRange<Int> {
        var ephemeralStart = 32768
        if let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8),
            let first = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first,
            let value = Int(first), value > 11000
        {
            ephemeralStart = value
        }
        return 10000...(ephemeralStart - 1)
    }

    private static func canBind(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// Whether something accepts TCP connections on 127.0.0.1:port.
    public static func isListening(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    public static func waitUntilListening(port: Int, timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if isListening(port: port) { return true }
            usleep(20_000)
        }
        return false
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
