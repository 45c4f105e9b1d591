import AccessoryKit
import Foundation
import Telemetry

/// Parse throughput per gateway format, single-threaded, release build.
///
/// Prints `telemetry.<format>.msgs_per_s <value> msgs/s` per format, plus the same OpenMQTTGateway
/// workload parsed through Foundation's `JSONSerialization` (`telemetry.openmqttgateway_jsonserialization`)
/// to justify the hand-written JSON scanner the parsers use.
enum TelemetryBenchmark {
    /// A workload: messages as they arrive from the broker (topic + payload bytes).
    struct Workload {
        let name: String
        let parser: TelemetryParser
        let messages: [(topic: String, payload: [UInt8])]
    }

    static let duration: Duration = .seconds(1)

    static func run() async throws {
        let omg: [(String, [UInt8])] = [
            (
                "home/gw1/BTtoMQTT/F1E2D3C4B5A7",
                #"{"id":"F1:E2:D3:C4:B5:A7","mac_type":1,"manufacturerdata":"4c000719010e2054aab5310000e00ca78a604bd37df4604f2c73e9a7f4","rssi":-60}"#
            ),
            (
                "home/gw1/BTtoMQTT/5C313EFE18AA",
                #"{"id":"5C:31:3E:FE:18:AA","mac_type":0,"manufacturerdata":"dc0001010502010000013f","rssi":-75,"brand":"Braun","model":"Toothbrush","model_id":"Braun_BT","state":"idle","mode":"daily clean","sector":"sector 1","pressure":1,"time":0}"#
            ),
            (
                "home/gw1/BTtoMQTT/D0C3D2A1B2C3",
                #"{"id":"D0:C3:D2:A1:B2:C3","rssi":-58,"servicedatauuid":"fe2c","servicedata":"00aabbcc","name":"Acme Studio"}"#
            ),
            (
                "home/gw1/BTtoMQTT/58782076BC24",
                #"{"id":"58:78:20:76:BC:24","mac_type":1,"rssi":-79,"brand":"GENERIC","model":"iBeacon","model_id":"IBEACON","mfid":"4c00","uuid":"1de4b189115e45f6b44e509352269977","major":0,"minor":0,"txpower":-66}"#
            ),
        ].map { ($0.0, Array($0.1.utf8)) }
        let workloads = [
            Workload(name: "openmqttgateway", parser: TelemetryParser(format: .openmqttgateway), messages: omg),
            Workload(
                name: "theengs", parser: TelemetryParser(format: .theengs),
                messages: [
                    (
                        "home/TheengsGateway/BTtoMQTT/54945E9F64C4",
                        Array(
                            #"{"id":"54:94:5E:9F:64:C4","mac_type":1,"manufacturerdata":"4c0010060319247bbc68","rssi":-74,"txpower":12}"#
                                .utf8)
                    )
                ]),
            Workload(
                name: "espresense", parser: TelemetryParser(format: .espresense),
                messages: [
                    (
                        "espresense/devices/apple:1006:10-12/balkon",
                        Array(
                            #"{"mac":"67518126293a","id":"apple:1006:10-12","rssi@1m":-65,"rssi":-84.77,"rxAdj":0,"rssiVar":9.56,"distance":2.49,"var":0.16,"int":626}"#
                                .utf8)
                    )
                ]),
            Workload(
                name: "tasmota", parser: TelemetryParser(format: .tasmota),
                messages: [
                    (
                        "tele/tasmota_ble/BLE",
                        Array(
                            #"{"details":{"mac":"F1E2D3C4B5A7","p":"0201061BFF4C000719010E2054AAB5310000E00CA78A604BD37DF4604F2C73E9A7F4","RSSI":-60}}"#
                                .utf8)
                    )
                ]),
            Workload(
                name: "native", parser: TelemetryParser(format: .native),
                messages: [
                    ("aabridge/telemetry/livingroom/A1B2C3D4E5F6", Array(#"{"worn":true,"hardware":"overEarHeadphone","rssi":-50}"#.utf8)),
                    ("aabridge/telemetry/livingroom/A1B2C3D4E5F6", Array(#"{"sources":["11:22:33:44:55:66","66:55:44:33:22:11"]}"#.utf8)),
                ]),
        ]

        var results: [(String, Double)] = []
        for workload in workloads {
            let rate = measure { index in
                let message = workload.messages[index % workload.messages.count]
                if case .advertisement(let ad) = workload.parser.parse(topic: message.topic, payload: message.payload, receivedAt: 0) {
                    return ad.rssi ?? 0
                }
                return 1
            }
            results.append((workload.name, rate))
        }
        let foundationMessages = omg.map { ($0.0, Data($0.1)) }
        let foundationRate = measure { index in
            let message = foundationMessages[index % foundationMessages.count]
            return parseWithJSONSerialization(topic: message.0, payload: message.1)?.rssi ?? 1
        }
        results.insert(("openmqttgateway_jsonserialization", foundationRate), at: 1)

        for (name, rate) in results {
            print("telemetry.\(name).msgs_per_s \(Int(rate)) msgs/s")
        }
        let scanner = results[0].1
        print(
            """

            Telemetry parse throughput, one core, \(duration) per format (release build):
            \(results.map { "  \($0.0.padding(toLength: 36, withPad: " ", startingAt: 0)) \(format($0.1)) msgs/s  (\(String(format: "%.0f", 1e9 / $0.1)) ns/msg)" }.joined(separator: "\n"))
              OpenMQTTGateway: JSON scanner is \(String(format: "%.1f", scanner / foundationRate))x JSONSerialization; target 500,000 msgs/s \(scanner >= 500_000 ? "met" : "NOT met").
            """)
    }

    /// Runs `body` over consecutive indices for ``duration`` and returns calls per second.
    static func measure(_ body: (Int) -> Int) -> Double {
        let clock = ContinuousClock()
        var checksum = 0
        for index in 0..<2_000 { checksum &+= body(index) } // warm-up
        var count = 0
        let start = clock.now
        var elapsed: Duration = .zero
        while elapsed < duration {
            for _ in 0..<1_000 {
                checksum &+= body(count)
                count += 1
            }
            elapsed = clock.now - start
        }
        // Keeps the optimiser from discarding the work.
        if checksum == Int.min { print("checksum \(checksum)") }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Double(count) / seconds
    }

    /// The OpenMQTTGateway parse done the Foundation way, field for field, for comparison.
    static func parseWithJSONSerialization(topic: String, payload: Data) -> Advertisement? {
        guard let object = try? JSONSerialization.jsonObject(with: payload) as? [String: Any],
            let id = object["id"] as? String, let address = BluetoothAddress(id)
        else { return nil }
        let gateway = topic.split(separator: "/").dropFirst().first.map(String.init) ?? ""
        var ad = Advertisement(gateway: gateway, address: address, receivedAt: 0)
        if let rssi = object["rssi"] as? NSNumber { ad.rssi = Int(rssi.doubleValue.rounded()) }
        if let power = object["txpower"] as? NSNumber { ad.txPower = power.intValue }
        ad.name = object["name"] as? String
        if let hex = object["manufacturerdata"] as? String {
            guard let raw = Hex.decode(hex), let data = ManufacturerData(raw: raw) else { return nil }
            ad.manufacturerData = [data]
        }
        if let hex = object["servicedata"] as? String, let uuidText = object["servicedatauuid"] as? String {
            guard let data = Hex.decode(hex), let uuid = BluetoothUUID(uuidText) else { return nil }
            ad.serviceData = [ServiceData(uuid: uuid, data: data)]
        }
        return ad
    }

    static func format(_ rate: Double) -> String {
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.maximumFractionDigits = 0
        return formatter.string(from: NSNumber(value: rate)).map { $0.padding(toLength: 12, withPad: " ", startingAt: 0) } ?? "\(Int(rate))"
    }
}
