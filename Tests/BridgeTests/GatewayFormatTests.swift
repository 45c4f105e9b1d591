import Foundation
import MQTT
import TestSupport
import Testing

@testable import Bridge

/// ESPresense and Tasmota gateways feeding the running bridge.
@Suite("Gateway formats over MQTT")
struct GatewayFormatTests {
    @Test("Tasmota raw advertisement (AD structures) becomes a picker candidate")
    func tasmotaCandidate() async throws {
        try await withBridge { _, observer async throws in
            #expect(try await observer.request("picker/show", #""products":["Acme Studio Headphones"]"#)["status"] == "ok")
            // flags; complete local name "Acme T"; 16-bit service data FE2C (little-endian) 00 AA.
            let raw = "020106" + "0709" + "41636D652054" + "05162CFE00AA"
            try await observer.publish("tele/tasmota_ble/BLE", #"{"details":{"mac":"D0C3D2A1B2C4","p":"\#(raw)","RSSI":-62}}"#)
            let picker = await observer.waitFor("aabridge/bridge/picker") { ($0["candidates"]?.arrayValue?.count ?? 0) == 1 }
            let candidate = picker?["candidates"]?.arrayValue?.first
            #expect(candidate?["id"] == "D0:C3:D2:A1:B2:C4")
            #expect(candidate?["name"] == "Acme T")
            #expect(candidate?["product"] == "Acme Studio Headphones")
            #expect(candidate?["rssi"] == -62)
            #expect(candidate?["gateway"] == "tasmota_ble")
            let gateways = await observer.waitFor("aabridge/bridge/gateways") {
                AvailabilityFlowTests.gateway($0, "tasmota", heard: "tasmota_ble") != nil
            }
            #expect(AvailabilityFlowTests.gateway(gateways, "tasmota")?["format"] == "tasmota")
        }
    }

    @Test("ESPresense: a device message brings a known accessory back online; the room's status sets the gateway offline")
    func espresense() async throws {
        try await withBridge(availabilityTimeoutSeconds: 1) { _, observer async throws in
            // Let the migrated AirPods' start-up grace run out, so that hearing them shows.
            await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)/availability", timeout: .seconds(4)) {
                $0["state"] == "offline"
            }
            try await observer.publish(
                "espresense/devices/apple:1006:10-12/balkon",
                #"{"mac":"a1b2c3d4e5f6","id":"apple:1006:10-12","rssi@1m":-65,"rssi":-84.77,"distance":2.49}"#)
            let state = await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["gateway"] == "balkon" }
            #expect(state?["rssi"] == -85)
            #expect(state?["available"] == true)
            #expect(state?["last_seen"]?.stringValue != nil)
            try await observer.publish("espresense/rooms/balkon/status", "offline")
            let gateways = await observer.waitFor("aabridge/bridge/gateways") {
                AvailabilityFlowTests.gateway($0, "esp", heard: "balkon")?["state"] == "offline"
            }
            #expect(AvailabilityFlowTests.gateway(gateways, "esp")?["format"] == "espresense")
            // A gateway going offline does not by itself clear anything.
            let current = try await observer.request("accessory/current", #""id":"\#(Fixture.airPods)""#)
            #expect(current["status"] == "ok")
            await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)/availability") { $0["state"] == "online" }
        }
    }
}
