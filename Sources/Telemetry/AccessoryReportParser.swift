/// Parses an accessory's report payload: native telemetry (`<base>/telemetry/<gateway>/<ID>`) and
/// the extension-role `<base>/accessory/<ID>/set` topic share these rules (mqtt-api.md).
///
/// Any of `placement` (`inEar`|`onHead`|`overTheEar`|`offHead`), `worn` + `hardware`
/// (`inEarBud`|`onEarHeadphone`|`overEarHeadphone`), `sources` (array of addresses),
/// `source_connected`, `source_disconnected`, `preferred_source`, `rssi`, `battery`
/// (`level`/`left`/`right`/`case` in percent 0...100, `charging`/`left_charging`/`right_charging`/`case_charging`
/// booleans). Unknown keys are ignored; a known key with a wrong type or value rejects the whole
/// report, which carries the accessory so the bridge can answer with `invalidRequest`.
public enum AccessoryReportParser {
    /// Parses a report payload for an accessory.
    public static func parse(
        _ payload: UnsafeRawBufferPointer, accessory: BluetoothAddress, gateway: String?, receivedAt: Int64
    ) -> Result<AccessoryReport, TelemetryRejection> {
        do throws(TelemetryRejection) {
            guard payload.count <= TelemetryLimits.maximumPayloadSize else {
                throw TelemetryRejection(.payloadTooLarge, "payload of \(payload.count) bytes exceeds \(TelemetryLimits.maximumPayloadSize)")
            }
            return .success(try parseReport(payload, accessory: accessory, gateway: gateway, receivedAt: receivedAt))
        } catch {
            var rejection = error
            rejection.accessory = accessory
            rejection.gateway = gateway
            return .failure(rejection)
        }
    }

    /// Parses a report payload given as an array.
    public static func parse(_ payload: [UInt8], accessory: BluetoothAddress, gateway: String?, receivedAt: Int64) -> Result<AccessoryReport, TelemetryRejection> {
        payload.withUnsafeBytes { parse($0, accessory: accessory, gateway: gateway, receivedAt: receivedAt) }
    }

    private static func parseReport(
        _ payload: UnsafeRawBufferPointer, accessory: BluetoothAddress, gateway: String?, receivedAt: Int64
    ) throws(TelemetryRejection) -> AccessoryReport {
        var placement, worn, hardware, sources, connected, disconnected, preferred, rssi, battery: JSONScanner.Value?
        let fields = try JSONFields.scanObject(payload) { scanner, key, value in
            if key.hasEscapes {
                switch scanner.string(key) {
                case "placement": placement = value
                case "worn": worn = value
                case "hardware": hardware = value
                case "sources": sources = value
                case "source_connected": connected = value
                case "source_disconnected": disconnected = value
                case "preferred_source": preferred = value
                case "rssi": rssi = value
                case "battery": battery = value
                default: break
                }
                return
            }
            // Byte comparisons: building a String per key would dominate the cost.
            if scanner.string(key, equals: "placement") { placement = value }
            else if scanner.string(key, equals: "worn") { worn = value }
            else if scanner.string(key, equals: "hardware") { hardware = value }
            else if scanner.string(key, equals: "sources") { sources = value }
            else if scanner.string(key, equals: "source_connected") { connected = value }
            else if scanner.string(key, equals: "source_disconnected") { disconnected = value }
            else if scanner.string(key, equals: "preferred_source") { preferred = value }
            else if scanner.string(key, equals: "rssi") { rssi = value }
            else if scanner.string(key, equals: "battery") { battery = value }
        }
        var report = AccessoryReport(accessory: accessory, gateway: gateway, receivedAt: receivedAt)
        if let text = try fields.string(placement, "placement") {
            guard let value = Placement(rawValue: text) else {
                throw TelemetryRejection(.invalidValue, "unknown placement \(JSONFields.excerpt(text)); expected inEar, onHead, overTheEar or offHead", field: "placement")
            }
            report.placement = value
        }
        report.worn = try fields.bool(worn, "worn")
        if let text = try fields.string(hardware, "hardware") {
            guard let value = AccessoryHardware(rawValue: text) else {
                throw TelemetryRejection(.invalidValue, "unknown hardware \(JSONFields.excerpt(text)); expected inEarBud, onEarHeadphone or overEarHeadphone", field: "hardware")
            }
            report.hardware = value
        }
        if let sources {
            guard case .array(let range) = sources else { throw fields.wrongType("sources", sources, expected: "an array of addresses") }
            var elements: [JSONScanner.Value] = []
            fields.scanner.forEachElement(ofArray: range) { elements.append($0) }
            var addresses: [BluetoothAddress] = []
            var seen = Set<BluetoothAddress>()
            for element in elements {
                guard let address = try fields.address(element, "sources") else { continue }
                // A source listed twice keeps its first position (a set: payloads may hold thousands).
                if seen.insert(address).inserted { addresses.append(address) }
            }
            report.sources = addresses
        }
        report.sourceConnected = try fields.address(connected, "source_connected")
        report.sourceDisconnected = try fields.address(disconnected, "source_disconnected")
        report.preferredSource = try fields.address(preferred, "preferred_source")
        report.rssi = try fields.dBm(rssi, "rssi")
        if let battery {
            guard case .object(let range) = battery else { throw fields.wrongType("battery", battery, expected: "an object") }
            report.battery = try parseBattery(fields, range)
        }
        return report
    }

    private static func parseBattery(_ fields: JSONFields, _ range: Range<Int>) throws(TelemetryRejection) -> BatteryStatus {
        var members: [(String, JSONScanner.Value)] = []
        fields.scanner.forEachMember(ofObject: range) { key, value in members.append((fields.scanner.string(key), value)) }
        var status = BatteryStatus()
        for (key, value) in members {
            let field = "battery.\(key)"
            switch key {
            case "level", "left", "right", "case":
                guard let percent = try fields.number(value, field), percent.isFinite, (0...100).contains(percent) else {
                    throw TelemetryRejection(.invalidValue, "'\(field)' must be a percentage 0...100", field: field)
                }
                let fraction = percent / 100
                switch key {
                case "level": status.level = fraction
                case "left": status.left = fraction
                case "right": status.right = fraction
                default: status.case = fraction
                }
            case "charging": status.charging = try fields.bool(value, field)
            case "left_charging": status.leftCharging = try fields.bool(value, field)
            case "right_charging": status.rightCharging = try fields.bool(value, field)
            case "case_charging": status.caseCharging = try fields.bool(value, field)
            default: break
            }
        }
        return status
    }
}
