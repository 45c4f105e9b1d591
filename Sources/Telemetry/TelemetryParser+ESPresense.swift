extension TelemetryParser {
    /// ESPresense: `espresense/devices/<device id>/<room>` with `mac` (12 hex digits), `rssi`
    /// (a float, rounded here), `name`; the room is the gateway. Devices ESPresense only knows by
    /// a fingerprint (no `mac`) are ignored: there is no address to attribute them to.
    ///
    /// A device whose address ESPresense resolved with one of its `known_irks` has the id
    /// `irk:<32 hex digits>` (`BleFingerprint::fingerprintAddress`, ESPresense's
    /// src/BleFingerprint.cpp): the key is kept as ``Advertisement/knownIRK``, and never
    /// appears in a rejection (an id that is not exactly that is simply not taken as a key).
    static func parseESPresense(
        _ payload: UnsafeRawBufferPointer, gateway: String, receivedAt: Int64
    ) throws(TelemetryRejection) -> TelemetryMessage {
        var mac, rssi, name, id: JSONScanner.Value?
        let fields = try JSONFields.scanObject(payload) { scanner, key, value in
            if scanner.string(key, equals: "mac") {
                mac = value
            } else if scanner.string(key, equals: "rssi") {
                rssi = value
            } else if scanner.string(key, equals: "name") {
                name = value
            } else if scanner.string(key, equals: "id") {
                id = value
            }
        }
        guard let address = try fields.address(mac, "mac") else {
            return .ignored("no 'mac': a device ESPresense identifies only by fingerprint")
        }
        var advertisement = Advertisement(gateway: gateway, address: address, receivedAt: receivedAt)
        advertisement.rssi = try fields.dBm(rssi, "rssi")
        advertisement.name = try fields.string(name, "name")
        advertisement.knownIRK = (try? fields.string(id, "id")).flatMap { $0.flatMap(Self.knownIRK) }
        return .advertisement(advertisement)
    }

    /// The 16 bytes of an `irk:<32 hex digits>` id, else nil.
    static func knownIRK(_ id: String) -> [UInt8]? {
        let utf8 = Array(id.utf8)
        guard utf8.count == 36, utf8.starts(with: Array("irk:".utf8)) else { return nil }
        func nibble(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for offset in stride(from: 4, to: 36, by: 2) {
            guard let high = nibble(utf8[offset]), let low = nibble(utf8[offset + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}
