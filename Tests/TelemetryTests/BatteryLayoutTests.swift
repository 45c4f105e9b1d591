import AccessoryKit
import Foundation
import TestSupport
import Testing

@testable import Telemetry

/// Batteries by model (household.md, "What gateways and advertisements really say"): single
/// batteries, charging flags, unknown nibbles, refused frames, and the per-model table of
/// docs/telemetry.md, which is generated from the catalogue here so that it cannot drift.
@Suite("batteries by model")
struct BatteryLayoutTests {
    /// A full proximity-pairing message (25 bytes after type and length) of `model`.
    static func frame(model: UInt16, status: UInt8, battery: UInt8, chargingAndCase: UInt8, length: UInt8 = 0x19) -> [UInt8] {
        [0x07, length, 0x01, UInt8(model & 0xFF), UInt8(model >> 8), status, battery, chargingAndCase, 0x00, 0x00, 0x00]
            + [UInt8](repeating: 0, count: Int(length) - 9)
    }

    static func decode(_ payload: [UInt8]) throws(ProximityPairing.DecodingError) -> ProximityPairing {
        try ProximityPairing(manufacturerData: ManufacturerData(companyIdentifier: 0x004C, payload: payload))
    }

    @Test("the issue's three examples: AirPods Max 50 %, Powerbeats 4 20 %, Beats Flex 40 % publish main only")
    func singleBatteryExamples() throws {
        // AirPods Max, status 0x02 (the right side broadcasts): the primary nibble is 5.
        let max = try Self.decode(Self.frame(model: 0x200A, status: 0x02, battery: 0x05, chargingAndCase: 0x80))
        #expect(max.battery == Battery(main: 50, charging: false))
        // The same with bit 0x20 (the left side broadcasts): still the primary nibble.
        let flipped = try Self.decode(Self.frame(model: 0x200A, status: 0x22, battery: 0x05, chargingAndCase: 0x10))
        #expect(flipped.battery == Battery(main: 50, charging: true))
        let powerbeats = try Self.decode(Self.frame(model: 0x200D, status: 0x00, battery: 0x02, chargingAndCase: 0x00))
        #expect(powerbeats.battery == Battery(main: 20, charging: false))
        let flex = try Self.decode(Self.frame(model: 0x2010, status: 0x00, battery: 0xF4, chargingAndCase: 0x8F))
        #expect(flex.battery == Battery(main: 40, charging: false))
    }

    @Test("every single-battery model of household.md has one battery, the others two buds and a case")
    func layoutsByModel() {
        let single = Set(AppleModelCatalogue.models.filter { $0.batteries == .single }.map(\.name))
        #expect(
            single == [
                "AirPods Max", "AirPods Max (USB-C)", "AirPods Max 2", "Powerbeats3", "Powerbeats4", "BeatsX", "Beats Flex",
                "Beats Solo3", "Beats Solo Pro", "Beats Solo 4", "Beats Studio3", "Beats Studio Pro",
            ])
        // Earbuds with a case stay pods, Beats included.
        for name in ["Beats Studio Buds", "Beats Solo Buds", "Powerbeats Pro", "Beats Fit Pro", "AirPods Pro"] {
            #expect(AppleModelCatalogue.models.first { $0.name == name }?.batteries == .pods, "\(name)")
        }
    }

    @Test("pods: each known level with its charging flag; an unknown nibble omits key and flag")
    func podsAndUnknownNibbles() throws {
        // Right broadcasts (0x20 clear): right 70 % charging (0x01), left unknown (F), case 30 %
        // charging (0x04).
        let pods = try Self.decode(Self.frame(model: 0x200E, status: 0x02, battery: 0xF7, chargingAndCase: 0x53))
        #expect(pods.battery == Battery(right: 70, chargingCase: 30, rightCharging: true, caseCharging: true))
        // Everything unknown: no battery at all.
        let unknown = try Self.decode(Self.frame(model: 0x200E, status: 0x02, battery: 0xFF, chargingAndCase: 0x0F))
        #expect(unknown.battery == nil)
        let single = try Self.decode(Self.frame(model: 0x200A, status: 0x02, battery: 0x0F, chargingAndCase: 0x01))
        #expect(single.battery == nil)
    }

    @Test("refused frames: counterfeit, shorter or longer than the length byte, nibbles 11...14; never another prefix")
    func refusedFrames() throws {
        func malformation(_ payload: [UInt8]) -> ProximityPairing.Malformation? {
            do throws(ProximityPairing.DecodingError) {
                _ = try Self.decode(payload)
                return nil
            } catch {
                if case .malformed(let malformation) = error { return malformation }
                return nil
            }
        }
        let good = Self.frame(model: 0x200E, status: 0x22, battery: 0x55, chargingAndCase: 0x05)
        #expect(malformation(good) == nil)
        #expect(malformation(Self.frame(model: 0x200E, status: 0x75, battery: 0xAA, chargingAndCase: 0x58, length: 0x13)) == .counterfeit)
        // A prefix other than 0x01 is a genuine variant without status (issue 48): no status is
        // decoded, and it is not refused.
        for first: UInt8 in [0x00, 0x06, 0x07, 0x42] {
            var prefix = good
            prefix[2] = first
            #expect(malformation(prefix) == nil, "prefix \(first)")
            #expect(throws: ProximityPairing.DecodingError.noStatus(first)) { try Self.decode(prefix) }
        }
        #expect(malformation(Array(good.dropLast())) == .shorterThanLength)
        #expect(malformation(good + [0x42]) == .longerThanLength)
        #expect(malformation(good + [0x10, 0x05, 0x01]) == .longerThanLength, "a message that runs past the end")
        // Another whole message after it is fine.
        #expect(malformation(good + [0x10, 0x01, 0x01]) == nil)
        for nibble: UInt8 in 11...14 {
            #expect(malformation(Self.frame(model: 0x200E, status: 0x22, battery: nibble, chargingAndCase: 0x05)) == .nibbleOutOfRange)
            #expect(malformation(Self.frame(model: 0x200E, status: 0x22, battery: nibble << 4, chargingAndCase: 0x05)) == .nibbleOutOfRange)
            #expect(malformation(Self.frame(model: 0x200E, status: 0x22, battery: 0x55, chargingAndCase: nibble)) == .nibbleOutOfRange)
        }
        // Through a gateway parser: refused with its reason, counted as a rejection.
        var hex = "4c00" + Hex.encode(Self.frame(model: 0x200E, status: 0x75, battery: 0xAA, chargingAndCase: 0x58, length: 0x13))
        var message = TelemetryParser(format: .openmqttgateway).parse(
            topic: "home/gw/BTtoMQTT/A1B2C3D4E5F6", payload: Array(#"{"id":"A1:B2:C3:D4:E5:F6","manufacturerdata":"\#(hex)"}"#.utf8),
            receivedAt: 0)
        guard case .rejected(let rejection) = message else { Issue.record("not rejected: \(message)"); return }
        #expect(rejection.code == .invalidProximityPairing)
        #expect(rejection.message.contains("counterfeit"))
        // Odd hex is the parser's own refusal.
        hex.removeLast()
        message = TelemetryParser(format: .openmqttgateway).parse(
            topic: "home/gw/BTtoMQTT/A1B2C3D4E5F6", payload: Array(#"{"id":"A1:B2:C3:D4:E5:F6","manufacturerdata":"\#(hex)"}"#.utf8),
            receivedAt: 0)
        guard case .rejected(let odd) = message else { Issue.record("not rejected: \(message)"); return }
        #expect(odd.code == .invalidHex)
    }

    @Test("the case level is kept by frames without it and dropped with the accessory's absence")
    func caseMemory() {
        let withCase = Battery(left: 80, right: 70, chargingCase: 50, caseCharging: true)
        let otherBud = Battery(left: 80, rightCharging: false)
        #expect(otherBud.keepingCase(previous: withCase) == Battery(left: 80, chargingCase: 50, rightCharging: false, caseCharging: true))
        // A newer case level wins.
        #expect(withCase.keepingCase(previous: Battery(chargingCase: 10)) == withCase)
        // A single battery has no case to keep.
        #expect(Battery(main: 40).keepingCase(previous: withCase) == Battery(main: 40))
        #expect(withCase.withoutCase == Battery(left: 80, right: 70))
        #expect(Battery(chargingCase: 50).withoutCase == nil)
    }

    /// docs/telemetry.md's per-model table, from the catalogue.
    static func modelTable() -> String {
        var lines = [
            "| model id | model | hardware | batteries | wear sensor | charging flags |",
            "|---|---|---|---|---|---|",
        ]
        for model in AppleModelCatalogue.models {
            let batteries = model.batteries == .single ? "`main`" : "`left`, `right`, `case`"
            let charging = model.batteries == .single ? "`charging`" : "`left_charging`, `right_charging`, `case_charging`"
            let wear: String =
                switch model.wearSensor {
                case .inEarBits: "bits 0x02 / 0x08"
                case .statusBit5: "bit 0x20"
                case .none: "none"
                }
            lines.append(
                "| 0x\(String(model.id, radix: 16, uppercase: true)) | \(model.name) | `\(model.hardware.rawValue)` | \(batteries) | \(wear) | \(charging) |"
            )
        }
        return lines.joined(separator: "\n")
    }

    @Test("docs/telemetry.md's per-model table is the catalogue's")
    func documentedTable() throws {
        let doc = try String(contentsOfFile: Repository.file("docs/telemetry.md"), encoding: .utf8)
        let table = Self.modelTable()
        #expect(doc.contains(table), Comment(rawValue: "docs/telemetry.md should hold, as generated:\n" + table))
    }
}
