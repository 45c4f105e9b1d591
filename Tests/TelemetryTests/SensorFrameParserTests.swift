import AccessoryKit
import Testing

@testable import Telemetry

/// Native telemetry's `{"imu":"<hex>"}`: one head-tracking IMU frame, its bytes unchanged; the
/// size is the engine's to judge, the hex the parser's.
@Suite("Native telemetry: head-tracking sensor frames")
struct SensorFrameParserTests {
    let accessory = BluetoothAddress("A1:B2:C3:D4:E5:F6")!

    func parse(_ json: String, gateway: String? = "relay") -> Result<AccessoryReport, TelemetryRejection> {
        AccessoryReportParser.parse(Array(json.utf8), accessory: accessory, gateway: gateway)
    }

    @Test("the frame's bytes, in order, upper or lower case; empty and long frames reach the engine")
    func frames() throws {
        #expect(try parse(#"{"imu":"00ff7Fa1"}"#).get().changes == [.sensorFrame([0x00, 0xFF, 0x7F, 0xA1])])
        #expect(try parse(#"{"imu":""}"#).get().changes == [.sensorFrame([])])
        let long = String(repeating: "ab", count: 71)
        #expect(try parse(#"{"imu":"\#(long)"}"#).get().changes == [.sensorFrame([UInt8](repeating: 0xAB, count: 71))])
    }

    @Test(
        "not hex, an odd digit count or not a string: the report is refused naming imu",
        arguments: [
            #"{"imu":"0g"}"#, #"{"imu":"abc"}"#, #"{"imu":12}"#, #"{"imu":["ab"]}"#,
        ])
    func refused(json: String) {
        guard case .failure(let rejection) = parse(json) else {
            Issue.record("accepted \(json)")
            return
        }
        #expect(rejection.field == "imu")
        #expect(rejection.accessory == accessory)
    }

    @Test("accessory/<ID>/set is the extension role's update: imu there is an unknown key, ignored")
    func notThroughSet() throws {
        #expect(try parse(#"{"imu":"0102","rssi":-40}"#, gateway: nil).get().changes == [.rssi(-40)])
        guard case .success(.report(let report)) = AccessoryReportParser.parseUpdate(Array(#"{"imu":"0102"}"#.utf8), accessory: accessory)
        else {
            Issue.record("not a report")
            return
        }
        #expect(report.changes.isEmpty)
    }
}
