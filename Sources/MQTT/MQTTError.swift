import CMosquitto

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

/// Every failure of the MQTT client: one struct with a code a program can switch over and a
/// message a person can act on (libmosquitto's `mosquitto_strerror` / reason-code text).
public struct MQTTError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// A libmosquitto `MOSQ_ERR_*` value.
        case library(Int32)
        /// The broker refused the connection; the CONNACK return code (3.1.1) or reason code (5).
        case connectionRefused(Int32)
        /// The broker refused a subscription (SUBACK 0x80 or a v5 reason code >= 0x80).
        case subscriptionRefused(Int32)
        /// The broker refused a QoS 1 publish (v5 PUBACK reason code >= 0x80, e.g. not authorised).
        case publishRefused(Int32)
        /// The configuration cannot work (bad URL, unreadable TLS file, ...).
        case invalidConfiguration
        /// The client was disconnected by its owner while the operation was pending.
        case shutDown
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// Wraps a `MOSQ_ERR_*` return value; `MOSQ_ERR_ERRNO` carries the system error text.
    init(library rc: Int32, context: String? = nil) {
        var text = String(cString: mosquitto_strerror(rc))
        if rc == MOSQ_ERR_ERRNO.rawValue {
            text = String(cString: strerror(errno))
        }
        if let context { text = "\(context): \(text)" }
        self.init(code: .library(rc), message: text)
    }

    /// A refused CONNACK, described in the words of the protocol version in use.
    init(connackCode rc: Int32, protocolVersion: MQTTConfiguration.ProtocolVersion) {
        let text =
            protocolVersion == .v5
            ? String(cString: mosquitto_reason_string(rc))
            : String(cString: mosquitto_connack_string(rc))
        self.init(code: .connectionRefused(rc), message: "connection refused by the broker: \(text)")
    }

    public var description: String { message }
}
