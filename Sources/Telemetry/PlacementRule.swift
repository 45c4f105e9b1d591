/// The generic placement decoder (`placement_decoder: {rule: {...}}` in configuration.md):
/// the accessory is worn when `(byte[offset] & mask) == worn_when` in its manufacturer or
/// service data.
public struct PlacementRule: Hashable, Sendable {
    /// Where the byte is read.
    public enum Source: Hashable, Sendable {
        /// Manufacturer data; `offset` counts from the first byte *after* the company identifier,
        /// as AccessorySetupKit's manufacturer data blob does.
        case manufacturer(companyIdentifier: UInt16?)
        /// Service data of the given service, or of the first service when `nil`; `offset` counts
        /// from the first byte after the UUID.
        case service(BluetoothUUID?)
    }

    public var source: Source
    public var offset: Int
    public var mask: UInt8
    public var wornWhen: UInt8

    /// Creates a rule.
    public init(source: Source, offset: Int, mask: UInt8, wornWhen: UInt8) {
        self.source = source
        self.offset = offset
        self.mask = mask
        self.wornWhen = wornWhen
    }

    /// Whether the advertisement says worn; `nil` when it lacks the data or the byte.
    public func worn(in advertisement: Advertisement) -> Bool? {
        let data: [UInt8]?
        switch source {
        case .manufacturer(let company):
            data = advertisement.manufacturerData.first { company == nil || $0.companyIdentifier == company }?.payload
        case .service(let uuid):
            data = uuid.map { advertisement.serviceData(for: $0) } ?? advertisement.serviceData.first?.data
        }
        guard let data, offset >= 0, offset < data.count else { return nil }
        return data[offset] & mask == wornWhen
    }

    /// The placement the advertisement means for hardware of the given kind, or `nil` when unknown.
    public func placement(in advertisement: Advertisement, hardware: AccessoryHardware) -> Placement? {
        worn(in: advertisement).map { Placement(worn: $0, hardware: hardware) }
    }
}
