/// Manufacturer-specific advertisement data: the company identifier and what follows it.
public struct ManufacturerData: Hashable, Sendable {
    /// The Bluetooth SIG company identifier (the first two bytes, little-endian, on the air).
    public var companyIdentifier: UInt16
    /// The bytes after the company identifier.
    public var payload: [UInt8]

    /// Creates manufacturer data from its parts.
    public init(companyIdentifier: UInt16, payload: [UInt8]) {
        self.companyIdentifier = companyIdentifier
        self.payload = payload
    }

    /// Splits raw manufacturer data as it is advertised (company identifier
    /// little-endian first); nil when shorter than two bytes.
    public init?(raw: some Collection<UInt8>) {
        guard raw.count >= 2 else { return nil }
        let bytes = Array(raw)
        self.init(companyIdentifier: UInt16(bytes[0]) | UInt16(bytes[1]) << 8, payload: Array(bytes[2...]))
    }
}
