import AccessoryLink
import Foundation
import Synchronization
import Testing

/// The socket layer's failures, injected as the kernel gives them (this machine has no
/// Bluetooth adapter): each is classified and its message names the cause.
@Suite("L2CAP connector errors")
struct L2CAPConnectorTests {
    static let address: [UInt8] = [0xF0, 0x99, 0xB6, 0x12, 0x34, 0x56]

    static func failing(socket socketErrno: Int32? = nil, connect connectErrno: Int32? = nil) -> L2CAPConnector {
        L2CAPConnector(
            calls: SocketCalls(
                socket: { domain, type, proto in
                    if let socketErrno {
                        errno = socketErrno
                        return -1
                    }
                    // A real descriptor for the connector to close.
                    return Foundation.socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0)
                },
                connect: { _, _, _ in
                    if let connectErrno {
                        errno = connectErrno
                        return -1
                    }
                    return 0
                }))
    }

    static func error(_ connector: L2CAPConnector) -> AccessoryLinkError? {
        do {
            _ = try connector.connect(to: address)
            return nil
        } catch { return error }
    }

    @Test("socket() without Bluetooth support: EAFNOSUPPORT")
    func noBluetooth() {
        let error = Self.error(Self.failing(socket: EAFNOSUPPORT))
        #expect(error == .bluetoothUnsupported)
        #expect(error?.message.contains("no Bluetooth socket support") == true)
        #expect(error?.message.contains("EAFNOSUPPORT") == true)
    }

    @Test("EACCES: permission, with the remedy")
    func permission() {
        for (socketErrno, connectErrno) in [(EACCES, nil), (nil, EACCES), (EPERM, nil)] as [(Int32?, Int32?)] {
            let error = Self.error(Self.failing(socket: socketErrno, connect: connectErrno))
            guard case .permissionDenied = error else {
                Issue.record("\(String(describing: error))")
                continue
            }
            #expect(error?.message.contains("permission denied") == true)
            #expect(error?.message.contains(socketErrno == EPERM ? "EPERM" : "EACCES") == true)
            #expect(error?.message.contains("sudo") == true)
        }
    }

    @Test("EHOSTDOWN, ENOTCONN and the like at connect: the AirPods are not connected")
    func notConnected() {
        for (code, name) in [
            (EHOSTDOWN, "EHOSTDOWN"), (ENOTCONN, "ENOTCONN"), (EHOSTUNREACH, "EHOSTUNREACH"), (ECONNREFUSED, "ECONNREFUSED"),
        ] {
            let error = Self.error(Self.failing(connect: code))
            #expect(error == .accessoryNotConnected(errno: code))
            #expect(error?.message.contains("not connected to this box") == true)
            #expect(error?.message.contains(name) == true)
        }
    }

    @Test("no adapter, and an errno with no meaning of its own")
    func otherErrors() {
        #expect(Self.error(Self.failing(connect: ENODEV)) == .noAdapter(errno: ENODEV))
        let other = Self.error(Self.failing(connect: EINVAL))
        #expect(other == .system(call: "connect", errno: EINVAL))
        #expect(other?.message.hasPrefix("connect failed: ") == true)
    }

    @Test("the connector asks for an L2CAP SOCK_SEQPACKET socket and connects to PSM 0x1001 at the address, in Bluetooth's byte order")
    func addressAndPSM() throws {
        let seen = SeenCall()
        let connector = L2CAPConnector(
            calls: SocketCalls(
                socket: { domain, type, proto in
                    seen.set(socket: [domain, type & 0xF, proto])
                    return Foundation.socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0)
                },
                connect: { _, address, length in
                    let bytes = UnsafeRawBufferPointer(start: address, count: Int(length))
                    seen.set(address: Array(bytes))
                    return 0
                }))
        _ = try connector.connect(to: Self.address)
        // AF_BLUETOOTH 31, SOCK_SEQPACKET 5, BTPROTO_L2CAP 0.
        #expect(seen.socket == [31, 5, 0])
        // sa_family_t 31, PSM 0x1001 little-endian, the address least significant byte first,
        // the CID 0, BDADDR_BREDR 0.
        #expect(Array(seen.address.prefix(10)) == [31, 0, 0x01, 0x10, 0x56, 0x34, 0x12, 0xB6, 0x99, 0xF0])
    }
}

final class SeenCall: Sendable {
    private let storedSocket = Mutex<[Int32]>([])
    private let storedAddress = Mutex<[UInt8]>([])

    func set(socket: [Int32]) { storedSocket.withLock { $0 = socket } }
    func set(address: [UInt8]) { storedAddress.withLock { $0 = address } }
    var socket: [Int32] { storedSocket.withLock { $0 } }
    var address: [UInt8] { storedAddress.withLock { $0 } }
}
