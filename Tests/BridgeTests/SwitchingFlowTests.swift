import Foundation
import Testing
@testable import Bridge
import MQTT
import TestSupport

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
            observer.client.post(topic: Self.telemetry, payload: Array(#"{"placement":"inEar"}"#.utf8), qos: .atLeastOnce)
            observer.client.post(topic: Self.telemetry, payload: Array(#"{"placement":"offHead"}"#.utf8), qos: .atLeastOnce)
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
            #expect(try await observer.request("accessory/register",
                #""id":"\#(Fixture.headphones)","capabilities":["audioSwitching","placement"]"#)["status"] == "ok")
            // The phone is the headphones' secondary source, the AirPods' primary.
            try await observer.publish(headphones, #"{"sources":["\#(Fixture.laptop)","\#(Fixture.phone)"]}"#)
            try await observer.publish(headphones, #"{"worn":true,"hardware":"overEarHeadphone"}"#)
            let first = await observer.waitFor("aabridge/source/\(Fixture.phoneTopic)/route") { $0["target"] == .string(Fixture.headphones) }
            #expect(first?["reason"] == "placement:overTheEar")

            try await observer.publish(Self.telemetry, #"{"sources":["\#(Fixture.phone)"]}"#)
            try await observer.publish(Self.telemetry, #"{"placement":"inEar"}"#)
            await observer.waitFor("aabridge/source/\(Fixture.phoneTopic)/route") { $0["target"] == .string(Fixture.airPods) }
            await observer.waitFor("aabridge/accessory/\(Fixture.headphonesTopic)/decision") { $0["action"] == "release" }

            try await observer.publish(Self.telemetry, #"{"source_disconnected":"\#(Fixture.phone)"}"#)
            let back = await observer.waitFor("aabridge/source/\(Fixture.phoneTopic)/route") {
                $0["target"] == .string(Fixture.headphones) && $0["reason"] == "source_disconnected"
            }
            #expect(back != nil)
            let released = await observer.waitFor(Self.decision) { $0["action"] == "release" }
            #expect(released?["reason"] == "source_disconnected")
            await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["primary_source"] == .null }
        }
    }
}
