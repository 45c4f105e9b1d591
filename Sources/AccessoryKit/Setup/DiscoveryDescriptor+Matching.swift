extension DiscoveryDescriptor {
    /// Whether an advertisement matches every rule this descriptor gives.
    ///
    /// A Wi-Fi-only descriptor never matches a Bluetooth advertisement; the Wi-Fi
    /// fields of a mixed descriptor cannot be checked from an advertisement.
    /// - Parameter immediateRSSI: the `immediate` range threshold in dBm.
    public func matches(_ sighting: AdvertisementSighting, immediateRSSI: Int) -> Bool {
        guard usesBluetooth else { return false }
        if let company = bluetoothCompanyIdentifier {
            guard let data = sighting.manufacturerData, data.companyIdentifier == company else { return false }
            if let mask = bluetoothManufacturerDataMask, let blob = bluetoothManufacturerDataBlob,
                !Self.masked(data.payload, blob: blob, mask: mask)
            {
                return false
            }
        }
        if let service = bluetoothServiceUUID {
            let data = sighting.serviceData[service]
            guard data != nil || sighting.serviceUUIDs.contains(service) else { return false }
            if let mask = bluetoothServiceDataMask, let blob = bluetoothServiceDataBlob {
                guard let data, Self.masked(data, blob: blob, mask: mask) else { return false }
            }
        }
        if let substring = bluetoothNameSubstring {
            guard let name = sighting.name else { return false }
            switch bluetoothNameCompare {
            case .literal: guard name.contains(substring) else { return false }
            case .caseInsensitive: guard name.lowercased().contains(substring.lowercased()) else { return false }
            }
        }
        if bluetoothRange == .immediate && sighting.rssi < immediateRSSI { return false }
        return true
    }

    /// `(data & mask) == (blob & mask)` over the first `mask.count` bytes; shorter data fails.
    static func masked(_ data: [UInt8], blob: [UInt8], mask: [UInt8]) -> Bool {
        guard data.count >= mask.count, blob.count >= mask.count else { return false }
        for index in mask.indices where data[index] & mask[index] != blob[index] & mask[index] {
            return false
        }
        return true
    }
}
