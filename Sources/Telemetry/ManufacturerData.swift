/// Manufacturer-specific advertisement data (AD type 0xFF): a company identifier and its payload.
public struct ManufacturerData: Hashable, Sendable {
    /// The Bluetooth SIG company identifier (0x004C is Apple). On air it is little-endian first.
    public var companyIdentifier: UInt16
    /// The bytes after the company identifier.
    public var payload: [UInt8]

    /// Creates manufacturer data from its parts.
    public init(companyIdentifier: UInt16, payload: [UInt8]) {
        self.companyIdentifier = companyIdentifier
        self.payload = payload
    }

    /// Splits the raw AD content: two bytes of company identifier, little-endian, then the payload.
    /// - Returns: `nil` when there are fewer than two bytes.
    public init?(raw: some Collection<UInt8>) {
        guard raw.count >= 2 else { return nil }
        let first = raw.first!, second = raw[raw.index(after: raw.startIndex)]
        self.init(companyIdentifier: UInt16(second) << 8 | UInt16(first), payload: Array(raw.dropFirst(2)))
    }
}
