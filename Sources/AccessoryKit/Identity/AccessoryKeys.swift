/// The keys an accessory can be given (identity.md, Keys): its Identity Resolving Key, which
/// recognises its rotating addresses, and the key that decrypts its proximity-pairing payload.
///
/// Both are secrets; what may be shown of them is ``presence``.
public struct AccessoryKeys: Hashable, Sendable {
    public var irk: AccessoryKey?
    public var encryptionKey: AccessoryKey?
    /// Which byte order of ``irk`` resolves the accessory's addresses.
    public var irkOrder: IRKOrder

    /// Creates a set of keys; both absent by default. An IRK given as hex is tried in both
    /// orders until one matches (``IRKOrder/notYet``), one from base64 as it is.
    public init(irk: AccessoryKey? = nil, encryptionKey: AccessoryKey? = nil, irkOrder: IRKOrder? = nil) {
        self.irk = irk
        self.encryptionKey = encryptionKey
        self.irkOrder = irkOrder ?? Self.order(of: irk)
    }

    /// The order a newly given IRK starts with.
    static func order(of irk: AccessoryKey?) -> IRKOrder {
        irk?.isHexText == true ? .notYet : .asGiven
    }

    /// The IRK's bytes to resolve addresses with, and in which order each is (both orders
    /// while ``irkOrder`` is not known yet; none without an IRK).
    public var irkCandidates: [(order: IRKOrder, bytes: [UInt8])] {
        irk.map { irkOrder.candidates($0.bytes) } ?? []
    }

    /// Whether neither key is set.
    public var isEmpty: Bool { irk == nil && encryptionKey == nil }

    /// Which keys are set: all that payloads, logs and Home Assistant may show.
    public var presence: KeyPresence { KeyPresence(irk: irk != nil, encryptionKey: encryptionKey != nil) }

    /// These keys with each change applied.
    public func applying(irk irkChange: KeyChange, encryptionKey encryptionChange: KeyChange) -> AccessoryKeys {
        let newIRK = irkChange.applied(to: irk)
        return AccessoryKeys(
            irk: newIRK, encryptionKey: encryptionChange.applied(to: encryptionKey), irkOrder: newIRK == irk ? irkOrder : nil)
    }

    /// These keys, with the ones set in `other` taking their place (the configuration file
    /// wins at start for the keys it gives, and leaves the others as stored).
    public func overridden(by other: AccessoryKeys) -> AccessoryKeys {
        let newIRK = other.irk ?? irk
        return AccessoryKeys(
            irk: newIRK, encryptionKey: other.encryptionKey ?? encryptionKey, irkOrder: newIRK == irk ? irkOrder : other.irkOrder)
    }
}

/// Whether each key is set (`"keys":{"irk":bool,"encryption_key":bool}`).
public struct KeyPresence: Hashable, Sendable {
    public var irk: Bool
    public var encryptionKey: Bool

    public init(irk: Bool, encryptionKey: Bool) {
        self.irk = irk
        self.encryptionKey = encryptionKey
    }
}

/// What a request does to one key: `accessory/keys` leaves an absent key as it is, sets a
/// given one and deletes one given as `null`.
public enum KeyChange: Hashable, Sendable {
    case keep
    case set(AccessoryKey)
    case delete

    /// The key after the change.
    public func applied(to key: AccessoryKey?) -> AccessoryKey? {
        switch self {
        case .keep: key
        case .set(let new): new
        case .delete: nil
        }
    }
}
