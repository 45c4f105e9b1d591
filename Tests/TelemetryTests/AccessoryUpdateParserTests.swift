import AccessoryKit
import Testing

@testable import Telemetry

/// `accessory/<ID>/set` payloads are read once: a report, or a registration attempt.
@Suite("AccessoryReportParser.parseUpdate")
struct AccessoryUpdateParserTests {
    let accessory = BluetoothAddress("A1:B2:C3:D4:E5:F6")!

    @Test("a payload with capabilities is a registration attempt, whatever else it carries")
    func registration() {
        for payload in [#"{"capabilities":["placement"]}"#, #"{"placement":"bogus","capabilities":null}"#, #"{"c\u0061pabilities":1}"#] {
            #expect(AccessoryReportParser.parseUpdate(Array(payload.utf8), accessory: accessory) == .success(.register), "\(payload)")
        }
    }

    @Test("anything else is a report, with the same rules as native telemetry")
    func report() throws {
        let update = AccessoryReportParser.parseUpdate(Array(#"{"placement":"inEar","rssi":-50}"#.utf8), accessory: accessory)
        let native = AccessoryReportParser.parse(Array(#"{"placement":"inEar","rssi":-50}"#.utf8), accessory: accessory, gateway: nil)
        #expect(update == native.map { .report($0) })
        guard case .failure(let rejection) = AccessoryReportParser.parseUpdate(Array(#"{"placement":"bogus"}"#.utf8), accessory: accessory)
        else {
            Issue.record("an unknown placement must be refused")
            return
        }
        #expect(rejection.field == "placement")
        #expect(rejection.accessory == accessory)
        guard case .failure = AccessoryReportParser.parseUpdate(Array("not json".utf8), accessory: accessory) else {
            Issue.record("not JSON must be refused")
            return
        }
    }
}
