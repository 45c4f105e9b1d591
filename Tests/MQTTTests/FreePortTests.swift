import Foundation
import LocalProcess
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The ports the tests' brokers and consoles take: never from the kernel's ephemeral range (where
/// an outgoing connection beside the test may take them first), never twice in one process.
@Suite("Loopback ports for the tests")
struct FreePortTests {
    @Test("distinct, bindable, below the ephemeral range; a port something listens on is skipped")
    func distinctAndOutsideTheEphemeralRange() throws {
        let text = try String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)
        let ephemeralStart = Int(text.split(whereSeparator: \.isWhitespace)[0])!
        var seen = Set<Int>()
        for _ in 0..<200 {
            let port = try FreePort.find()
            #expect(port >= 10000 && port < ephemeralStart, "port \(port) is outside 10000..<\(ephemeralStart)")
            #expect(seen.insert(port).inserted, "port \(port) handed out twice")
            #expect(!FreePort.isListening(port: port))
        }

        // A listener on the next candidate: find() must pass over it.
        let next = seen.max()! + 1
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(next).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0 && listen(fd, 1) == 0, "could not listen on \(next) for the check")
        let after = try FreePort.find()
        #expect(after != next, "a port something listens on was handed out")
    }
}
