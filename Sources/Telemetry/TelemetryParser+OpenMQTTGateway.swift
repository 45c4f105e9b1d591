import AccessoryKit

extension TelemetryParser {
    /// OpenMQTTGateway and Theengs Gateway: `home/<gw>/BTtoMQTT/<MAC>` with a flat JSON object.
    ///
    /// Raw fields (with `pubadvdata` on): `id`, `mac_type`, `rssi`, `txpower`, `name`,
    /// `manufacturerdata` (hex, company id little-endian first, as on air), `servicedata` with
    /// `servicedatauuid` (`0xfe2c`, `fe2c` or 128-bit). Keys added by the gateways' decoders
    /// (`brand`, `model`, `distance`, ...) are ignored. A message without `id` is the gateway's own
    /// configuration on the bare `BTtoMQTT` topic; `{"id","state":"offline"}` without `rssi` is a
    /// tracker leaving this gateway's range.
    ///
    /// The relay (`ha_relay`, `readsArea`) adds `area`, its scanner's Home Assistant area.
    static func parseOpenMQTTGateway(
        _ payload: UnsafeRawBufferPointer, gateway: String, receivedAt: Int64, readsArea: Bool = false
    ) throws(TelemetryRejection) -> TelemetryMessage {
        var id, macType, rssi, txPower, name, manufacturer, serviceData, serviceUUID, state, area: JSONScanner.Value?
        let fields = try JSONFields.scanObject(payload) { scanner, key, value in
            if key.hasEscapes {
                Self.matchEscapedKey(
                    scanner, key, value, &id, &rssi, &name, &state, &txPower, &macType, &serviceData, &serviceUUID, &manufacturer)
                return
            }
            // Dispatch on length first so most keys cost at most one comparison.
            switch key.end - key.start {
            case 2: if scanner.string(key, equals: "id") { id = value }
            case 4:
                if scanner.string(key, equals: "rssi") {
                    rssi = value
                } else if scanner.string(key, equals: "name") {
                    name = value
                } else if readsArea && scanner.string(key, equals: "area") {
                    area = value
                }
            case 5: if scanner.string(key, equals: "state") { state = value }
            case 7: if scanner.string(key, equals: "txpower") { txPower = value }
            case 8: if scanner.string(key, equals: "mac_type") { macType = value }
            case 11: if scanner.string(key, equals: "servicedata") { serviceData = value }
            case 15: if scanner.string(key, equals: "servicedatauuid") { serviceUUID = value }
            case 16: if scanner.string(key, equals: "manufacturerdata") { manufacturer = value }
            default: break
            }
        }
        guard let id else { return .ignored("no 'id': the gateway's own message, not an advertisement") }
        guard let address = try fields.address(id, "id") else { return .ignored("no 'id'") }
        let stateText = try fields.string(state, "state")
        let rssiValue = try fields.dBm(rssi, "rssi")
        if rssiValue == nil, let stateText, stateText.lowercased() == "offline" {
            return .trackerOffline(gateway: gateway, address: address)
        }
        var advertisement = Advertisement(gateway: gateway, address: address, rssi: rssiValue, receivedAt: receivedAt)
        if let type = try fields.number(macType, "mac_type"), type >= 0, type <= 3, Double(Int(type)) == type {
            advertisement.isRandomAddress = Int(type) & 1 == 1 // NimBLE: 0 public, 1 random, 2/3 their identity forms
        }
        advertisement.txPower = try fields.dBm(txPower, "txpower")
        advertisement.name = try fields.string(name, "name")
        // Bounded like a gateway's name: it is shown on bridge/gateways.
        if let areaText = try fields.string(area, "area"), !areaText.isEmpty, areaText.utf8.count <= 64 {
            advertisement.gatewayArea = areaText
        }
        if let raw = try fields.hex(manufacturer, "manufacturerdata") {
            guard let data = ManufacturerData(raw: raw) else {
                throw TelemetryRejection(
                    .invalidHex, "'manufacturerdata' has \(raw.count) byte(s), needs a 2-byte company identifier", field: "manufacturerdata"
                )
            }
            advertisement.manufacturerData = [data]
        }
        let data = try fields.hex(serviceData, "servicedata")
        if let uuidText = try fields.string(serviceUUID, "servicedatauuid") {
            guard let uuid = BluetoothUUID(uuidText) else {
                throw TelemetryRejection(
                    .invalidUUID, "'servicedatauuid' \(JSONFields.excerpt(uuidText)) is not a UUID", field: "servicedatauuid")
            }
            // Service data without its UUID cannot be attributed to a service, so it is dropped.
            if let data { advertisement.serviceData = [ServiceData(uuid: uuid, data: data)] }
        }
        try refuseMalformedProximityPairing(advertisement, field: "manufacturerdata")
        return .advertisement(advertisement)
    }

    /// The slow path for a key written with escapes (legal JSON, never seen from real gateways).
    private static func matchEscapedKey(
        _ scanner: JSONScanner, _ key: JSONScanner.StringRef, _ value: JSONScanner.Value,
        _ id: inout JSONScanner.Value?, _ rssi: inout JSONScanner.Value?, _ name: inout JSONScanner.Value?,
        _ state: inout JSONScanner.Value?, _ txPower: inout JSONScanner.Value?, _ macType: inout JSONScanner.Value?,
        _ serviceData: inout JSONScanner.Value?, _ serviceUUID: inout JSONScanner.Value?, _ manufacturer: inout JSONScanner.Value?
    ) {
        switch scanner.string(key) {
        case "id": id = value
        case "rssi": rssi = value
        case "name": name = value
        case "state": state = value
        case "txpower": txPower = value
        case "mac_type": macType = value
        case "servicedata": serviceData = value
        case "servicedatauuid": serviceUUID = value
        case "manufacturerdata": manufacturer = value
        default: break
        }
    }
}
