import AccessoryKit

extension TelemetryParser {
    /// Tasmota (ESP32 BLE driver, `BLEDetails`): `tele/<topic>/BLE` with
    /// `{"details":{"mac":"001A22092C9A","p":"<raw advertisement hex>","RSSI":-70}}`; the raw
    /// advertisement is parsed into its AD structures. Other `BLE` messages (device lists without
    /// `details`) carry no advertisement and are ignored.
    static func parseTasmota(
        _ payload: UnsafeRawBufferPointer, gateway: String, receivedAt: Int64
    ) throws(TelemetryRejection) -> TelemetryMessage {
        var details: JSONScanner.Value?
        let fields = try JSONFields.scanObject(payload) { scanner, key, value in
            if scanner.string(key, equals: "details") { details = value }
        }
        guard let details else { return .ignored("no 'details': not a raw advertisement") }
        guard case .object(let range) = details else { throw fields.wrongType("details", details, expected: "an object") }
        var mac, raw, rssi: JSONScanner.Value?
        fields.scanner.forEachMember(ofObject: range) { key, value in
            let scanner = fields.scanner
            if scanner.string(key, equals: "mac") {
                mac = value
            } else if scanner.string(key, equals: "p") {
                raw = value
            } else if scanner.string(key, equals: "RSSI") || scanner.string(key, equals: "rssi") {
                rssi = value
            }
        }
        guard let macValue = mac else { throw TelemetryRejection(.missingField, "'details' has no 'mac'", field: "mac") }
        guard case .string(let macRef) = macValue else { throw fields.wrongType("mac", macValue, expected: "an address string") }
        // Tasmota may append the address type as `/1`.
        var macText = fields.scanner.string(macRef)
        if let slash = macText.firstIndex(of: "/") { macText = String(macText[..<slash]) }
        guard let address = BluetoothAddress(macText) else {
            throw TelemetryRejection(.invalidAddress, "'mac' \(JSONFields.excerpt(macText)) is not a Bluetooth address", field: "mac")
        }
        guard let bytes = try fields.hex(raw, "p") else { throw TelemetryRejection(.missingField, "'details' has no 'p'", field: "p") }
        let data = try AdvertisingData(parsing: bytes)
        var advertisement = Advertisement(gateway: gateway, address: address, receivedAt: receivedAt)
        advertisement.rssi = try fields.dBm(rssi, "RSSI")
        advertisement.flags = data.flags
        advertisement.name = data.name
        advertisement.txPower = try data.txPower.map { (power: Int) throws(TelemetryRejection) -> Int in
            guard TelemetryLimits.rssiRange.contains(power) else {
                throw TelemetryRejection(.rssiOutOfRange, "TX power \(power) dBm is outside \(TelemetryLimits.rssiRange)", field: "p")
            }
            return power
        }
        advertisement.manufacturerData = data.manufacturerData
        advertisement.serviceData = data.serviceData
        advertisement.serviceUUIDs = data.serviceUUIDs
        try refuseMalformedProximityPairing(advertisement, field: "p")
        return .advertisement(advertisement)
    }
}
