/// A 128-bit key an accessory is known by: its Identity Resolving Key, or the key that encrypts
/// the end of its proximity-pairing advertisement.
///
/// Users hold these in two forms, and paste whichever they have (identity.md, Keys):
/// - 32 hex digits, most significant byte first, as ESPresense and Theengs Gateway write them
///   (`:` `-` or spaces may separate the bytes);
/// - the base64 of the 16 bytes as the macOS Keychain stores them and Home Assistant's Private
///   BLE Device takes them. Those bytes are least significant first, so they are reversed.
/// Either may carry an `irk:` prefix, as Home Assistant accepts.
///
/// A key is a secret (it follows its owner's accessory anywhere): its description never shows
/// the bytes, so string interpolation, `print` and `dump` cannot leak it into a log line.
public struct AccessoryKey: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The 16 key bytes, most significant first (the order AES is given them in).
    public let bytes: [UInt8]
    /// Given as hex digits, whose byte order tools disagree on (an IRK in hex is tried in both
    /// orders: ``IRKOrder``). Base64 is the Keychain's, whose order is known. Not part of the
    /// key's identity: the same bytes are the same key however they were written.
    public let isHexText: Bool

    /// Why a text is not a key. The messages never repeat the text.
    public enum FormatError: Error, Hashable, Sendable, CustomStringConvertible {
        /// Neither 32 hex digits nor base64.
        case unrecognised
        /// Hex or base64 that decodes, to this many bytes instead of 16.
        case wrongLength(Int)

        public var description: String {
            switch self {
            case .unrecognised:
                "must be 32 hex digits (most significant byte first) or the base64 of 16 bytes as the macOS Keychain shows it"
            case .wrongLength(let count):
                "decodes to \(count) bytes; a key has 16"
            }
        }
    }

    /// A key from 16 bytes, most significant first.
    public init?(bytes: [UInt8], isHexText: Bool = false) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
        self.isHexText = isHexText
    }

    public static func == (lhs: AccessoryKey, rhs: AccessoryKey) -> Bool { lhs.bytes == rhs.bytes }

    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }

    /// Parses either form described on the type.
    public static func parse(_ text: String) -> Result<AccessoryKey, FormatError> {
        var body = text.trimmingWhitespace
        if body.lowercased().hasPrefix("irk:") { body = body.dropFirst(4) }
        let hexDigits = body.utf8.filter { $0 != UInt8(ascii: ":") && $0 != UInt8(ascii: "-") && $0 != UInt8(ascii: " ") }
        if !hexDigits.isEmpty, hexDigits.allSatisfy({ Hex.nibble($0) != nil }), hexDigits.count % 2 == 0,
            let bytes = hexDigits.withUnsafeBytes({ Hex.decode($0) })
        {
            // A 16-byte key is 32 hex digits; base64 of 16 bytes is 22-24 characters, so a
            // string of hex digits that is not 32 long is a hex key of the wrong length.
            guard let key = AccessoryKey(bytes: bytes, isHexText: true) else { return .failure(.wrongLength(bytes.count)) }
            return .success(key)
        }
        guard let decoded = Base64.decode(body) else { return .failure(.unrecognised) }
        guard let key = AccessoryKey(bytes: decoded.reversed()) else { return .failure(.wrongLength(decoded.count)) }
        return .success(key)
    }

    /// The key as 32 lower-case hex digits, most significant first. Only for storage and for
    /// handing the key to a request; never for a log line.
    public var hexDigits: String { Hex.encode(bytes) }

    public var description: String { "<key redacted>" }
    public var debugDescription: String { "AccessoryKey(<redacted>)" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
