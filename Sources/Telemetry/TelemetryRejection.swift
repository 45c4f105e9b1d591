import AccessoryKit

/// Why a gateway message was rejected: a code for counting and tests, a message for the log.
public struct TelemetryRejection: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of defect.
    public enum Code: String, Hashable, Sendable {
        /// The payload exceeds ``TelemetryLimits/maximumPayloadSize``.
        case payloadTooLarge
        /// The payload is not well-formed JSON (structure, UTF-8, escapes, nesting depth).
        case invalidJSON
        /// The payload is JSON but not an object, or a value has the wrong JSON type.
        case wrongType
        /// A required key is absent.
        case missingField
        /// A Bluetooth address that does not parse.
        case invalidAddress
        /// Hex data with odd length or a non-hex character.
        case invalidHex
        /// A service UUID that does not parse.
        case invalidUUID
        /// RSSI outside ``TelemetryLimits/rssiRange``.
        case rssiOutOfRange
        /// A value of the right type that is not allowed (an unknown placement, a bad status word).
        case invalidValue
        /// Raw advertisement data whose AD structures are truncated or malformed.
        case malformedAdvertisement
        /// An Apple proximity-pairing message that no genuine accessory sends
        /// (``ProximityPairing/Malformation``: counterfeit, shorter or longer than its length
        /// byte, a battery nibble out of range): the message names which. A variant without
        /// status (a prefix other than 0x01) is not refused: it is a sighting.
        case invalidProximityPairing
    }

    /// The kind of defect.
    public var code: Code
    /// What is wrong, for the log; never contains the whole payload.
    public var message: String
    /// The offending key, when there is one.
    public var field: String?
    /// The accessory the topic named (native / `set`), so the bridge can send it an `invalidRequest` error.
    public var accessory: BluetoothAddress?
    /// The gateway from the topic, when known.
    public var gateway: String?

    /// Creates a rejection.
    public init(
        _ code: Code, _ message: String, field: String? = nil,
        accessory: BluetoothAddress? = nil, gateway: String? = nil
    ) {
        self.code = code
        self.message = message
        self.field = field
        self.accessory = accessory
        self.gateway = gateway
    }

    public var description: String {
        "\(code.rawValue): \(message)" + (field.map { " (field \($0))" } ?? "")
    }
}
