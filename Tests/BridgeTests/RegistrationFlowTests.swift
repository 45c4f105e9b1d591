import Foundation
import MQTT
import TestSupport
import Testing

@testable import Bridge

/// AudioAccessoryKit register / current / update / invalidate over MQTT, and their errors.
@Suite("Registration over MQTT")
struct RegistrationFlowTests {
    struct Refusal: Sendable, CustomStringConvertible {
        let members: String
        let code: String
        let why: String
        var description: String { why }
    }

    static let refusals: [Refusal] = [
        Refusal(
            members: #""id":"\#(Fixture.speaker)","capabilities":["audioSwitching","placement"]"#,
            code: "accessoryNotCapable", why: "placement beyond the product's hardware"),
        Refusal(
            members: #""id":"\#(Fixture.headphones)","capabilities":[]"#,
            code: "invalidRequest", why: "empty capabilities"),
        Refusal(
            members: #""id":"\#(Fixture.headphones)","capabilities":["audioSwitching"],"placement":"inEar""#,
            code: "invalidRequest", why: "placement without the placement capability"),
        Refusal(
            members: #""id":"\#(Fixture.headphones)","capabilities":["placement"],"primary_source":"\#(Fixture.phone)""#,
            code: "invalidRequest", why: "a source without audioSwitching"),
        Refusal(
            members: #""id":"\#(Fixture.headphones)","capabilities":["audioSwitching"],"secondary_source":"\#(Fixture.phone)""#,
            code: "invalidRequest", why: "secondary without primary"),
        Refusal(
            members:
                #""id":"\#(Fixture.headphones)","capabilities":["audioSwitching"],"primary_source":"\#(Fixture.phone)","secondary_source":"\#(Fixture.phone)""#,
            code: "invalidRequest", why: "primary == secondary"),
        Refusal(
            members: #""id":"\#(Fixture.headphones)","capabilities":["audioSwitching"],"primary_source":"11:22:33""#,
            code: "invalidRequest", why: "a source that is not 6 bytes"),
        Refusal(
            members: #""id":"01:02:03:04:05:06","capabilities":["audioSwitching"]"#,
            code: "invalidRequest", why: "an accessory the session does not know"),
    ]

    @Test("register refusals: error response in the AccessoryControlDevice domain, nothing registered")
    func registerRefusals() async throws {
        try await withBridge { _, observer async throws in
            for refusal in Self.refusals {
                let response = try await observer.request("accessory/register", refusal.members)
                #expect(response["status"] == "error", "\(refusal)")
                #expect(response["error"]?["code"] == .string(refusal.code), "\(refusal): \(response)")
                #expect(response["error"]?["domain"] == "AccessoryControlDevice", "\(refusal)")
                #expect(response["error"]?["message"]?.stringValue?.isEmpty == false)
            }
            for id in [Fixture.headphones, Fixture.speaker] {
                let current = try await observer.request("accessory/current", #""id":"\#(id)""#)
                #expect(current["error"]?["code"] == "invalidRequest", "never registered: \(current)")
            }
            let health = try await observer.request("health")
            #expect((health["data"]?["errors"]?.intValue ?? 0) >= Self.refusals.count, "errors are counted")
            #expect(health["data"]?["registered"] == 1)
        }
    }

    @Test("one refused request is one error in health, though it is both answered and published on accessory/<ID>/error")
    func errorCountedOnce() async throws {
        try await withBridge { _, observer async throws in
            let before = try await observer.request("health")["data"]?["errors"]?.intValue
            #expect(before == 0)
            let refused = try await observer.request(
                "accessory/register",
                #""id":"\#(Fixture.speaker)","capabilities":["placement"]"#)
            #expect(refused["error"]?["code"] == "accessoryNotCapable")
            await observer.waitFor("aabridge/accessory/\(Fixture.speakerTopic)/error")
            let after = try await observer.request("health")["data"]?["errors"]?.intValue
            #expect(after == 1)
        }
    }

    @Test("register: data is the configuration; the accessory topic shows it; registering again replaces it")
    func register() async throws {
        try await withBridge { _, observer async throws in
            let response = try await observer.request(
                "accessory/register",
                #""id":"\#(Fixture.headphones)","capabilities":["placement","audioSwitching"],"primary_source":"\#(Fixture.phone)","secondary_source":"\#(Fixture.laptop)""#
            )
            #expect(response["status"] == "ok")
            #expect(
                response["data"] == [
                    "capabilities": ["audioSwitching", "placement"], "placement": "offHead",
                    "primary_source": .string(Fixture.phone), "secondary_source": .string(Fixture.laptop),
                ], "offHead when the caller gives no placement")
            let state = await observer.waitFor("aabridge/accessory/\(Fixture.headphonesTopic)") { $0["registration"] == "active" }
            #expect(state?["primary_source"] == .string(Fixture.phone))
            #expect(state?["secondary_source"] == .string(Fixture.laptop))

            let again = try await observer.request(
                "accessory/register", #""id":"\#(Fixture.headphones)","capabilities":["audioSwitching"]"#)
            #expect(
                again["data"] == [
                    "capabilities": ["audioSwitching"], "placement": nil, "primary_source": nil, "secondary_source": nil,
                ])
            let current = try await observer.request("accessory/current", #""id":"\#(Fixture.headphones)""#)
            #expect(current["data"]?["configuration"] == again["data"])
            #expect(current["data"]?["accessory"]?["id"] == .string(Fixture.headphones))
        }
    }

    @Test("invalidate: current fails invalidated, updates fail with recovery needsContainerRegistrationEvaluation, register heals")
    func invalidation() async throws {
        try await withBridge { _, observer async throws in
            // Bob's headphones' product has no auto_register: an invalidation waits for the
            // container role (an auto_register accessory is registered again: the next test).
            let first = try await observer.request(
                "accessory/register",
                #""id":"\#(Fixture.headphones)","capabilities":["audioSwitching","placement"],"placement":"offHead""#)
            #expect(first["status"] == "ok")
            let errorTopic = "aabridge/accessory/\(Fixture.headphonesTopic)/error"
            let invalidated = try await observer.request("accessory/invalidate", #""id":"\#(Fixture.headphones)""#)
            #expect(invalidated["status"] == "ok")
            await observer.waitFor("aabridge/accessory/\(Fixture.headphonesTopic)") { $0["registration"] == "invalidated" }

            let current = try await observer.request("accessory/current", #""id":"\#(Fixture.headphones)""#)
            #expect(current["error"]?["code"] == "invalidated")
            #expect(current["error"]?["domain"] == "AccessoryControlDevice")

            try await observer.publish("aabridge/accessory/\(Fixture.headphonesTopic)/set", #"{"placement":"inEar"}"#)
            // (current above published its own error, operation current, on the same topic)
            #expect(observer.json(on: errorTopic).contains { $0["code"] == "invalidated" && $0["operation"] == "current" })
            let error = await observer.waitFor(errorTopic) { $0["code"] == "invalidated" && $0["operation"] == "update" }
            #expect(error?["recovery"] == "needsContainerRegistrationEvaluation")
            #expect(error?["at"]?.stringValue != nil)
            #expect(observer.messages(on: errorTopic).allSatisfy { !$0.retain }, "errors are not retained")
            // Native telemetry goes through the same rules.
            try await observer.publish("aabridge/telemetry/livingroom/\(Fixture.headphonesTopic)", #"{"worn":true}"#)
            await observer.messages.wait { $0.filter { $0.topic == errorTopic }.count >= 3 }
            #expect(observer.json(on: errorTopic).allSatisfy { $0["recovery"] == "needsContainerRegistrationEvaluation" })
            let state = await observer.waitFor("aabridge/accessory/\(Fixture.headphonesTopic)") {
                $0["last_error"]?["code"] == "invalidated"
            }
            #expect(state?["placement"] == "offHead", "a failed update changes nothing")

            // The container role registers again: the invalidation is cleared.
            let registered = try await observer.request(
                "accessory/register",
                #""id":"\#(Fixture.headphones)","capabilities":["audioSwitching","placement"]"#)
            #expect(registered["status"] == "ok")
            #expect(try await observer.request("accessory/current", #""id":"\#(Fixture.headphones)""#)["status"] == "ok")
            let before = observer.messages(on: errorTopic).count
            try await observer.publish("aabridge/accessory/\(Fixture.headphonesTopic)/set", #"{"placement":"inEar"}"#)
            await observer.waitFor("aabridge/accessory/\(Fixture.headphonesTopic)") { $0["placement"] == "inEar" }
            #expect(observer.messages(on: errorTopic).count == before)
        }
    }

    @Test("an auto_register accessory's invalidated registration is registered again at once, with its last configuration")
    func invalidationOfAutoRegistered() async throws {
        try await withBridge { _, observer async throws in
            let registered = try await observer.request(
                "accessory/register",
                #""id":"\#(Fixture.airPods)","capabilities":["audioSwitching","placement"],"primary_source":"\#(Fixture.phone)""#)
            #expect(registered["status"] == "ok")
            let invalidated = try await observer.request("accessory/invalidate", #""id":"\#(Fixture.airPods)""#)
            #expect(invalidated["status"] == "ok")
            // The same step registered it again: current answers at once, with the sources kept.
            let current = try await observer.request("accessory/current", #""id":"\#(Fixture.airPods)""#)
            #expect(current["status"] == "ok")
            #expect(current["data"]?["configuration"] == registered["data"])
            let state = await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") {
                $0["registration"] == "active" && $0["primary_source"] == .string(Fixture.phone)
            }
            #expect(state != nil)
            #expect(observer.json(on: "aabridge/accessory/\(Fixture.airPodsTopic)/error").isEmpty)
            // Updates keep working without anyone sending register.
            try await observer.publish("aabridge/accessory/\(Fixture.airPodsTopic)/set", #"{"placement":"inEar"}"#)
            #expect(await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["placement"] == "inEar" } != nil)
        }
    }

    @Test("an auto_register accessory heard as a model without a wear sensor is registered again without placement, and routed")
    func wearlessModel() async throws {
        try await withBridge { _, observer async throws in
            let registered = try await observer.request(
                "accessory/register",
                #""id":"\#(Fixture.airPods)","capabilities":["audioSwitching","placement"],"primary_source":"\#(Fixture.phone)""#)
            #expect(registered["status"] == "ok")
            // Beats Solo3 (model 0x2006): status 0x22 would be "in an ear" for earbuds, but
            // this model has no wear sensor.
            let solo3 = "4c000719010620228506000000" + String(repeating: "00", count: 16)
            try await observer.publish(
                "home/gw1/BTtoMQTT/A1B2C3D4E5F6", #"{"id":"\#(Fixture.airPods)","manufacturerdata":"\#(solo3)","rssi":-50}"#)
            let state = await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["capabilities"] == ["audioSwitching"] }
            #expect(state?["model"] == "Beats Solo3")
            #expect(state?["primary_source"] == .string(Fixture.phone))
            let route = await observer.waitFor("aabridge/source/\(Fixture.phoneTopic)/route") { $0["target"] == .string(Fixture.airPods) }
            #expect(route != nil, "routed while available, as an accessory without placement is")
        }
    }

    @Test("update beyond the registered capabilities: accessoryNotCapable on accessory/<ID>/error")
    func updateNotCapable() async throws {
        try await withBridge { _, observer async throws in
            #expect(
                try await observer.request(
                    "accessory/register",
                    #""id":"\#(Fixture.speaker)","capabilities":["audioSwitching"]"#)["status"] == "ok")
            try await observer.publish("aabridge/accessory/\(Fixture.speakerTopic)/set", #"{"placement":"inEar"}"#)
            let error = await observer.waitFor("aabridge/accessory/\(Fixture.speakerTopic)/error")
            #expect(error?["code"] == "accessoryNotCapable")
            #expect(error?["operation"] == "update")
            #expect(error?["field"] == "devicePlacement")
            #expect(error?["recovery"] == .null)
            // Updates that are within the capabilities work.
            try await observer.publish("aabridge/accessory/\(Fixture.speakerTopic)/set", #"{"sources":["\#(Fixture.phone)"]}"#)
            await observer.waitFor("aabridge/accessory/\(Fixture.speakerTopic)") { $0["primary_source"] == .string(Fixture.phone) }
            #expect(observer.json(on: "aabridge/accessory/\(Fixture.speakerTopic)").last?["placement"] == .null)
        }
    }

    @Test("register through accessory/<ID>/set (the extension role) is refused with invalidRequest")
    func registerThroughSetRefused() async throws {
        try await withBridge { _, observer async throws in
            try await observer.publish(
                "aabridge/accessory/\(Fixture.headphonesTopic)/set",
                #"{"capabilities":["audioSwitching","placement"],"placement":"inEar"}"#)
            let error = await observer.waitFor("aabridge/accessory/\(Fixture.headphonesTopic)/error")
            #expect(error?["code"] == "invalidRequest")
            #expect(error?["operation"] == "register")
            let current = try await observer.request("accessory/current", #""id":"\#(Fixture.headphones)""#)
            #expect(current["error"]?["code"] == "invalidRequest", "still not registered")
            let errors = observer.json(on: "aabridge/accessory/\(Fixture.headphonesTopic)/error")
            #expect(
                errors.filter { $0["operation"] == "register" }.count == 1,
                "one refusal, one error message: \(errors.map(\.serialized))")
            #expect(observer.json(on: "aabridge/accessory/\(Fixture.headphonesTopic)").allSatisfy { $0["registration"] == "none" })
        }
    }

    @Test("remove: accessoryRemoved, retained accessory topic cleared, registration gone")
    func remove() async throws {
        try await withBridge { harness, observer async throws in
            let topic = "aabridge/accessory/\(Fixture.airPodsTopic)"
            await observer.waitFor(topic)
            let removed = try await observer.request("accessory/remove", #""id":"\#(Fixture.airPods)""#)
            #expect(removed["status"] == "ok")
            let event = await observer.waitFor(PickerFlowTests.event) { $0["type"] == "accessoryRemoved" }
            #expect(event?["raw"] == 31)
            #expect(event?["accessory"]?["id"] == .string(Fixture.airPods))
            let cleared = await observer.messages.wait { elements in
                elements.contains { $0.topic == topic && $0.payload.isEmpty }
            }
            #expect(cleared, "an empty payload clears the retained accessory topic")
            await observer.waitFor("aabridge/bridge/accessories") { $0.arrayValue?.count == 2 }

            // A subscriber arriving now sees no retained state for it.
            let late = try await Observer(broker: harness.broker)
            await late.waitFor("aabridge/bridge/accessories")
            // The retained messages come with the subscription, before any answer to a request.
            _ = try await late.request("health")
            #expect(late.messages(on: topic).isEmpty, "got \(late.messages(on: topic).map(\.payloadString))")
            #expect(late.json(on: "aabridge/bridge/accessories").last?.arrayValue?.count == 2)
            await late.disconnect()

            let current = try await observer.request("accessory/current", #""id":"\#(Fixture.airPods)""#)
            #expect(current["error"]?["code"] == "invalidRequest")
            let info = try await observer.request("health")
            #expect(info["data"]?["accessories"] == 2)
            #expect(info["data"]?["registered"] == 0)
        }
    }

    @Test("rename: accessoryChanged and the new name in the state")
    func rename() async throws {
        try await withBridge { _, observer async throws in
            #expect(try await observer.request("accessory/rename", #""id":"\#(Fixture.speaker)","name":"Den Speaker""#)["status"] == "ok")
            let changed = await observer.waitFor(PickerFlowTests.event) { $0["type"] == "accessoryChanged" }
            #expect(changed?["raw"] == 32)
            #expect(changed?["accessory"]?["name"] == "Den Speaker")
            await observer.waitFor("aabridge/accessory/\(Fixture.speakerTopic)") { $0["name"] == "Den Speaker" }
        }
    }
}
