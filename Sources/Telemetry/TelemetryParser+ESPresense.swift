extension TelemetryParser {
    /// ESPresense: `espresense/devices/<device id>/<room>` with `mac` (12 hex digits), `rssi`
    /// (a float, rounded here), `name`; the room is the gateway. Devices ESPresense only knows by
    /// a fingerprint (no `mac`) are ignored: there is no address to attribute them to.
    static func parseESPresense(
        _ payload: UnsafeRawBufferPointer, gateway: String, receivedAt: Int64
    ) throws(TelemetryRejection) -> TelemetryMessage {
        var mac, rssi, name: JSONScanner.Value?
        let fields = try JSONFields.scanObject(payload) { scanner, key, value in
            if scanner.string(key, equals: "mac") {
                mac = value
            } else if scanner.string(key, equals: "rssi") {
                rssi = value
            } else if scanner.string(key, equals: "name") {
                name = value
            }
        }
        guard let address = try fields.address(mac, "mac") else {
            return .ignored("no 'mac': a device ESPresense identifies only by fingerprint")
        }
        var advertisement = Advertisement(gateway: gateway, address: address, receivedAt: receivedAt)
        advertisement.rssi = try fields.dBm(rssi, "rssi")
        advertisement.name = try fields.string(name, "name")
        return .advertisement(advertisement)
    }
}
