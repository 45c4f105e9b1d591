import CMosquitto
import Foundation

/// Keeps the connection's socket in Linux's quick-ack mode: the kernel acknowledges what
/// arrives at once instead of delaying the ACK by up to 40 ms.
///
/// Brokers leave Nagle's algorithm on by default (mosquitto's `set_tcp_nodelay false`), so
/// with a delayed ACK here a small message to this client waits behind the previous one's
/// ACK (figures in docs/performance.md, "MQTT client notes"). The mode lapses, so it is
/// renewed before the loop reads, but at most once a millisecond: renewing is a system call,
/// one per message in a flood, where the ACKs go out anyway (every second full segment).
struct QuickAcknowledgement {
    /// How long a renewal is taken to last.
    static let renewalNanoseconds: UInt64 = 1_000_000
    private var renewedAt: UInt64?

    /// Renews the mode on `mosq`'s socket unless it was renewed less than
    /// ``renewalNanoseconds`` ago.
    mutating func renew(_ mosq: OpaquePointer) {
        let now = DispatchTime.now().uptimeNanoseconds
        if let renewedAt, now &- renewedAt < Self.renewalNanoseconds { return }
        let fd = mosquitto_socket(mosq)
        guard fd >= 0 else { return }
        var on: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_QUICKACK, &on, socklen_t(MemoryLayout<Int32>.size))
        renewedAt = now
    }
}
