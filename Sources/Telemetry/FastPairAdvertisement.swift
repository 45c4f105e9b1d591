import AccessoryKit

/// What a Google Fast Pair provider (Pixel Buds, and many Sony, JBL and OnePlus headphones)
/// advertises in the service data of the Fast Pair service, UUID 0xFE2C.
///
/// Google publishes the format, and this follows its pages (one field type they leave unnamed
/// comes from Android's seeker, below; no code of it was taken):
/// - "Provider Advertising signal",
///   https://developers.google.com/nearby/fast-pair/specifications/service/provider :
///   when discoverable (pairing mode) the service data is the 24-bit model ID alone, 3 bytes.
///   When not discoverable it is the account data: a version and flags byte `0bVVVVFFFF`
///   (0x00), then fields, each a length and type byte `0bLLLLTTTT` followed by L bytes: first
///   the account key filter (type 0b0000 "show UI indication" or 0b0010 "hide UI
///   indication"), then the salt (type 0b0001). An empty account key list is the single
///   byte 0x00 (a filter of length 0). The LE Audio sharing payload, also on that page, is a
///   version byte, a model ID field (type 0b0111) and an FP capability map field (0b1000).
/// - "Battery Notification",
///   https://developers.google.com/nearby/fast-pair/specifications/extensions/batterynotification :
///   after the account key data an optional battery field, type 0b0011 (show UI indication)
///   or 0b0100 (hide), length 3, then one byte per battery `0bSVVVVVVV`, left bud, right bud,
///   case: S is charging, V the level 0...100 percent, 0b1111111 unknown.
/// - "Audio Switch", https://developers.google.com/nearby/fast-pair/specifications/extensions/sass :
///   a provider that supports it advertises the account data with version 0x1 and adds its
///   connection status (a field of type 0b0101); the Android Open Source Project's seeker
///   (the context hub nearby nanoapp, `FastPairAccountData::Parse`, whose comment points to
///   the Audio Switch page) also reads a "random resolvable data" field of type 0b0110. Both
///   are skipped here: they are about the provider's connections, not its battery.
/// - "Introduction", https://developers.google.com/nearby/fast-pair/specifications/introduction
///   ("Octet order"): multi-byte fields are big-endian, unlike the Bluetooth SIG's.
///
/// Fast Pair has no wear state and no placement: a Fast Pair product is configured with
/// `placement_decoder: none` (docs/telemetry.md). Nothing here is decrypted or verified (the
/// account key filter and the salt need the account keys), so a payload is taken at its word.
public enum FastPairAdvertisement: Hashable, Sendable {
    /// Why service data is not a Fast Pair layout this decoder knows. The bridge ignores such
    /// data and counts it (`fast_pair_ignored` in `bridge/health`): the advertisement still
    /// counts for presence, only its Fast Pair part is not read.
    public enum UnknownLayout: Error, Hashable, Sendable, CustomStringConvertible {
        /// No bytes at all.
        case empty
        /// A version other than 0 (the provider page) or 1 (Audio Switch); a new version may
        /// mean new fields or meanings.
        case unsupportedVersion(UInt8)
        /// Flag bits set; all of them are reserved, and a flag defined later may change how
        /// the fields read, so a battery read from it could be wrong.
        case reservedFlags(UInt8)
        /// A field's length runs past the end of the data.
        case fieldOverrun(type: UInt8, length: Int, available: Int)
        /// A field type no page above defines.
        case unknownFieldType(UInt8)
        /// A field that may appear once appears again (either account key filter type, either
        /// battery type, or the same other type twice).
        case repeatedField(UInt8)
        /// Account data must start with the account key filter; the LE Audio payload with the
        /// model ID. Carries the first field's type, `nil` when there is no field.
        case unexpectedFirstField(UInt8?)
        /// Fields of the LE Audio payload (model ID, capability map) mixed with account data.
        case mixedFields
        /// Account keys (a filter that is not empty) without the salt they are hashed with.
        case missingSalt
        /// A salt of other than 1 byte (the older specification) or 2 (the current one).
        case saltLength(Int)
        /// A model ID field of other than 3 bytes (it is 24 bits everywhere it is defined).
        case modelIDLength(Int)
        /// A battery field of other than 3 values.
        case batteryLength(Int)
        /// A battery value whose level is 101...126: neither a percentage nor "unknown".
        case batteryValue(UInt8)

        public var description: String {
            switch self {
            case .empty: "no data"
            case .unsupportedVersion(let version): "version \(version) (0 and 1 are known)"
            case .reservedFlags(let flags): "reserved flags 0x\(Hex.encode([flags]))"
            case .fieldOverrun(let type, let length, let available):
                "field type \(type) of \(length) bytes runs past the end (\(available) left)"
            case .unknownFieldType(let type): "unknown field type \(type)"
            case .repeatedField(let type): "field type \(type) repeated"
            case .unexpectedFirstField(let type): type.map { "first field of type \($0)" } ?? "no fields"
            case .mixedFields: "model ID fields mixed with account data"
            case .missingSalt: "account key filter without a salt"
            case .saltLength(let length): "salt of \(length) bytes"
            case .modelIDLength(let length): "model ID of \(length) bytes"
            case .batteryLength(let length): "battery field of \(length) values"
            case .batteryValue(let value): "battery value 0x\(Hex.encode([value]))"
            }
        }
    }

    /// The account data a provider advertises when it is not discoverable.
    public struct AccountData: Hashable, Sendable {
        /// Whether the provider has account keys (its account key filter is not empty).
        public var hasAccountKeys: Bool
        /// Whether the provider asks seekers to show their pairing indication (filter type
        /// 0b0000) rather than hide it (0b0010), e.g. while its case is open.
        public var showsIndication: Bool
        /// The battery notification, when the provider includes one.
        public var battery: FastPairBattery?

        /// Creates account data from its parts.
        public init(hasAccountKeys: Bool, showsIndication: Bool, battery: FastPairBattery? = nil) {
            self.hasAccountKeys = hasAccountKeys
            self.showsIndication = showsIndication
            self.battery = battery
        }
    }

    /// Discoverable (pairing mode, or the LE Audio sharing payload): the 24-bit model ID that
    /// Google's registry maps to a product.
    case modelID(UInt32)
    /// Not discoverable: the account data, with its battery notification if any.
    case accountData(AccountData)

    /// The Fast Pair service, whose service data this reads.
    public static let serviceUUID = BluetoothUUID(shortValue: 0xFE2C)

    /// Field types, the low nibble of a field's length and type byte (pages in the type's comment).
    enum FieldType {
        static let accountKeyFilterShown: UInt8 = 0b0000
        static let salt: UInt8 = 0b0001
        static let accountKeyFilterHidden: UInt8 = 0b0010
        static let batteryShown: UInt8 = 0b0011
        static let batteryHidden: UInt8 = 0b0100
        static let connectionStatus: UInt8 = 0b0101
        static let randomResolvableData: UInt8 = 0b0110
        static let modelID: UInt8 = 0b0111
        static let capabilityMap: UInt8 = 0b1000
    }

    /// Reads the service data of the Fast Pair service (the bytes after the UUID).
    /// - Throws: ``UnknownLayout`` when the bytes are not a layout of the pages above; any byte
    ///   string either decodes or throws, nothing traps.
    public init(serviceData data: [UInt8]) throws(UnknownLayout) {
        // Three bytes are the discoverable model ID, as the provider page says; account data
        // is not 3 bytes long (without account keys it is 2, 0x00 0x00; with keys at least 8:
        // the header, a filter of 4 or more bytes and a salt, each field with its own header).
        if data.count == 3 {
            self = .modelID(UInt32(data[0]) << 16 | UInt32(data[1]) << 8 | UInt32(data[2]))
            return
        }
        guard let header = data.first else { throw .empty }
        guard header >> 4 <= 1 else { throw .unsupportedVersion(header >> 4) }
        guard header & 0x0F == 0 else { throw .reservedFlags(header & 0x0F) }

        var seen: UInt16 = 0
        var firstType: UInt8?
        var filter: (length: Int, shown: Bool)?
        var hasSalt = false
        var battery: FastPairBattery?
        var modelID: UInt32?
        var index = 1
        while index < data.count {
            let length = Int(data[index] >> 4), type = data[index] & 0x0F
            let start = index + 1
            guard length <= data.count - start else {
                throw .fieldOverrun(type: type, length: length, available: data.count - start)
            }
            // The two filter types are one field, and so are the two battery types.
            let kind =
                switch type {
                case FieldType.accountKeyFilterHidden: FieldType.accountKeyFilterShown
                case FieldType.batteryHidden: FieldType.batteryShown
                default: type
                }
            guard seen & (1 << kind) == 0 else { throw .repeatedField(type) }
            seen |= 1 << kind
            if firstType == nil { firstType = type }
            let value = data[start..<(start + length)]
            switch type {
            case FieldType.accountKeyFilterShown, FieldType.accountKeyFilterHidden:
                filter = (length, type == FieldType.accountKeyFilterShown)
            case FieldType.salt:
                guard length == 1 || length == 2 else { throw .saltLength(length) }
                hasSalt = true
            case FieldType.batteryShown, FieldType.batteryHidden:
                battery = try FastPairBattery(values: value, showsIndication: type == FieldType.batteryShown)
            case FieldType.connectionStatus, FieldType.randomResolvableData, FieldType.capabilityMap:
                break
            case FieldType.modelID:
                guard length == 3 else { throw .modelIDLength(length) }
                modelID = value.reduce(0) { $0 << 8 | UInt32($1) }
            default:
                throw .unknownFieldType(type)
            }
            index = start + length
        }

        let leAudioFields: UInt16 = 1 << FieldType.modelID | 1 << FieldType.capabilityMap
        if let modelID {
            guard firstType == FieldType.modelID else { throw .unexpectedFirstField(firstType) }
            guard seen & ~leAudioFields == 0 else { throw .mixedFields }
            self = .modelID(modelID)
            return
        }
        guard let filter, firstType == FieldType.accountKeyFilterShown || firstType == FieldType.accountKeyFilterHidden else {
            throw .unexpectedFirstField(firstType)
        }
        guard seen & leAudioFields == 0 else { throw .mixedFields }
        // An empty filter means "no account keys": there is nothing to salt.
        guard hasSalt || filter.length == 0 else { throw .missingSalt }
        self = .accountData(AccountData(hasAccountKeys: filter.length > 0, showsIndication: filter.shown, battery: battery))
    }

    /// The battery notification, when the advertisement is account data that carries one.
    public var battery: FastPairBattery? {
        guard case .accountData(let account) = self else { return nil }
        return account.battery
    }
}
