import AccessoryKit
import Testing

@testable import Telemetry

/// Parses with a parser of the given format (default topics) and returns the message.
func parse(_ format: GatewayFormat, _ topic: String, _ payload: String, base: String = "aabridge") -> TelemetryMessage {
    TelemetryParser(format: format, baseTopic: base).parse(topic: topic, payload: Array(payload.utf8), receivedAt: 42)
}

func rejection(_ message: TelemetryMessage) -> TelemetryRejection? {
    if case .rejected(let rejection) = message { return rejection }
    return nil
}

func advertisement(_ message: TelemetryMessage) -> Advertisement? {
    if case .advertisement(let advertisement) = message { return advertisement }
    return nil
}

@Suite struct OpenMQTTGatewayTests {
    let topic = "home/gw1/BTtoMQTT/A1B2C3D4E5F6"

    @Test func fullRawAdvertisement() throws {
        let message = parse(
            .theengs, topic,
            #"{"id":"a1:b2:c3:d4:e5:f6","mac_type":1,"rssi":-61,"txpower":-8,"name":"Acme","manufacturerdata":"4c001019","servicedatauuid":"0xfe2c","servicedata":"0102","brand":"x","model":"y","distance":1.5,"tempc":[1,{"x":null}]}"#
        )
        let ad = try #require(advertisement(message))
        #expect(ad.gateway == "gw1")
        #expect(ad.address.description == "A1:B2:C3:D4:E5:F6")
        #expect(ad.isRandomAddress == true)
        #expect(ad.rssi == -61 && ad.txPower == -8 && ad.name == "Acme")
        #expect(ad.manufacturerData == [ManufacturerData(companyIdentifier: 0x004C, payload: [0x10, 0x19])])
        #expect(ad.serviceData(for: BluetoothUUID(shortValue: 0xFE2C)) == [1, 2])
        #expect(ad.receivedAt == 42)
    }

    @Test(arguments: ["0xfe2c", "fe2c", "FE2C", "0000fe2c-0000-1000-8000-00805f9b34fb"])
    func serviceDataUUIDForms(_ uuid: String) throws {
        let ad = try #require(
            advertisement(parse(.openmqttgateway, topic, #"{"id":"A1B2C3D4E5F6","servicedatauuid":"\#(uuid)","servicedata":"aa"}"#)))
        #expect(ad.serviceData == [ServiceData(uuid: BluetoothUUID(shortValue: 0xFE2C), data: [0xAA])])
    }

    @Test func trackerOfflineOnlyWithoutRSSI() {
        #expect(
            parse(.openmqttgateway, topic, #"{"id":"A1:B2:C3:D4:E5:F6","state":"OFFLINE"}"#)
                == .trackerOffline(gateway: "gw1", address: BluetoothAddress(rawValue: 0xA1B2_C3D4_E5F6)))
        // A decoder's `state` on a normal advertisement is not a tracker message.
        #expect(advertisement(parse(.openmqttgateway, topic, #"{"id":"A1:B2:C3:D4:E5:F6","state":"idle","rssi":-70}"#)) != nil)
        #expect(advertisement(parse(.openmqttgateway, topic, #"{"id":"A1:B2:C3:D4:E5:F6","state":"online"}"#)) != nil)
    }

    @Test func configurationMessageIsIgnored() {
        guard case .ignored = parse(.openmqttgateway, "home/gw1/BTtoMQTT", #"{"interval":55555,"minrssi":-100}"#) else {
            Issue.record("not ignored"); return
        }
    }

    @Test(arguments: ["online", "ONLINE", "Online", " online\n"])
    func lwtOnline(_ payload: String) {
        #expect(
            parse(.openmqttgateway, "home/gw7/LWT", payload)
                == .gatewayStatus(GatewayStatus(gateway: "gw7", state: .online, receivedAt: 42)))
    }

    @Test func lwtGarbageIsRejected() {
        #expect(rejection(parse(.openmqttgateway, "home/gw7/LWT", "maybe"))?.code == .invalidValue)
        #expect(rejection(parse(.tasmota, "tele/t1/LWT", ""))?.code == .invalidValue)
        #expect(parse(.tasmota, "tele/t1/LWT", "Offline") == .gatewayStatus(GatewayStatus(gateway: "t1", state: .offline, receivedAt: 42)))
    }

    @Test(
        arguments: [
            ("not json", TelemetryRejection.Code.invalidJSON, nil as String?),
            ("", .invalidJSON, nil),
            ("[1,2]", .wrongType, nil),
            ("\"text\"", .wrongType, nil),
            (#"{"id":"A1:B2:C3:D4:E5:F6","rssi":-61"#, .invalidJSON, nil),
            (#"{"id":42}"#, .wrongType, "id"),
            (#"{"id":"A1:B2:C3:D4:E5"}"#, .invalidAddress, "id"),
            (#"{"id":"A1B2C3D4E5F6","rssi":"-61"}"#, .wrongType, "rssi"),
            (#"{"id":"A1B2C3D4E5F6","rssi":-200}"#, .rssiOutOfRange, "rssi"),
            (#"{"id":"A1B2C3D4E5F6","rssi":99}"#, .rssiOutOfRange, "rssi"),
            (#"{"id":"A1B2C3D4E5F6","rssi":1e308}"#, .rssiOutOfRange, "rssi"),
            (#"{"id":"A1B2C3D4E5F6","txpower":-300}"#, .rssiOutOfRange, "txpower"),
            (#"{"id":"A1B2C3D4E5F6","name":5}"#, .wrongType, "name"),
            (#"{"id":"A1B2C3D4E5F6","manufacturerdata":"4c0"}"#, .invalidHex, "manufacturerdata"),
            (#"{"id":"A1B2C3D4E5F6","manufacturerdata":"4c0g"}"#, .invalidHex, "manufacturerdata"),
            (#"{"id":"A1B2C3D4E5F6","manufacturerdata":"4c"}"#, .invalidHex, "manufacturerdata"),
            (#"{"id":"A1B2C3D4E5F6","manufacturerdata":["4c00"]}"#, .wrongType, "manufacturerdata"),
            (#"{"id":"A1B2C3D4E5F6","servicedata":"zz","servicedatauuid":"fe2c"}"#, .invalidHex, "servicedata"),
            (#"{"id":"A1B2C3D4E5F6","servicedata":"00","servicedatauuid":"fe2"}"#, .invalidUUID, "servicedatauuid"),
            (#"{"id":"A1B2C3D4E5F6","state":1}"#, .wrongType, "state"),
        ] as [(String, TelemetryRejection.Code, String?)])
    func malformedMessagesAreRejectedWithAReason(_ payload: String, _ code: TelemetryRejection.Code, _ field: String?) throws {
        let rejected = try #require(rejection(parse(.openmqttgateway, topic, payload)), "accepted \(payload)")
        #expect(rejected.code == code)
        #expect(rejected.field == field)
        #expect(rejected.gateway == "gw1")
        #expect(!rejected.message.isEmpty)
    }

    @Test func oversizePayloadIsRejectedBeforeParsing() {
        // Valid JSON, but over 64 KiB: rejected on size alone.
        let payload = #"{"id":"A1B2C3D4E5F6","pad":""# + String(repeating: "x", count: 65_536) + #""}"#
        #expect(rejection(parse(.openmqttgateway, topic, payload))?.code == .payloadTooLarge)
        let exactly = [UInt8](repeating: 0x20, count: TelemetryLimits.maximumPayloadSize)
        #expect(
            rejection(TelemetryParser(format: .openmqttgateway).parse(topic: topic, payload: exactly, receivedAt: 0))?.code == .invalidJSON)
    }

    @Test func rssiIsRoundedAndBoundsAreInclusive() throws {
        #expect(advertisement(parse(.openmqttgateway, topic, #"{"id":"A1B2C3D4E5F6","rssi":-127}"#))?.rssi == -127)
        #expect(advertisement(parse(.openmqttgateway, topic, #"{"id":"A1B2C3D4E5F6","rssi":20}"#))?.rssi == 20)
        #expect(advertisement(parse(.openmqttgateway, topic, #"{"id":"A1B2C3D4E5F6","rssi":-60.5}"#))?.rssi == -61)
        #expect(rejection(parse(.openmqttgateway, topic, #"{"id":"A1B2C3D4E5F6","rssi":-127.5}"#))?.code == .rssiOutOfRange)
    }

    @Test func escapedKeysAreStillKeys() {
        #expect(advertisement(parse(.openmqttgateway, topic, #"{"\u0069d":"A1B2C3D4E5F6","rss\u0069":-50}"#))?.rssi == -50)
    }

    @Test func escapedHexAndAddressValuesAreDecoded() {
        let ad = advertisement(parse(.openmqttgateway, topic, #"{"id":"A1\u003AB2:C3:D4:E5:F6","manufacturerdata":"4c\u0030007"}"#))
        #expect(ad?.address.topicID == "A1B2C3D4E5F6")
        #expect(ad?.manufacturer == ManufacturerData(companyIdentifier: 0x004C, payload: [0x07]))
        #expect(rejection(parse(.openmqttgateway, topic, #"{"id":"A1B2C3D4E5F6","manufacturerdata":"4c\u0020007"}"#))?.code == .invalidHex)
    }

    @Test func otherTopicsAreIgnored() {
        guard case .ignored = parse(.openmqttgateway, "home/gw1/SYStoMQTT", "{}") else { Issue.record("not ignored"); return }
    }

    @Test func handlesOnlyItsTopics() {
        let parser = TelemetryParser(format: .openmqttgateway)
        #expect(parser.handles(topic: "home/gw1/BTtoMQTT/A1B2C3D4E5F6"))
        #expect(parser.handles(topic: "home/gw1/LWT"))
        #expect(!parser.handles(topic: "tele/gw1/BLE"))
        #expect(!TelemetryParser(format: .native).handles(topic: "aabridge/telemetry/gw"))
    }

    @Test func customTopicPatternNamesTheGateway() throws {
        let parser = TelemetryParser(
            format: .openmqttgateway, topic: TopicPattern("site/+/+/BTtoMQTT/#"), statusTopic: TopicPattern("site/+/+/LWT"))
        let message = parser.parse(
            topic: "site/house/gwA/BTtoMQTT/A1B2C3D4E5F6", payload: Array(#"{"id":"A1B2C3D4E5F6"}"#.utf8), receivedAt: 0)
        #expect(advertisement(message)?.gateway == "house")
        let fixed = TelemetryParser(format: .openmqttgateway, topic: TopicPattern("gateway7/BTtoMQTT/#"), name: "attic")
        #expect(
            advertisement(fixed.parse(topic: "gateway7/BTtoMQTT/X", payload: Array(#"{"id":"A1B2C3D4E5F6"}"#.utf8), receivedAt: 0))?.gateway
                == "attic")
    }
}

@Suite struct ESPresenseTests {
    @Test func deviceMessage() throws {
        let ad = try #require(
            advertisement(
                parse(
                    .espresense, "espresense/devices/apple:1006:10-12/kitchen",
                    #"{"mac":"67518126293a","rssi":-70.4,"name":"Bob's AirPods","id":"x"}"#)))
        #expect(ad.gateway == "kitchen" && ad.rssi == -70 && ad.name == "Bob's AirPods")
        #expect(ad.address.topicID == "67518126293A")
    }

    @Test func withoutMacIsIgnoredAndBadMacRejected() {
        guard case .ignored = parse(.espresense, "espresense/devices/iBeacon:x/kitchen", #"{"id":"iBeacon:x","rssi":-70}"#) else {
            Issue.record("not ignored"); return
        }
        #expect(rejection(parse(.espresense, "espresense/devices/x/kitchen", #"{"mac":"6751812629","rssi":-70}"#))?.code == .invalidAddress)
        #expect(
            rejection(parse(.espresense, "espresense/devices/x/kitchen", #"{"mac":"67518126293a","rssi":-1000}"#))?.code == .rssiOutOfRange)
    }

    @Test func roomStatus() {
        #expect(
            parse(.espresense, "espresense/rooms/kitchen/status", "offline")
                == .gatewayStatus(GatewayStatus(gateway: "kitchen", state: .offline, receivedAt: 42)))
    }
}

@Suite struct TasmotaTests {
    @Test func rawAdvertisement() throws {
        let p = "020106" + "0302" + "2cfe" + "0509" + "41636d65" + "06ff" + "4c00" + "101901"
        let ad = try #require(
            advertisement(parse(.tasmota, "tele/kitchen/BLE", #"{"details":{"mac":"A1B2C3D4E5F6/1","p":"\#(p)","RSSI":-66}}"#)))
        #expect(ad.gateway == "kitchen" && ad.rssi == -66 && ad.name == "Acme" && ad.flags == 6)
        #expect(ad.serviceUUIDs == [BluetoothUUID(shortValue: 0xFE2C)])
        #expect(ad.manufacturer?.companyIdentifier == 0x004C)
    }

    @Test func malformedDetails() {
        #expect(
            rejection(parse(.tasmota, "tele/k/BLE", #"{"details":{"mac":"A1B2C3D4E5F6","p":"05ff4c00"}}"#))?.code == .malformedAdvertisement
        )
        #expect(rejection(parse(.tasmota, "tele/k/BLE", #"{"details":{"mac":"A1B2C3D4E5F6","p":"05ff4c0"}}"#))?.code == .invalidHex)
        #expect(rejection(parse(.tasmota, "tele/k/BLE", #"{"details":{"p":"020106"}}"#))?.code == .missingField)
        #expect(rejection(parse(.tasmota, "tele/k/BLE", #"{"details":{"mac":"A1B2C3D4E5F6"}}"#))?.code == .missingField)
        #expect(rejection(parse(.tasmota, "tele/k/BLE", #"{"details":"x"}"#))?.code == .wrongType)
        #expect(rejection(parse(.tasmota, "tele/k/BLE", #"{"details":{"mac":"nope","p":""}}"#))?.code == .invalidAddress)
        guard case .ignored = parse(.tasmota, "tele/k/BLE", #"{"Time":"2026-11-29T10:00:00","BLEDevices":{}}"#) else {
            Issue.record("not ignored"); return
        }
    }
}

@Suite struct NativeReportTests {
    let topic = "aabridge/telemetry/livingroom/A1B2C3D4E5F6"

    func report(_ payload: String) throws -> AccessoryReport {
        guard case .report(let report) = parse(.native, topic, payload) else { throw FixtureFailure("no report for \(payload)") }
        return report
    }

    @Test func everyKey() throws {
        let report = try report(
            #"{"placement":"onHead","worn":true,"hardware":"onEarHeadphone","sources":["11:22:33:44:55:66","665544332211","11:22:33:44:55:66"],"source_connected":"11:22:33:44:55:66","source_disconnected":"66:55:44:33:22:11","preferred_source":"11:22:33:44:55:66","rssi":-40,"battery":{"level":80,"case":55.5,"charging":true,"future":1},"future":{"x":[1]}}"#
        )
        #expect(report.accessory.topicID == "A1B2C3D4E5F6" && report.gateway == "livingroom")
        let one = try #require(BluetoothAddress("11:22:33:44:55:66")), two = try #require(BluetoothAddress("66:55:44:33:22:11"))
        // The engine's report directly, in a fixed order whatever the payload's; duplicate sources
        // collapse with their order kept; battery in whole percent (55.5 rounds up) with its charging flag.
        #expect(
            report.changes == [
                .placement(.onHead), .worn(true, hardware: .onEarHeadphone), .sources([one, two]),
                .sourceConnected(one), .sourceDisconnected(two), .preferredSource(one), .rssi(-40),
                .battery(Battery(main: 80, chargingCase: 56, charging: true)),
            ])
    }

    @Test func wearSensorReadings() throws {
        #expect(try report(#"{"worn":false}"#).changes == [.worn(false, hardware: nil)])
        #expect(try report(#"{"worn":true,"hardware":"onEarHeadphone"}"#).changes == [.worn(true, hardware: .onEarHeadphone)])
        // `hardware` only says what `worn` means.
        #expect(try report(#"{"hardware":"onEarHeadphone"}"#).changes == [])
        #expect(try report(#"{"worn":true,"placement":"offHead"}"#).changes == [.placement(.offHead), .worn(true, hardware: nil)])
        #expect(try report(#"{}"#).changes == [])
        #expect(statedPlacement(try report(#"{"worn":true,"hardware":"overEarHeadphone"}"#)) == .overTheEar)
    }

    @Test func batteryInWholePercent() throws {
        #expect(
            try report(#"{"battery":{"left":0,"right":100,"case":99.6}}"#).changes == [
                .battery(Battery(left: 0, right: 100, chargingCase: 100))
            ])
        // Charging flags alone carry no level: no battery change.
        #expect(try report(#"{"battery":{"charging":true,"left_charging":false}}"#).changes == [])
        // Through the fraction, as published since the first release: these four halves round down.
        for (percent, published) in [(14.5, 14), (28.5, 28), (56.5, 56), (57.5, 57), (55.5, 56), (0.5, 1), (80, 80)] {
            #expect(AccessoryReportParser.wholePercent(percent) == published, "\(percent)")
        }
    }

    @Test func sourcesUseTheOneAddressGrammar() throws {
        let source = try #require(BluetoothAddress("11:22:33:44:55:66"))
        #expect(try report(#"{"preferred_source":"11-22-33-44-55-66"}"#).changes == [.preferredSource(source)])
        #expect(try report(#"{"source_connected":"112233445566"}"#).changes == [.sourceConnected(source)])
    }

    @Test(
        arguments: [
            (#"{"placement":"sideways"}"#, TelemetryRejection.Code.invalidValue, "placement"),
            (#"{"placement":1}"#, .wrongType, "placement"),
            (#"{"worn":"yes"}"#, .wrongType, "worn"),
            (#"{"worn":true,"hardware":"cochlear"}"#, .invalidValue, "hardware"),
            (#"{"sources":"11:22:33:44:55:66"}"#, .wrongType, "sources"),
            (#"{"sources":["11:22:33:44:55"]}"#, .invalidAddress, "sources"),
            (#"{"sources":[1]}"#, .wrongType, "sources"),
            (#"{"source_connected":"nope"}"#, .invalidAddress, "source_connected"),
            (#"{"source_disconnected":null}"#, .wrongType, "source_disconnected"),
            (#"{"preferred_source":"11:22-33:44:55:66"}"#, .invalidAddress, "preferred_source"),
            (#"{"rssi":-128}"#, .rssiOutOfRange, "rssi"),
            (#"{"battery":50}"#, .wrongType, "battery"),
            (#"{"battery":{"level":101}}"#, .invalidValue, "battery.level"),
            (#"{"battery":{"left":"50"}}"#, .wrongType, "battery.left"),
            (#"{"battery":{"charging":1}}"#, .wrongType, "battery.charging"),
        ] as [(String, TelemetryRejection.Code, String)])
    func invalidContentIsRejectedForTheAccessory(_ payload: String, _ code: TelemetryRejection.Code, _ field: String) throws {
        let rejected = try #require(rejection(parse(.native, topic, payload)), "accepted \(payload)")
        #expect(rejected.code == code)
        #expect(rejected.field == field)
        #expect(rejected.accessory?.topicID == "A1B2C3D4E5F6")
        #expect(rejected.gateway == "livingroom")
    }

    @Test func badTopicIDIsRejectedWithoutAccessory() throws {
        let rejected = try #require(rejection(parse(.native, "aabridge/telemetry/livingroom/A1B2C3D4E5", #"{"worn":true}"#)))
        #expect(rejected.code == .invalidAddress)
        #expect(rejected.accessory == nil)
        let colon = try #require(rejection(parse(.native, "aabridge/telemetry/livingroom/A1:B2:C3:D4:E5:F6", #"{"worn":true}"#)))
        #expect(colon.code == .invalidAddress)
    }

    @Test func baseTopicComesFromConfiguration() {
        guard case .report = parse(.native, "bridge2/telemetry/gw/A1B2C3D4E5F6", "{\"rssi\":-50}", base: "bridge2") else {
            Issue.record("custom base topic not used"); return
        }
        guard case .ignored = parse(.native, topic, "{}", base: "bridge2") else { Issue.record("default base topic matched"); return }
    }

    @Test func oversizeReportIsRejectedForTheAccessory() throws {
        let accessory = try #require(BluetoothAddress("A1B2C3D4E5F6"))
        let payload = [UInt8](repeating: 0x20, count: TelemetryLimits.maximumPayloadSize + 1)
        guard case .failure(let rejection) = AccessoryReportParser.parse(payload, accessory: accessory, gateway: nil) else {
            Issue.record("accepted"); return
        }
        #expect(rejection.code == .payloadTooLarge && rejection.accessory == accessory)
    }

    @Test func reportParserServesTheSetTopic() throws {
        let accessory = try #require(BluetoothAddress("A1B2C3D4E5F6"))
        let ok = AccessoryReportParser.parse(Array(#"{"placement":"inEar"}"#.utf8), accessory: accessory, gateway: nil)
        #expect(try ok.get() == AccessoryReport(accessory: accessory, gateway: nil, changes: [.placement(.inEar)]))
        let bad = AccessoryReportParser.parse(Array("not json".utf8), accessory: accessory, gateway: nil)
        guard case .failure(let rejection) = bad else { Issue.record("accepted"); return }
        #expect(rejection.code == .invalidJSON && rejection.accessory == accessory)
    }
}

@Suite struct GatewayFormatTests {
    @Test func defaultTopics() {
        #expect(GatewayFormat.openmqttgateway.defaultTopic() == "home/+/BTtoMQTT/#")
        #expect(GatewayFormat.theengs.defaultStatusTopic == "home/+/LWT")
        #expect(GatewayFormat.espresense.defaultTopic() == "espresense/devices/#")
        #expect(GatewayFormat.espresense.defaultStatusTopic == "espresense/rooms/+/status")
        #expect(GatewayFormat.tasmota.defaultTopic() == "tele/+/BLE")
        #expect(GatewayFormat.tasmota.defaultStatusTopic == "tele/+/LWT")
        #expect(GatewayFormat.native.defaultTopic(baseTopic: "ab") == "ab/telemetry/+/+")
        #expect(GatewayFormat.native.defaultStatusTopic == nil)
        for format in GatewayFormat.allCases {
            #expect(TopicPattern(format.defaultTopic()) != nil)
            #expect(format.defaultStatusTopic.map { TopicPattern($0) != nil } ?? true)
        }
    }

    @Test func parserUsesTheDefaults() {
        let parser = TelemetryParser(format: .tasmota)
        #expect(parser.topic.filter == "tele/+/BLE")
        #expect(parser.statusTopic?.filter == "tele/+/LWT")
        #expect(parser.name == "tasmota")
        #expect(TelemetryParser(format: .native).statusTopic == nil)
    }
}
