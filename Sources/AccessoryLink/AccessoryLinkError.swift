#if canImport(Glibc)
    import Glibc
#endif

/// Why the keys could not be read from the accessory, each in words that name the cause.
/// None of them carries a key.
public enum AccessoryLinkError: Error, Equatable, Sendable {
    /// `socket(AF_BLUETOOTH, ...)` failed with EAFNOSUPPORT: this kernel has no Bluetooth sockets.
    case bluetoothUnsupported
    /// EACCES or EPERM: Bluetooth sockets need root or CAP_NET_RAW here.
    case permissionDenied(call: String, errno: Int32)
    /// EHOSTDOWN, ENOTCONN, EHOSTUNREACH, ECONNREFUSED, ETIMEDOUT at connect: the accessory is
    /// not connected to this box (or not in range, or not paired).
    case accessoryNotConnected(errno: Int32)
    /// ENODEV or EADDRNOTAVAIL: no Bluetooth adapter is up.
    case noAdapter(errno: Int32)
    /// Any other failure of a system call.
    case system(call: String, errno: Int32)
    /// The accessory did not answer within the time allowed.
    case timedOut(seconds: Int)
    /// The accessory closed the channel before its reply.
    case closed
    /// A packet that is not the accessory protocol.
    case notTheProtocol(length: Int)
    /// The keys reply ends too early.
    case truncatedReply(String)
    /// The keys reply cannot be read.
    case malformedReply(String)
    /// The reply has no IRK.
    case noIRK(encryptionKey: Bool)
    /// Too many other packets came, and no reply.
    case noReply(packets: Int)

    public var message: String {
        switch self {
        case .bluetoothUnsupported:
            "this system has no Bluetooth socket support (socket: \(Self.describe(EAFNOSUPPORT))): load the kernel's bluetooth module, or run this on the box whose adapter the AirPods are connected to"
        case .permissionDenied(let call, let code):
            "permission denied (\(call): \(Self.describe(code))): Bluetooth sockets need root or CAP_NET_RAW; run this with sudo"
        case .accessoryNotConnected(let code):
            "the AirPods are not connected to this box (connect: \(Self.describe(code))): pair them with BlueZ, connect them (bluetoothctl connect ADDR), then run this again"
        case .noAdapter(let code):
            "no Bluetooth adapter is available (\(Self.describe(code))): is one plugged in and powered (bluetoothctl power on)?"
        case .system(let call, let code): "\(call) failed: \(Self.describe(code))"
        case .timedOut(let seconds): "the AirPods did not answer the keys request within \(seconds) s"
        case .closed: "the AirPods closed the connection before sending their keys"
        case .notTheProtocol(let length):
            "the AirPods sent \(length) bytes that are not Apple's accessory protocol (is --device the AirPods?)"
        case .truncatedReply(let what): "the AirPods' keys reply is truncated: \(what)"
        case .malformedReply(let what): "the AirPods' keys reply is malformed: \(what)"
        case .noIRK(let encryptionKey):
            "the AirPods' keys reply has no IRK\(encryptionKey ? " (only an encryption key)" : " (no keys at all)"): they may not be paired with this box as their owner's"
        case .noReply(let packets): "the AirPods sent \(packets) packets but no keys reply"
        }
    }

    /// The kernel's name and words for an errno, e.g. "EHOSTDOWN, Host is down".
    static func describe(_ code: Int32) -> String {
        let names: [Int32: String] = [
            EAFNOSUPPORT: "EAFNOSUPPORT", EACCES: "EACCES", EPERM: "EPERM", EHOSTDOWN: "EHOSTDOWN", ENOTCONN: "ENOTCONN",
            EHOSTUNREACH: "EHOSTUNREACH", ECONNREFUSED: "ECONNREFUSED", ETIMEDOUT: "ETIMEDOUT", ENODEV: "ENODEV",
            EADDRNOTAVAIL: "EADDRNOTAVAIL", EPROTONOSUPPORT: "EPROTONOSUPPORT", ENOENT: "ENOENT",
        ]
        let text = strerror(code).map { String(cString: $0) } ?? "errno \(code)"
        return names[code].map { "\($0), \(text)" } ?? text
    }

    /// Classifies a failed call by the errno the kernel gave.
    static func from(call: String, errno code: Int32) -> AccessoryLinkError {
        switch code {
        case EAFNOSUPPORT, EPROTONOSUPPORT: .bluetoothUnsupported
        case EACCES, EPERM: .permissionDenied(call: call, errno: code)
        case EHOSTDOWN, ENOTCONN, EHOSTUNREACH, ECONNREFUSED, ETIMEDOUT, ECONNRESET: .accessoryNotConnected(errno: code)
        case ENODEV, EADDRNOTAVAIL: .noAdapter(errno: code)
        default: .system(call: call, errno: code)
        }
    }
}
