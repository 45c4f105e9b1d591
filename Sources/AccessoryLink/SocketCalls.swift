import CBluetooth

#if canImport(Glibc)
    import Glibc
#endif

/// The system calls that open the channel, as values, so that a test can make each fail the
/// way the kernel does (EAFNOSUPPORT where there are no Bluetooth sockets, EACCES without the
/// right, EHOSTDOWN or ENOTCONN when the AirPods are not connected). Each returns what the
/// call returns and sets `errno` as it does.
public struct SocketCalls: Sendable {
    public var socket: @Sendable (_ domain: Int32, _ type: Int32, _ proto: Int32) -> Int32
    public var connect: @Sendable (_ descriptor: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32

    public init(
        socket: @escaping @Sendable (Int32, Int32, Int32) -> Int32,
        connect: @escaping @Sendable (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32
    ) {
        self.socket = socket
        self.connect = connect
    }

    /// The kernel's.
    public static let system = SocketCalls(
        socket: { Glibc.socket($0, $1, $2) },
        connect: { Glibc.connect($0, $1, $2) })
}
