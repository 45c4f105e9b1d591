#if canImport(Glibc)
    import Glibc
#endif

/// A connected SOCK_SEQPACKET descriptor (an L2CAP channel, or in tests one end of a Unix
/// socket pair): one packet per send and per receive, each receive bounded by a deadline.
/// Closes the descriptor when it goes.
public final class PacketSocket {
    /// The largest packet read; longer ones are cut by the kernel (MSG_TRUNC) and refused.
    public static let maximumPacket = 1024
    let descriptor: Int32

    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    public func send(_ bytes: [UInt8]) throws(AccessoryLinkError) {
        let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if sent < 0 { throw AccessoryLinkError.from(call: "send", errno: errno) }
        if sent != bytes.count { throw .system(call: "send", errno: EMSGSIZE) }
    }

    /// The next packet, or `nil` when the peer closed the channel.
    public func receive(until deadline: ContinuousClock.Instant, timeout: Duration) throws(AccessoryLinkError) -> [UInt8]? {
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero { throw .timedOut(seconds: Int(timeout.components.seconds)) }
            let milliseconds = Int32(min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1, 60_000))
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                throw AccessoryLinkError.from(call: "poll", errno: errno)
            }
            if ready == 0 { continue }
            var buffer = [UInt8](repeating: 0, count: Self.maximumPacket)
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_TRUNC)) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw AccessoryLinkError.from(call: "recv", errno: errno)
            }
            if count == 0 { return nil }
            if count > Self.maximumPacket { throw .malformedReply("a packet of \(count) bytes, more than \(Self.maximumPacket)") }
            return Array(buffer.prefix(count))
        }
    }
}
