import AccessoryKit
import Foundation
import Testing

@testable import Telemetry

/// One line of `Tests/Fixtures/gateway-payloads.jsonl`.
struct GatewayFixture: CustomTestStringConvertible, Sendable {
    let line: Int
    let format: GatewayFormat
    let topic: String
    let payload: String
    /// Either an object of expected values or a string naming the expected classification.
    let expectObject: [String: AnyHashableSendable]?
    let expectText: String?

    var testDescription: String { "line \(line) (\(format.rawValue)): \(topic)" }

    static func load() throws -> [GatewayFixture] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/gateway-payloads.jsonl")
        let text = try String(contentsOf: url, encoding: .utf8)
        var fixtures: [GatewayFixture] = []
        for (index, line) in text.split(separator: "\n").enumerated() where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let format = try #require(GatewayFormat(rawValue: object["format"] as? String ?? ""), "line \(index + 1): unknown format")
            fixtures.append(
                GatewayFixture(
                    line: index + 1, format: format,
                    topic: try #require(object["topic"] as? String), payload: try #require(object["payload"] as? String),
                    expectObject: (object["expect"] as? [String: Any]).map { $0.mapValues(AnyHashableSendable.init) },
                    expectText: object["expect"] as? String))
        }
        return fixtures
    }
}

/// A JSON value from the fixture file in a Sendable box.
struct AnyHashableSendable: @unchecked Sendable {
    // JSONSerialization values (NSString, NSNumber, NSNull, arrays, dictionaries) are immutable.
    let value: Any
    init(_ value: Any) { self.value = value }
    var string: String? { value as? String }
    var double: Double? { (value as? NSNumber).map(\.doubleValue) }
    var bool: Bool? { value as? Bool }
    var isNull: Bool { value is NSNull }
    var object: [String: Any]? { value as? [String: Any] }
}

@Suite struct FixtureTests {
    @Test func fixtureFileHasEveryFormat() throws {
        let fixtures = try GatewayFixture.load()
        #expect(fixtures.count >= 19)
        // Every format heard on MQTT; bluez is heard over D-Bus (BlueZGatewayFlowTests).
        #expect(Set(fixtures.map(\.format)) == Set(GatewayFormat.allCases.filter(\.isMQTT)))
    }

    @Test(arguments: try GatewayFixture.load())
    func fixtureLine(_ fixture: GatewayFixture) throws {
        let parser = TelemetryParser(format: fixture.format)
        let message = parser.parse(topic: fixture.topic, payload: Array(fixture.payload.utf8), receivedAt: 1_000)
        if let text = fixture.expectText {
            try checkClassification(text, message)
        } else {
            let expect = try #require(fixture.expectObject)
            for (key, value) in expect { try check(key, value, message) }
        }
    }

    private func checkClassification(_ text: String, _ message: TelemetryMessage) throws {
        if text.hasPrefix("ignored") {
            guard case .ignored = message else { Issue.record("expected ignored, got \(message)"); return }
        } else if text.hasPrefix("tracker") {
            guard case .trackerOffline(let gateway, let address) = message else {
                Issue.record("expected tracker offline, got \(message)"); return
            }
            #expect(gateway == "gw1")
            #expect(address.description == "AA:BB:CC:DD:EE:FF")
        } else if text.hasPrefix("rejected") {
            guard case .rejected(let rejection) = message else { Issue.record("expected rejection, got \(message)"); return }
            if text.contains("not hex") {
                #expect(rejection.code == .invalidHex)
                #expect(rejection.field == "manufacturerdata")
            } else if text.contains("unknown placement") {
                #expect(rejection.code == .invalidValue)
                #expect(rejection.field == "placement")
                // The bridge needs the accessory to publish `invalidRequest` on its error topic.
                #expect(rejection.accessory == BluetoothAddress("A1B2C3D4E5F6"))
            } else {
                Issue.record("no assertion for rejection '\(text)'")
            }
        } else {
            Issue.record("no assertion for expectation '\(text)'")
        }
    }

    private func advertisement(_ message: TelemetryMessage) throws -> Advertisement {
        guard case .advertisement(let advertisement) = message else {
            throw FixtureFailure("expected an advertisement, got \(message)")
        }
        return advertisement
    }

    private func check(_ key: String, _ expected: AnyHashableSendable, _ message: TelemetryMessage) throws {
        switch key {
        case "id":
            #expect(try advertisement(message).address.description == expected.string)
        case "rssi":
            #expect(try advertisement(message).rssi.map(Double.init) == expected.double)
        case "txpower":
            #expect(try advertisement(message).txPower.map(Double.init) == expected.double)
        case "name":
            #expect(try advertisement(message).name == expected.string)
        case "manufacturer":
            #expect(expected.isNull)
            #expect(try advertisement(message).manufacturerData.isEmpty)
        case "company_identifier":
            #expect(try advertisement(message).manufacturer.map { Double($0.companyIdentifier) } == expected.double)
        case "manufacturer_payload":
            #expect(try advertisement(message).manufacturer.map { Hex.encode($0.payload) } == expected.string)
        case "apple_type":
            let data = try #require(try advertisement(message).manufacturer)
            let typeText = try #require(expected.string?.split(separator: " ").first)
            #expect("0x" + Hex.encode([data.payload[0]]) == typeText)
            #expect(throws: ProximityPairing.DecodingError.notProximityPairing(data.payload[0])) {
                try ProximityPairing(manufacturerData: data)
            }
        case "service_uuid":
            #expect(try advertisement(message).serviceData.first?.uuid == BluetoothUUID(expected.string ?? "?"))
        case "service_data":
            #expect(try advertisement(message).serviceData.first.map { Hex.encode($0.data) } == expected.string)
        case "apple_proximity":
            let status = try #require(try advertisement(message).appleProximityPairing)
            for (field, value) in try #require(expected.object) { try checkProximity(field, AnyHashableSendable(value), status) }
        case "area":
            #expect(try advertisement(message).gatewayArea == expected.string)
        case "gateway":
            switch message {
            case .gatewayStatus(let status): #expect(status.gateway == expected.string)
            case .advertisement(let advertisement): #expect(advertisement.gateway == expected.string)
            default: Issue.record("expected a message naming a gateway, got \(message)")
            }
        case "state":
            guard case .gatewayStatus(let status) = message else { throw FixtureFailure("expected a gateway status, got \(message)") }
            #expect(status.state.rawValue == expected.string)
        case "placement":
            guard case .report(let report) = message else { throw FixtureFailure("expected a report, got \(message)") }
            #expect(statedPlacement(report)?.rawValue == expected.string)
        case "primary_source", "secondary_source":
            guard case .report(let report) = message else { throw FixtureFailure("expected a report, got \(message)") }
            let sources =
                report.changes.lazy.compactMap { change -> [BluetoothAddress]? in
                    if case .sources(let sources) = change { return sources }
                    return nil
                }.first ?? []
            let index = key == "primary_source" ? 0 : 1
            #expect((sources.count > index ? sources[index].description : nil) == expected.string)
        default:
            Issue.record("no assertion for expected key '\(key)'")
        }
    }

    private func checkProximity(_ field: String, _ expected: AnyHashableSendable, _ status: ProximityPairing) throws {
        switch field {
        case "model":
            let text = try #require(expected.string)
            let hex = try #require(text.split(separator: " ").first)
            #expect(String(format: "0x%04X", status.model) == hex)
            #expect(status.modelName == text.split(separator: " ", maxSplits: 1).last.map(String.init))
        case "left_in_ear": #expect(status.leftInEar == expected.bool)
        case "right_in_ear": #expect(status.rightInEar == expected.bool)
        // The fixtures write levels as fractions; the decoder gives whole percent.
        case "left_battery": #expect(status.leftBattery == expected.double.map { Int(($0 * 100).rounded()) })
        case "right_battery": #expect(status.rightBattery == expected.double.map { Int(($0 * 100).rounded()) })
        case "case_battery": #expect(status.caseBattery == expected.double.map { Int(($0 * 100).rounded()) })
        case "placement": #expect(status.knownModel?.placement(status)?.rawValue == expected.string)
        default: Issue.record("no assertion for apple_proximity key '\(field)'")
        }
    }
}

struct FixtureFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The placement a report states: directly, or by a wear reading with the hardware sent along
/// (the engine maps a bare `worn: true` by the product's hardware).
func statedPlacement(_ report: AccessoryReport) -> AccessoryControlDevice.Placement? {
    for change in report.changes {
        switch change {
        case .placement(let placement): return placement
        case .worn(let worn, let hardware): return hardware?.placement(worn: worn) ?? (worn ? nil : .offHead)
        default: continue
        }
    }
    return nil
}
