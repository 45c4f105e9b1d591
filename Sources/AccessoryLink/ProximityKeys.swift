/// The keys an accessory gave over the accessory protocol, in the order it sent their bytes.
/// Never printed: its description is redacted.
public struct ProximityKeys: Equatable, Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The identity resolving key (`MagicAccIRK`), 16 bytes.
    public let irk: [UInt8]
    /// The proximity-pairing encryption key (`MagicAccEncKey`), 16 bytes, when sent.
    public let encryptionKey: [UInt8]?

    public init(irk: [UInt8], encryptionKey: [UInt8]?) {
        self.irk = irk
        self.encryptionKey = encryptionKey
    }

    public var description: String { "ProximityKeys(<redacted>)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
