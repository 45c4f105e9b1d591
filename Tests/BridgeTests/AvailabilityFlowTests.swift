import Foundation
import JSON
import MQTT
import TestSupport
import Testing

@testable import Bridge

/// Availability, gateways and the picker's failure paths that depend on time.
@Suite("Availability and gateways over MQTT")
struct AvailabilityFlowTests {
    @Test("an accessory not heard within the availability timeout goes offline: release (unavailable), sources cleared")
    func unavailable() async throws {
        try await withBridge(availabilityTimeoutSeconds: 1) { _, observer async throws in
            let telemetry = "aabridge/telemetry/livingroom/\(Fixture.airPodsTopic)"
            let availability = "aabridge/accessory/\(Fixture.airPodsTopic)/availability"
            try await observer.publish(telemetry, #"{"source_connected":"\#(Fixture.phone)"}"#)
            try await observer.publish(telemetry, #"{"placement":"inEar"}"#)
            await observer.waitFor("aabridge/source/\(Fixture.phoneTopic)/route") { $0["target"] == .string(Fixture.airPods) }
            #expect(observer.json(on: availability).last == ["state": "online"] || observer.json(on: availability).isEmpty)

            // Nothing more is heard: offline within about a second.
            let offline = await observer.waitFor(availability, timeout: .seconds(4)) { $0["state"] == "offline" }
            #expect(offline != nil)
            let released = await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)/decision") { $0["action"] == "release" }
            #expect(released?["reason"] == "unavailable")
            let route = await observer.waitFor("aabridge/source/\(Fixture.phoneTopic)/route") { $0["target"] == "fallback" }
            #expect(route?["reason"] == "unavailable")
            let state = await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["available"] == false }
            #expect(state?["primary_source"] == .null, "an unavailable accessory is connected to nothing we can see")
            #expect(state?["routes"] == [])

            // Heard again: online.
            try await observer.publish(telemetry, #"{"rssi":-70}"#)
            await observer.waitFor(availability) { $0["state"] == "online" }
        }
    }

    /// The entry of `bridge/gateways` configured as `name`, and its heard gateway `heard`.
    static func gateway(_ value: JSONValue?, _ name: String, heard: String? = nil) -> JSONValue? {
        let entry = value?.arrayValue?.first { $0["name"]?.stringValue == name }
        guard let heard else { return entry }
        return entry?["heard"]?.arrayValue?.first { $0["name"]?.stringValue == heard }
    }

    @Test("bridge/gateways: the configured gateways from the start (unknown); each heard one under the entry whose topic matched it")
    func gateways() async throws {
        try await withBridge { _, observer async throws in
            let topic = "aabridge/bridge/gateways"
            let first = await observer.waitFor(topic) { _ in true }
            #expect(first?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["omg", "native", "esp", "tasmota"])
            #expect(first?.arrayValue?.compactMap { $0["format"]?.stringValue } == ["openmqttgateway", "native", "espresense", "tasmota"])
            #expect(first?.arrayValue?.allSatisfy { $0["state"] == "unknown" && $0["last_seen"] == .null && $0["heard"] == [] } == true)

            try await observer.publish(Fixture.advertisementTopic, Fixture.advertisementPayload)
            let online = await observer.waitFor(topic) { Self.gateway($0, "omg", heard: "gw1") != nil }
            #expect(Self.gateway(online, "omg")?["state"] == "online")
            #expect(Self.gateway(online, "omg")?["last_seen"]?.stringValue != nil)
            #expect(Self.gateway(online, "omg", heard: "gw1")?["state"] == "online")
            #expect(Self.gateway(online, "omg", heard: "gw1")?["last_seen"]?.stringValue != nil)
            #expect(Self.gateway(online, "native")?["state"] == "unknown")

            // Native telemetry relayed by "livingroom" belongs to the native entry, not omg's.
            try await observer.publish("aabridge/telemetry/livingroom/\(Fixture.airPodsTopic)", #"{"rssi":-70}"#)
            let native = await observer.waitFor(topic) { Self.gateway($0, "native", heard: "livingroom") != nil }
            #expect(Self.gateway(native, "native")?["format"] == "native")
            #expect(Self.gateway(native, "native")?["state"] == "online")
            #expect(Self.gateway(native, "omg", heard: "livingroom") == nil)
            #expect(Self.gateway(native, "omg")?["heard"]?.arrayValue?.count == 1)

            try await observer.publish("home/gw1/LWT", "Offline")
            let offline = await observer.waitFor(topic) { Self.gateway($0, "omg", heard: "gw1")?["state"] == "offline" }
            #expect(Self.gateway(offline, "omg")?["state"] == "offline", "no gateway of omg's is online")
            #expect(Self.gateway(offline, "native")?["state"] == "online")
            try await observer.publish("home/gw1/LWT", "online")
            await observer.waitFor(topic) {
                Self.gateway($0, "omg", heard: "gw1")?["state"] == "online" && Self.gateway($0, "omg")?["state"] == "online"
            }
            let health = try await observer.request("health")
            #expect(health["data"]?["telemetry_rejected"] == 0, "LWT messages are not rejections")
        }
    }

    @Test("a tracker's {\"state\":\"offline\"} changes nothing: not availability, not bridge/gateways, no rejection (docs/telemetry.md)")
    func trackerOffline() async throws {
        try await withBridge { _, observer async throws in
            let availability = "aabridge/accessory/\(Fixture.airPodsTopic)/availability"
            try await observer.publish("aabridge/telemetry/livingroom/\(Fixture.airPodsTopic)", #"{"rssi":-70}"#)
            await observer.waitFor(availability) { $0["state"] == "online" }
            try await observer.publish("home/gw1/BTtoMQTT/\(Fixture.airPodsTopic)", #"{"id":"\#(Fixture.airPods)","state":"offline"}"#)
            let health = try await observer.request("health")
            #expect(health["data"]?["telemetry_rejected"] == 0)
            let gateways = observer.json(on: "aabridge/bridge/gateways").last
            #expect(Self.gateway(gateways, "omg")?["heard"] == [], "the tracker message is no sighting of gw1")
            #expect(observer.json(on: availability).last?["state"] == "online")
            #expect(observer.messages(on: "aabridge/bridge/log").isEmpty)
        }
    }

    @Test("a candidate no longer heard when selected: pickerSetupFailed (connectionFailed), then pickerDidDismiss")
    func candidateGone() async throws {
        try await withBridge(availabilityTimeoutSeconds: 1) { _, observer async throws in
            #expect(try await observer.request("picker/show", #""products":["AirPods Pro"],"timeout":"long""#)["status"] == "ok")
            try await observer.publish(Fixture.advertisementTopic, Fixture.advertisementPayload)
            await observer.waitFor(PickerFlowTests.event) { $0["type"] == "accessoryDiscovered" }
            try await Task.sleep(for: .milliseconds(1_500))
            let selected = try await observer.request("picker/select", #""id":"\#(Fixture.advertisementID)""#)
            #expect(selected["status"] == "error")
            #expect(selected["error"]?["code"] == "connectionFailed", "\(selected.serialized)")
            #expect(selected["error"]?["raw"] == 150)
            await observer.waitFor(PickerFlowTests.event) { $0["type"] == "pickerDidDismiss" }
            let events = observer.json(on: PickerFlowTests.event)
            let tail = Array(events.map { $0["type"]?.stringValue ?? "" }.drop { $0 != "pickerSetupFailed" })
            #expect(tail == ["pickerSetupFailed", "pickerDidDismiss"], "\(observer.eventTypes)")
            #expect(events.first { $0["type"] == "pickerSetupFailed" }?["error"]?["code"] == "connectionFailed")
            #expect(events.first { $0["type"] == "pickerSetupFailed" }?["raw"] == 70)
            #expect(
                !events.contains { $0["type"] == "accessoryAdded" && $0["accessory"]?["id"] == .string(Fixture.advertisementID) },
                "the failed setup added nothing")
        }
    }

    @Test("picker/show for an unknown product: invalidRequest, no picker")
    func unknownProduct() async throws {
        try await withBridge { _, observer async throws in
            let response = try await observer.request("picker/show", #""products":["Walkman"]"#)
            #expect(response["error"]?["code"] == "invalidRequest")
            #expect(!observer.eventTypes.contains("pickerDidPresent"))
        }
    }

    @Test("fail_authorization removes an awaitingAuthorization accessory")
    func failAuthorization() async throws {
        try await withBridge { _, observer async throws in
            #expect(try await observer.request("picker/show", #""products":["Acme Studio Headphones"]"#)["status"] == "ok")
            try await observer.publish(
                "home/gw2/BTtoMQTT/D0C3D2A1B2C3",
                #"{"id":"D0:C3:D2:A1:B2:C3","name":"Acme Studio 2","rssi":-58,"servicedatauuid":"fe2c","servicedata":"00aabbcc"}"#)
            await observer.waitFor(PickerFlowTests.event) { $0["type"] == "accessoryDiscovered" }
            #expect(try await observer.request("picker/select", #""id":"D0:C3:D2:A1:B2:C3""#)["data"]?["state"] == "awaitingAuthorization")
            #expect(try await observer.request("accessory/fail_authorization", #""id":"D0:C3:D2:A1:B2:C3""#)["status"] == "ok")
            let removed = await observer.waitFor(PickerFlowTests.event) { $0["type"] == "accessoryRemoved" }
            #expect(removed?["accessory"]?["id"] == "D0:C3:D2:A1:B2:C3")
            await observer.messages.wait { $0.contains { $0.topic == "aabridge/accessory/D0C3D2A1B2C3" && $0.payload.isEmpty } }
            let current = try await observer.request("accessory/current", #""id":"D0:C3:D2:A1:B2:C3""#)
            #expect(current["error"]?["code"] == "invalidRequest")
        }
    }
}
