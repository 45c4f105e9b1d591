import AccessoryKit

/// Parses an accessory's report payload: native telemetry (`<base>/telemetry/<gateway>/<ID>`) and
/// the extension-role `<base>/accessory/<ID>/set` topic share these rules (mqtt-api.md).
///
/// Any of `placement` (`inEar`|`onHead`|`overTheEar`|`offHead`), `worn` + `hardware`
/// (`inEarBud`|`onEarHeadphone`|`overEarHeadphone`), `sources` (array of addresses),
/// `source_connected`, `source_disconnected`, `preferred_source`, `rssi`, `battery`
/// (`level`/`left`/`right`/`case` in percent 0...100, `charging`/`left_charging`/`right_charging`/`case_charging`
/// booleans); in native telemetry only, `imu` (one head-tracking IMU frame as hex). Unknown keys are ignored; a known key with a wrong type or value rejects the whole
/// report, which carries the accessory so the bridge can answer with `invalidRequest`.
public enum AccessoryReportParser {
    /// Parses a report payload for an accessory.
    public static func parse(
        _ payload: UnsafeRawBufferPointer, accessory: BluetoothAddress, gateway: String?
    ) -> Result<AccessoryReport, TelemetryRejection> {
        do throws(TelemetryRejection) {
            guard payload.count <= TelemetryLimits.maximumPayloadSize else {
                throw TelemetryRejection(
                    .payloadTooLarge, "payload of \(payload.count) bytes exceeds \(TelemetryLimits.maximumPayloadSize)")
            }
            var registers = false
            return .success(try parseReport(payload, accessory: accessory, gateway: gateway, registers: &registers))
        } catch {
            var rejection = error
            rejection.accessory = accessory
            rejection.gateway = gateway
            return .failure(rejection)
        }
    }

    /// Parses a report payload given as an array.
    public static func parse(
        _ payload: [UInt8], accessory: BluetoothAddress, gateway: String?
    ) -> Result<AccessoryReport, TelemetryRejection> {
        payload.withUnsafeBytes { parse($0, accessory: accessory, gateway: gateway) }
    }

    /// What an `accessory/<ID>/set` payload asks for.
    public enum Update: Hashable, Sendable {
        case report(AccessoryReport)
        /// The payload carries `capabilities`: a registration, which is the container role's
        /// business (`bridge/request/accessory/register`) and refused through `/set`.
        case register
    }

    /// Parses an `accessory/<ID>/set` payload in one pass: a report, or a registration attempt.
    public static func parseUpdate(_ payload: [UInt8], accessory: BluetoothAddress) -> Result<Update, TelemetryRejection> {
        payload.withUnsafeBytes { bytes in
            do throws(TelemetryRejection) {
                guard bytes.count <= TelemetryLimits.maximumPayloadSize else {
                    throw TelemetryRejection(
                        .payloadTooLarge, "payload of \(bytes.count) bytes exceeds \(TelemetryLimits.maximumPayloadSize)")
                }
                var registers = false
                let report = try parseReport(bytes, accessory: accessory, gateway: nil, registers: &registers)
                return .success(registers ? .register : .report(report))
            } catch {
                var rejection = error
                rejection.accessory = accessory
                return .failure(rejection)
            }
        }
    }

    /// - Parameter registers: set when the payload has a `capabilities` key; the report is
    ///   then returned before any field is checked.
    private static func parseReport(
        _ payload: UnsafeRawBufferPointer, accessory: BluetoothAddress, gateway: String?, registers: inout Bool
    ) throws(TelemetryRejection) -> AccessoryReport {
        var placement, worn, hardware, sources, connected, disconnected, preferred, rssi, battery, imu: JSONScanner.Value?
        var capabilities = false
        let fields = try JSONFields.scanObject(payload) { scanner, key, value in
            if key.hasEscapes {
                switch scanner.string(key) {
                case "capabilities": capabilities = true
                case "placement": placement = value
                case "worn": worn = value
                case "hardware": hardware = value
                case "sources": sources = value
                case "source_connected": connected = value
                case "source_disconnected": disconnected = value
                case "preferred_source": preferred = value
                case "rssi": rssi = value
                case "battery": battery = value
                case "imu": imu = value
                default: break
                }
                return
            }
            // Byte comparisons: building a String per key would dominate the cost.
            if scanner.string(key, equals: "placement") {
                placement = value
            } else if scanner.string(key, equals: "worn") {
                worn = value
            } else if scanner.string(key, equals: "hardware") {
                hardware = value
            } else if scanner.string(key, equals: "sources") {
                sources = value
            } else if scanner.string(key, equals: "source_connected") {
                connected = value
            } else if scanner.string(key, equals: "source_disconnected") {
                disconnected = value
            } else if scanner.string(key, equals: "preferred_source") {
                preferred = value
            } else if scanner.string(key, equals: "rssi") {
                rssi = value
            } else if scanner.string(key, equals: "battery") {
                battery = value
            } else if scanner.string(key, equals: "capabilities") {
                capabilities = true
            } else if scanner.string(key, equals: "imu") {
                imu = value
            }
        }
        if capabilities {
            registers = true
            return AccessoryReport(accessory: accessory, gateway: gateway, changes: [])
        }
        // The changes come in a fixed order (not the payload's), as the engine has always applied them.
        var changes: [AccessoryReport.Change] = []
        if let text = try fields.string(placement, "placement") {
            guard let value = AccessoryControlDevice.Placement(rawValue: text) else {
                throw TelemetryRejection(
                    .invalidValue, "unknown placement \(JSONFields.excerpt(text)); expected inEar, onHead, overTheEar or offHead",
                    field: "placement")
            }
            changes.append(.placement(value))
        }
        let isWorn = try fields.bool(worn, "worn")
        var hardwareType: HardwareType?
        if let text = try fields.string(hardware, "hardware") {
            guard let value = HardwareType(rawValue: text) else {
                throw TelemetryRejection(
                    .invalidValue, "unknown hardware \(JSONFields.excerpt(text)); expected inEarBud, onEarHeadphone or overEarHeadphone",
                    field: "hardware")
            }
            hardwareType = value
        }
        // `hardware` only says what `worn` means; alone it changes nothing.
        if let isWorn { changes.append(.worn(isWorn, hardware: hardwareType)) }
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
            changes.append(.sources(addresses))
        }
        if let source = try fields.address(connected, "source_connected") { changes.append(.sourceConnected(source)) }
        if let source = try fields.address(disconnected, "source_disconnected") { changes.append(.sourceDisconnected(source)) }
        if let source = try fields.address(preferred, "preferred_source") { changes.append(.preferredSource(source)) }
        if let value = try fields.dBm(rssi, "rssi") { changes.append(.rssi(value)) }
        if let battery {
            guard case .object(let range) = battery else { throw fields.wrongType("battery", battery, expected: "an object") }
            if let levels = try parseBattery(fields, range) { changes.append(.battery(levels)) }
        }
        // A head-tracking frame comes from the accessory's firmware through its relay (native
        // telemetry) only; `/set` is the extension role's update and ignores it like any unknown key.
        if gateway != nil, let text = try fields.string(imu, "imu") {
            // Any length: 0 or over 70 bytes is the engine's `invalidDataSize`, not a parse error.
            guard let frame = Hex.decode(text) else {
                throw TelemetryRejection(
                    .invalidValue, "'imu' must be hex digits in pairs (one IMU frame), not \(JSONFields.excerpt(text))", field: "imu")
            }
            changes.append(.sensorFrame(frame))
        }
        return AccessoryReport(accessory: accessory, gateway: gateway, changes: changes)
    }

    /// The battery levels in whole percent with the charging flags given for them (`charging`
    /// is `level`'s), or `nil` when the object holds no level: a flag without its level is not
    /// kept, as with a decoded advertisement. A flag of the wrong type rejects the report.
    private static func parseBattery(_ fields: JSONFields, _ range: Range<Int>) throws(TelemetryRejection) -> Battery? {
        var members: [(String, JSONScanner.Value)] = []
        fields.scanner.forEachMember(ofObject: range) { key, value in members.append((fields.scanner.string(key), value)) }
        var levels = Battery()
        for (key, value) in members {
            let field = "battery.\(key)"
            switch key {
            case "level", "left", "right", "case":
                guard let percent = try fields.number(value, field), percent.isFinite, (0...100).contains(percent) else {
                    throw TelemetryRejection(.invalidValue, "'\(field)' must be a percentage 0...100", field: field)
                }
                let whole = wholePercent(percent)
                switch key {
                case "level": levels.main = whole
                case "left": levels.left = whole
                case "right": levels.right = whole
                default: levels.chargingCase = whole
                }
            case "charging", "left_charging", "right_charging", "case_charging":
                let charging = try fields.bool(value, field)
                switch key {
                case "charging": levels.charging = charging
                case "left_charging": levels.leftCharging = charging
                case "right_charging": levels.rightCharging = charging
                default: levels.caseCharging = charging
                }
            default: break
            }
        }
        // A flag goes with its level, as a decoded advertisement's do: one without is not kept.
        if levels.main == nil { levels.charging = nil }
        if levels.left == nil { levels.leftCharging = nil }
        if levels.right == nil { levels.rightCharging = nil }
        if levels.chargingCase == nil { levels.caseCharging = nil }
        return levels.hasLevel ? levels : nil
    }

    /// A percentage 0...100 rounded half up to the whole percent the contract publishes.
    ///
    /// It goes through the fraction (`percent / 100 * 100`) as aabridge always has, so that every
    /// published number stays what it was: four halves (14.5, 28.5, 56.5, 57.5) land just below
    /// .5 that way and publish as 14, 28, 56 and 57. Rounded without `rounded()`, which needs
    /// libm (not linked by every product, see ``JSONFields/dBm(_:_:)``).
    static func wholePercent(_ percent: Double) -> Int {
        let scaled = percent / 100 * 100
        let truncated = Int(scaled)
        return scaled - Double(truncated) >= 0.5 ? truncated + 1 : truncated
    }
}
