import CBluetooth

#if canImport(Glibc)
    import Glibc
#endif

/// Opens the accessory protocol's channel: an L2CAP SOCK_SEQPACKET socket (BlueZ's
/// AF_BLUETOOTH, BTPROTO_L2CAP) connected to PSM 0x1001 of the accessory's BR/EDR address.
/// BlueZ brings the channel up over the ACL link of the paired, connected AirPods; the calls go
/// through `SocketCalls` so that a test can make them fail as the kernel does.
public struct L2CAPConnector: Sendable {
    public var calls: SocketCalls

    public init(calls: SocketCalls = .system) {
        self.calls = calls
    }

    /// `address`: the six bytes most significant first, as "A1:B2:C3:D4:E5:F6" reads.
    public func connect(to address: [UInt8], psm: UInt16 = AccessoryProtocol.psm) throws(AccessoryLinkError) -> PacketSocket {
        precondition(address.count == 6, "a Bluetooth address has 6 bytes")
        let descriptor = calls.socket(AF_BLUETOOTH, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_L2CAP)
        if descriptor < 0 { throw AccessoryLinkError.from(call: "socket", errno: errno) }
        let socket = PacketSocket(descriptor: descriptor)
        var target = sockaddr_l2()
        target.l2_family = sa_family_t(AF_BLUETOOTH)
        // Bluetooth's byte order is little-endian, for the PSM and for the address (bdaddr_t
        // holds the address least significant byte first).
        target.l2_psm = psm.littleEndian
        target.l2_bdaddr = bdaddr_t(b: (address[5], address[4], address[3], address[2], address[1], address[0]))
        target.l2_bdaddr_type = UInt8(BDADDR_BREDR)
        let result = withUnsafePointer(to: &target) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                calls.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_l2>.size))
            }
        }
        if result < 0 { throw AccessoryLinkError.from(call: "connect", errno: errno) }
        return socket
    }
}
