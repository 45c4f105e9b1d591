import AccessoryKit

/// One entry of `sources:`: a friendly name for a source device (phone, laptop, TV).
public struct SourceConfiguration: Hashable, Sendable {
    public var address: BluetoothAddress
    public var name: String

    /// Creates an entry.
    public init(address: BluetoothAddress, name: String) {
        self.address = address
        self.name = name
    }
}
