import Foundation
import JSON
import MQTT
import TestSupport
import Testing

@testable import Bridge

/// Switching decisions and source routes from telemetry, end to end.
@Suite("Switching over MQTT")
struct SwitchingFlowTests {
    static let telemetry = "aabridge/telemetry/livingroom/\(Fixture.airPodsTopic)"
    static let decision = "aabridge/accessory/\(Fixture.airPodsTopic)/decision"
    static let route = "aabridge/source/\(Fixture.phoneTopic)/route"

    @Test("worn + source connected routes the source; offHead releases it; the source route is retained")
    func routeAndRelease() async throws {
        try await withBridge { harness, observer async throws in
            // Heard by a gateway (available), then the phone connects: still offHead, no route.
            try await observer.publish(Self.telemetry, #"{"rssi":-61}"#)
            try await observer.publish(Self.telemetry, #"{"source_connected":"\#(Fixture.phone)"}"#)
            await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["primary_source"] == .string(Fixture.phone) }
            #expect(observer.messages(on: Self.decision).isEmpty, "not worn: no decision")

            try await observer.publish(Self.telemetry, #"{"placement":"inEar"}"#)
            let routed = await observer.waitFor(Self.decision) { $0["action"] == "route" }
            #expect(routed?["accessory"] == .string(Fixture.airPods))
            #expect(routed?["source"] == .string(Fixture.phone))
            #expect(routed?["source_name"] == "Alice's iPhone")
            #expect(routed?["reason"] == "placement:inEar")
            #expect(routed?["placement"] == "inEar")
            #expect(routed?["at"]?.stringValue?.hasSuffix("Z") == true)
            let route = await observer.waitFor(Self.route) { $0["target"] == .string(Fixture.airPods) }
            #expect(route?["source"] == .string(Fixture.phone))
            #expect(route?["name"] == "Alice's iPhone")
            #expect(route?["accessory_name"] == "Alice's AirPods")
            #expect(route?["reason"] == "placement:inEar")
            let state = await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["routes"] == [.string(Fixture.phone)] }
            #expect(state?["worn"] == true)
            #expect(state?["available"] == true)
            #expect(state?["gateway"] == "livingroom")

            try await observer.publish(Self.telemetry, #"{"worn":false}"#)
            let released = await observer.waitFor(Self.decision) { $0["action"] == "release" }
            #expect(released?["reason"] == "placement:offHead")
            #expect(released?["source"] == .string(Fixture.phone))
            let fallback = await observer.waitFor(Self.route) { $0["target"] == "fallback" }
            #expect(fallback?["reason"] == "placement:offHead")
            #expect(observer.messages(on: Self.decision).count == 2)
            #expect(observer.messages(on: Self.decision).allSatisfy { !$0.retain })

            // Retained: a later subscriber gets the source's current route.
            let late = try await Observer(broker: harness.broker, subscribe: ["aabridge/source/#"])
            let retained = await late.waitFor(Self.route)
            #expect(retained?["target"] == "fallback")
            #expect(late.messages(on: Self.route).first?.retain == true)
            await late.disconnect()

            // Same placement again: no update, no decision.
            try await observer.publish(Self.telemetry, #"{"placement":"offHead"}"#)
            let health = try await observer.request("health")
            #expect(health["data"]?["decisions"] == 2)
        }
    }

    @Test("debounce: a flap inside the window gives no decision; a steady change gives one after the window")
    func debounce() async throws {
        try await withBridge(debounceMilliseconds: 500) { _, observer async throws in
            try await observer.publish(Self.telemetry, #"{"rssi":-61,"source_connected":"\#(Fixture.phone)"}"#)
            await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["primary_source"] == .string(Fixture.phone) }

            // inEar and straight back to offHead (the committed value): cancelled.
            // Queued back to back (not waiting for each PUBACK) so that a loaded machine cannot
            // stretch the flap beyond the window.
            observer.client.enqueue(topic: Self.telemetry, payload: Array(#"{"placement":"inEar"}"#.utf8), qos: .atLeastOnce)
            observer.client.enqueue(topic: Self.telemetry, payload: Array(#"{"placement":"offHead"}"#.utf8), qos: .atLeastOnce)
            try await Task.sleep(for: .milliseconds(1_000))
            #expect(observer.messages(on: Self.decision).isEmpty, "\(observer.messages(on: Self.decision).map(\.payloadString))")
            #expect(observer.json(on: "aabridge/accessory/\(Fixture.airPodsTopic)").allSatisfy { $0["placement"] == "offHead" })

            // A steady inEar: committed only after the window.
            let sent = ContinuousClock.now
            try await observer.publish(Self.telemetry, #"{"placement":"inEar"}"#)
            let routed = await observer.waitFor(Self.decision) { $0["action"] == "route" }
            let elapsed = ContinuousClock.now - sent
            #expect(routed?["reason"] == "placement:inEar")
            #expect(elapsed >= .milliseconds(450), "committed after the debounce window, not at once (\(elapsed))")
            #expect(observer.messages(on: Self.decision).count == 1)
        }
    }

    @Test("primary beats secondary; source_disconnected releases with its reason")
    func primaryBeatsSecondary() async throws {
        try await withBridge { _, observer async throws in
            let headphones = "aabridge/telemetry/den/\(Fixture.headphonesTopic)"
            #expect(
                try await observer.request(
                    "accessory/register",
                    #""id":"\#(Fixture.headphones)","capabilities":["audioSwitching","placement"]"#)["status"] == "ok")
            // The phone is the headphones' secondary source, the AirPods' primary.
            try await observer.publish(headphones, #"{"sources":["\#(Fixture.laptop)","\#(Fixture.phone)"]}"#)
            try await observer.publish(headphones, #"{"worn":true,"hardware":"overEarHeadphone"}"#)
            let first = await observer.waitFor("aabridge/source/\(Fixture.phoneTopic)/route") {
                $0["target"] == .string(Fixture.headphones)
            }
            #expect(first?["reason"] == "placement:overTheEar")

            try await observer.publish(Self.telemetry, #"{"sources":["\#(Fixture.phone)"]}"#)
            try await observer.publish(Self.telemetry, #"{"placement":"inEar"}"#)
            await observer.waitFor("aabridge/source/\(Fixture.phoneTopic)/route") { $0["target"] == .string(Fixture.airPods) }
            await observer.waitFor("aabridge/accessory/\(Fixture.headphonesTopic)/decision") { $0["action"] == "release" }

            try await observer.publish(Self.telemetry, #"{"source_disconnected":"\#(Fixture.phone)"}"#)
            // The AirPods' release names its cause; the headphones get the phone back because
            // the AirPods released it.
            let back = await observer.waitFor("aabridge/source/\(Fixture.phoneTopic)/route") {
                $0["target"] == .string(Fixture.headphones) && $0["reason"] == "other_accessory_released"
            }
            #expect(back != nil)
            let released = await observer.waitFor(Self.decision) { $0["action"] == "release" }
            #expect(released?["reason"] == "source_disconnected")
            await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["primary_source"] == .null }
        }
    }

    @Test("Apple proximity-pairing advertisements (real vectors) drive placement: in ear routes, in the case releases")
    func appleProximityPlacement() async throws {
        try await withBridge { _, observer async throws in
            // The fixtures' two real AirPods Pro vectors, as if broadcast by Alice's AirPods.
            let inEar = try JSONParser.parse(try Fixture.gatewayPayload(topic: "home/gw1/BTtoMQTT/F1E2D3C4B5A6"))["manufacturerdata"]?
                .stringValue
            let inCase = try JSONParser.parse(try Fixture.gatewayPayload(topic: "home/gw1/BTtoMQTT/F1E2D3C4B5A7"))["manufacturerdata"]?
                .stringValue
            let topic = "home/gw1/BTtoMQTT/\(Fixture.airPodsTopic)"
            func advertisement(_ data: String?) -> String {
                #"{"id":"\#(Fixture.airPods)","mac_type":1,"manufacturerdata":"\#(data ?? "")","rssi":-48}"#
            }
            try await observer.publish("aabridge/accessory/\(Fixture.airPodsTopic)/set", #"{"source_connected":"\#(Fixture.phone)"}"#)
            try await observer.publish(topic, advertisement(inEar))
            let routed = await observer.waitFor(Self.decision) { $0["action"] == "route" }
            #expect(routed?["reason"] == "placement:inEar")
            let state = await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["placement"] == "inEar" }
            #expect(state?["worn"] == true)
            #expect(state?["gateway"] == "gw1")
            #expect(state?["rssi"] == -48)
            #expect(state?["battery"] != .null, "the proximity message carries battery levels")

            // The same status again: no update, no decision.
            try await observer.publish(topic, advertisement(inEar))
            try await observer.publish(topic, advertisement(inCase))
            let released = await observer.waitFor(Self.decision) { $0["action"] == "release" }
            #expect(released?["reason"] == "placement:offHead")
            #expect(observer.messages(on: Self.decision).count == 2)
            await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["placement"] == "offHead" && $0["worn"] == false }
        }
    }

    @Test("preferred_source moves a source to the front: primary/secondary follow, the route follows")
    func preferredSource() async throws {
        try await withBridge { _, observer async throws in
            let set = "aabridge/accessory/\(Fixture.airPodsTopic)/set"
            try await observer.publish(Self.telemetry, #"{"sources":["\#(Fixture.phone)","\#(Fixture.laptop)"]}"#)
            try await observer.publish(Self.telemetry, #"{"placement":"inEar"}"#)
            await observer.waitFor(Self.route) { $0["target"] == .string(Fixture.airPods) }
            try await observer.publish(set, #"{"preferred_source":"\#(Fixture.laptop)"}"#)
            let state = await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") {
                $0["primary_source"] == .string(Fixture.laptop)
            }
            #expect(state?["secondary_source"] == .string(Fixture.phone))
            let current = try await observer.request("accessory/current", #""id":"\#(Fixture.airPods)""#)
            #expect(current["data"]?["configuration"]?["primary_source"] == .string(Fixture.laptop))
            #expect(current["data"]?["configuration"]?["secondary_source"] == .string(Fixture.phone))
            // An unknown source has no name.
            let laptopRoute = await observer.waitFor("aabridge/source/665544332211/route") { $0["target"] == .string(Fixture.airPods) }
            #expect(laptopRoute?["name"] == .null)
        }
    }

    @Test("/set for an accessory that is not registered: invalidRequest (operation update), nothing changes")
    func setUnregistered() async throws {
        try await withBridge { _, observer async throws in
            try await observer.publish("aabridge/accessory/\(Fixture.headphonesTopic)/set", #"{"placement":"onHead"}"#)
            let error = await observer.waitFor("aabridge/accessory/\(Fixture.headphonesTopic)/error")
            #expect(error?["code"] == "invalidRequest")
            #expect(error?["operation"] == "update")
            #expect(observer.json(on: "aabridge/accessory/\(Fixture.headphonesTopic)").allSatisfy { $0["placement"] == .null })
            // /set for an id the bridge does not know: counted, no error topic invented for it.
            try await observer.publish("aabridge/accessory/0A0B0C0D0E0F/set", #"{"placement":"onHead"}"#)
            let health = try await observer.request("health")
            #expect(health["data"]?["telemetry_rejected"] == 1)
            #expect(observer.messages(on: "aabridge/accessory/0A0B0C0D0E0F/error").isEmpty)
        }
    }

    @Test("native telemetry battery shows in the accessory state, rssi with it")
    func batteryAndRSSI() async throws {
        try await withBridge { _, observer async throws in
            try await observer.publish(Self.telemetry, #"{"battery":{"left":80,"right":75,"case":40,"charging":false}}"#)
            let state = await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["battery"] != .null }
            #expect(state?["battery"] == ["left": 80, "right": 75, "case": 40])
            // RSSI alone does not republish the state (the engine updates it in place, as for
            // every advertisement); it shows with the next state change.
            try await observer.publish(Self.telemetry, #"{"rssi":-67}"#)
            try await observer.publish(Self.telemetry, #"{"battery":{"left":70}}"#)
            let next = await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["battery"]?["left"] == 70 }
            #expect(next?["rssi"] == -67)
            #expect(next?["gateway"] == "livingroom")
            // Out of range: rejected with an update error.
            try await observer.publish(Self.telemetry, #"{"battery":{"left":180}}"#)
            let error = await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)/error")
            #expect(error?["code"] == "invalidRequest")
        }
    }
}
