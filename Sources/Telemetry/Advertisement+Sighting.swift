import AccessoryKit

extension Advertisement {
    /// The engine's view of this advertisement: attributed to `identity` (the address itself, or
    /// the accessory a resolvable private address resolved to) and decoded with the product's
    /// placement decoder.
    /// - Parameters:
    ///   - identity: the accessory the sighting counts for.
    ///   - decoder: the product's placement decoder (`.none` for an unknown advertiser).
    ///   - hardware: the product's hardware type, which decides what "worn" means.
    public func sighting(identity: BluetoothAddress, decoder: PlacementDecoder, hardware: HardwareType?) -> AdvertisementSighting {
        var serviceDataByUUID: [BluetoothUUID: [UInt8]] = [:]
        for entry in serviceData { serviceDataByUUID[entry.uuid] = entry.data }
        // Descriptors and availability need a signal strength; a sighting without one
        // (a decoded-only message) still proves the accessory is around, at the floor, but
        // says nothing about distance: it is marked so that it does not count for the room.
        return AdvertisementSighting(
            gateway: gateway, accessoryID: identity, rssi: rssi ?? TelemetryLimits.rssiRange.lowerBound, name: name,
            manufacturerData: manufacturer, serviceData: serviceDataByUUID, serviceUUIDs: serviceUUIDs,
            decoded: decoder.decode(self, hardware: hardware), rssiMeasured: rssi != nil)
    }
}
