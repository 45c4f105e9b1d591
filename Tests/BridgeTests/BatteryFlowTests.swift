import AccessoryKit
import Foundation
import JSON
import TestSupport
import Testing

@testable import Bridge

/// Batteries as the devices say them (household.md), over a real broker: a single battery
/// publishes `main` and gets one battery sensor, charging flags are published, the case level
/// is kept between frames, and refused frames are counted and change nothing.
@Suite("Batteries and charging over MQTT")
struct BatteryFlowTests {
    static let stateTopic = "aabridge/accessory/\(Fixture.airPodsTopic)"
    static let gatewayTopic = "home/gw1/BTtoMQTT/\(Fixture.airPodsTopic)"
    static let config = "homeassistant/device/aabridge_\(Fixture.airPodsTopic)/config"

    /// A full proximity-pairing message of `model` as OpenMQTTGateway reports it for Alice's AirPods.
    static func sighting(
        model: UInt16, status: UInt8, battery: UInt8, chargingAndCase: UInt8, length: UInt8 = 0x19, prefix: UInt8 = 0x01
    ) -> String {
        let bytes: [UInt8] =
            [0x4C, 0x00, 0x07, length, prefix, UInt8(model & 0xFF), UInt8(model >> 8), status, battery, chargingAndCase, 0x00, 0x00, 0x00]
            + [UInt8](repeating: 0, count: Int(length) - 9)
        return #"{"id":"\#(Fixture.airPods)","manufacturerdata":"\#(Hex.encode(bytes))","rssi":-55}"#
    }

    @Test("an AirPods Max frame: battery {main, charging}, one battery sensor and its charging sensor, no case sensor")
    func singleBattery() async throws {
        try await withBridge(homeAssistant: true, subscribe: ["aabridge/#", "homeassistant/#"]) { _, observer async throws in
            await observer.waitFor(Self.stateTopic)
            // Status 0x02: the right side broadcasts; its nibble (5) is the battery, 50 %.
            try await observer.publish(
                Self.gatewayTopic, Self.sighting(model: 0x200A, status: 0x02, battery: 0x05, chargingAndCase: 0x80))
            let state = await observer.waitFor(Self.stateTopic) { $0["battery"] != .null }
            #expect(state?["battery"] == ["main": 50, "charging": false])
            #expect(state?["model"] == "AirPods Max")
            let discovery = await observer.waitFor(Self.config) { $0["components"]?["battery"] != nil }
            guard case .object(let members)? = discovery?["components"] else { Issue.record("no components"); return }
            let components = members.map(\.0)
            #expect(components.contains("battery") && components.contains("battery_charging"))
            for part in ["battery_left", "battery_right", "battery_case", "battery_case_charging"] {
                #expect(!components.contains(part), "\(part): a single battery has no \(part)")
            }
            // The unique id of the battery sensor is the one it always had.
            #expect(discovery?["components"]?["battery"]?["unique_id"]?.stringValue == "aabridge_\(Fixture.airPodsTopic)_battery")
            #expect(discovery?["components"]?["battery_charging"]?["device_class"] == "battery_charging")
            #expect(discovery?["components"]?["battery_charging"]?["platform"] == "binary_sensor")
        }
    }

    @Test("earbuds: charging flags with their levels; the case level kept by the other bud's frame; native flags published")
    func podsChargingAndCaseMemory() async throws {
        try await withBridge { _, observer async throws in
            await observer.waitFor(Self.stateTopic)
            // The left bud (0x20) in the case (0x40): left 80 % charging, right 70 %, case 50 %.
            try await observer.publish(
                Self.gatewayTopic, Self.sighting(model: 0x200E, status: 0x60, battery: 0x78, chargingAndCase: 0x55))
            let first = await observer.waitFor(Self.stateTopic) { $0["battery"] != .null }
            #expect(
                first?["battery"] == [
                    "left": 80, "right": 70, "case": 50, "left_charging": true, "right_charging": false, "case_charging": true,
                ])
            // The right bud, out of the case, broadcasts: no case level (nibble F). The case's stays.
            try await observer.publish(
                Self.gatewayTopic, Self.sighting(model: 0x200E, status: 0x02, battery: 0x86, chargingAndCase: 0x0F))
            let second = await observer.waitFor(Self.stateTopic) { $0["battery"]?["right"] == 60 }
            #expect(
                second?["battery"] == [
                    "left": 80, "right": 60, "case": 50, "left_charging": false, "right_charging": false, "case_charging": true,
                ])
            // Native telemetry's charging flags are published as given.
            try await observer.publish(
                "aabridge/telemetry/livingroom/\(Fixture.airPodsTopic)", #"{"battery":{"level":40,"charging":true}}"#)
            let native = await observer.waitFor(Self.stateTopic) { $0["battery"]?["main"] == 40 }
            #expect(native?["battery"] == ["main": 40, "charging": true])
        }
    }

    @Test("the kept case level goes when the accessory becomes unavailable")
    func caseDroppedWhenUnavailable() async throws {
        try await withBridge(availabilityTimeoutSeconds: 1) { _, observer async throws in
            await observer.waitFor(Self.stateTopic)
            try await observer.publish(
                Self.gatewayTopic, Self.sighting(model: 0x200E, status: 0x60, battery: 0x78, chargingAndCase: 0x05))
            #expect(await observer.waitFor(Self.stateTopic) { $0["battery"]?["case"] == 50 } != nil)
            // Not heard for the availability timeout: the state that says so has no case level.
            let topic = Self.stateTopic
            let gone = await observer.messages.wait(timeout: .seconds(10)) { elements in
                guard let last = elements.last(where: { $0.topic == topic }), let state = try? JSONParser.parse(last.payload) else {
                    return false
                }
                return state["available"]?.boolValue == false && state["battery"]?["left"] != nil
            }
            #expect(gone)
            let last = observer.json(on: topic).last
            #expect(last?["available"] == false)
            #expect(last?["battery"] == ["left": 80, "right": 70, "left_charging": false, "right_charging": false])
        }
    }

    @Test("refused frames: counted in telemetry_rejected with their reason, logged, nothing published")
    func refusedFrames() async throws {
        try await withBridge { _, observer async throws in
            let before = await observer.waitFor(Self.stateTopic)
            let bad = [
                Self.sighting(model: 0x2014, status: 0x75, battery: 0xAA, chargingAndCase: 0x58, length: 0x13), // counterfeit
                Self.sighting(model: 0x200E, status: 0x22, battery: 0xB5, chargingAndCase: 0x05), // nibble 11
                #"{"id":"\#(Fixture.airPods)","manufacturerdata":"4c000719010e2022f58f","rssi":-55}"#, // shorter
                #"{"id":"\#(Fixture.airPods)","manufacturerdata":"4c000709010e2022f58f00000042","rssi":-55}"#, // longer
            ]
            for payload in bad { try await observer.publish(Self.gatewayTopic, payload) }
            let health = try await observer.request("health")
            #expect(health["data"]?["telemetry_rejected"] == 4, "\(health)")
            let log = await observer.waitFor("aabridge/bridge/log") { $0["level"] == "warning" }
            #expect(
                log?["message"]?.stringValue?.contains("invalidProximityPairing: Apple proximity pairing refused: length byte 0x13") == true
            )
            let state = observer.json(on: Self.stateTopic).last
            for key in ["battery", "model", "available", "last_seen", "rssi"] {
                #expect(state?[key] == before?[key], "\(key) unchanged")
            }
        }
    }

    @Test("frames without status (prefix 0x07 on connect, 0x00, the case's own) are sightings: RSSI taken, nothing rejected")
    func variantsWithoutStatus() async throws {
        try await withBridge { _, observer async throws in
            await observer.waitFor(Self.stateTopic)
            // A status frame first: its battery must survive the frames that carry none.
            try await observer.publish(
                Self.gatewayTopic, Self.sighting(model: 0x200E, status: 0x22, battery: 0x78, chargingAndCase: 0x05))
            _ = await observer.waitFor(Self.stateTopic) { $0["battery"] != .null }
            // CAPod #603's prefix-0x07 frame (AirPods 4 on connect), a prefix-0x00 frame of 15
            // bytes, the AirPods Pro 3 case's 0x06 + 16 bytes, each from the accessory's address.
            let frames = [
                "4c000719071920" + "35dfde4676ce665cf46ebab6ac1b694ca7d809bf9a04",
                "4c00070f000e20" + String(repeating: "00", count: 12),
                "4c00071106" + "0123456789abcdef0123456789abcdef",
            ]
            for (index, frame) in frames.enumerated() {
                let rssi = -41 - index
                try await observer.publish(
                    Self.gatewayTopic, #"{"id":"\#(Fixture.airPods)","manufacturerdata":"\#(frame)","rssi":\#(rssi)}"#)
                // A rename publishes the state at once, with the RSSI the sighting left.
                _ = try await observer.request("accessory/rename", #""id":"\#(Fixture.airPods)","name":"Alice \#(index)""#)
                let state = await observer.waitFor(Self.stateTopic) { $0["name"] == .string("Alice \(index)") }
                #expect(state?["rssi"] == .int(rssi), "frame \(index) counted as a sighting")
                #expect(state?["battery"]?["left"] == 80, "frame \(index) leaves the battery as it was")
            }
            let health = try await observer.request("health")
            #expect(health["data"]?["telemetry_rejected"] == 0, "\(health)")
        }
    }
}
