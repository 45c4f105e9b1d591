import AccessoryKit

/// Service data (AD types 0x16, 0x20, 0x21): a service UUID and its data.
public struct ServiceData: Hashable, Sendable {
    /// The service the data belongs to.
    public var uuid: BluetoothUUID
    /// The data after the UUID.
    public var data: [UInt8]

    /// Creates service data from its parts.
    public init(uuid: BluetoothUUID, data: [UInt8]) {
        self.uuid = uuid
        self.data = data
    }
}
