import Foundation
import JSON
import MQTT
import TestSupport
import Testing

@testable import Bridge

/// Bad requests and bad telemetry: answered or counted, never fatal, never a state change.
@Suite("Malformed input over MQTT")
struct MalformedInputTests {
    struct BadRequest: Sendable, CustomStringConvertible {
        let name: String
        let payload: String
        /// The transaction the response must echo (nil: none may appear).
        let transaction: JSONValue?
        let description: String
    }

    static let badRequests: [BadRequest] = [
        BadRequest(name: "picker/show", payload: "hello, bridge", transaction: nil, description: "not JSON"),
        BadRequest(name: "accessory/current", payload: "", transaction: nil, description: "empty payload"),
        BadRequest(name: "accessory/register", payload: #"{"id":"A1:B2"#, transaction: nil, description: "truncated JSON"),
        BadRequest(name: "accessory/current", payload: #"["A1:B2:C3:D4:E5:F6"]"#, transaction: nil, description: "an array, not an object"),
        BadRequest(name: "picker/dismiss", payload: #""dismiss""#, transaction: nil, description: "a string, not an object"),
        BadRequest(name: "accessory/current", payload: #"{"transaction":7}"#, transaction: 7, description: "missing id"),
        BadRequest(
            name: "accessory/remove", payload: #"{"id":null,"transaction":"t-null"}"#, transaction: "t-null", description: "null id"),
        BadRequest(
            name: "accessory/rename", payload: #"{"id":"\#(Fixture.speaker)","transaction":[1,"x"]}"#,
            transaction: [1, "x"], description: "missing name"),
        BadRequest(
            name: "accessory/authorize", payload: #"{"id":"not-an-address","transaction":{"n":1}}"#,
            transaction: ["n": 1], description: "bad address"),
        BadRequest(
            name: "accessory/invalidate", payload: #"{"id":"A1:B2:C3:D4:E5","transaction":"short"}"#,
            transaction: "short", description: "5-byte address"),
        BadRequest(
            name: "accessory/register", payload: #"{"id":"\#(Fixture.headphones)","transaction":"no-caps"}"#,
            transaction: "no-caps", description: "register without capabilities"),
        BadRequest(
            name: "accessory/register",
            payload: #"{"id":"\#(Fixture.headphones)","capabilities":"audioSwitching","transaction":"str-caps"}"#,
            transaction: "str-caps", description: "capabilities not an array"),
        BadRequest(
            name: "picker/show", payload: #"{"timeout":"forever","transaction":true}"#, transaction: true, description: "bad timeout"),
        BadRequest(name: "picker/select", payload: #"{"transaction":null}"#, transaction: nil, description: "select without id"),
        BadRequest(name: "nope", payload: #"{"transaction":"unknown"}"#, transaction: "unknown", description: "unknown request"),
        BadRequest(
            name: "accessory/frobnicate", payload: #"{"id":"\#(Fixture.airPods)","transaction":"unknown-2"}"#,
            transaction: "unknown-2", description: "unknown accessory request"),
    ]

    /// One bridge for all cases (a broker per case would start 16 mosquittos at once).
    @Test("every malformed request gets exactly one invalidRequest response, transaction echoed")
    func malformedRequests() async throws {
        try await withBridge { _, observer async throws in
            for bad in Self.badRequests {
                let topic = "aabridge/bridge/response/\(bad.name)"
                let before = observer.messages(on: topic).count
                try await observer.publish("aabridge/bridge/request/\(bad.name)", bad.payload)
                let answered = await observer.messages.wait { $0.filter { $0.topic == topic }.count > before }
                #expect(answered, "\(bad): no response")
                let response = observer.json(on: topic).last
                #expect(response?["status"] == "error", "\(bad)")
                #expect(response?["error"]?["code"] == "invalidRequest", "\(bad): \(response.map(\.serialized) ?? "-")")
                #expect(response?["error"]?["message"]?.stringValue?.isEmpty == false, "\(bad)")
                #expect(response?["data"] == .object([]), "\(bad)")
                if let transaction = bad.transaction {
                    #expect(response?["transaction"] == transaction, "\(bad)")
                } else {
                    #expect(response?["transaction"] == nil || response?["transaction"] == .null, "\(bad)")
                }
                // A request behind it is answered after it: by then a second response would be there.
                #expect(try await observer.request("health")["status"] == "ok")
                #expect(
                    observer.messages(on: topic).count == before + 1 + (bad.name == "health" ? 1 : 0),
                    "\(bad): exactly one response: \(observer.messages(on: topic).suffix(2).map(\.payloadString))")
            }
            #expect(observer.messages(on: "aabridge/bridge/state").last?.payloadString == #"{"state":"online"}"#)
            let health = try await observer.request("health")
            #expect((health["data"]?["errors"]?.intValue ?? 0) >= Self.badRequests.count, "counted as errors")
        }
    }

    @Test("malformed telemetry is counted in telemetry_rejected, logged, and changes nothing")
    func malformedTelemetry() async throws {
        try await withBridge { _, observer async throws in
            let stateTopic = "aabridge/accessory/\(Fixture.airPodsTopic)"
            await observer.waitFor(stateTopic)
            // The real fixture with a space inside its hex, a gateway that sends garbage, and
            // native telemetry for an unknown accessory.
            let badHexTopic = "home/gw1/BTtoMQTT/F1E2D3C4B5A8"
            try await observer.publish(badHexTopic, try Fixture.gatewayPayload(topic: badHexTopic))
            try await observer.publish("home/gw1/BTtoMQTT/F1E2D3C4B5A9", "{not json")
            try await observer.publish("aabridge/telemetry/livingroom/0A0B0C0D0E0F", #"{"placement":"inEar"}"#)
            // The health request follows on the same connection: the bridge handles it after them.
            let health = try await observer.request("health")
            #expect(health["data"]?["telemetry_rejected"] == 3, "\(health)")
            let log = await observer.waitFor("aabridge/bridge/log") { $0["level"] == "warning" }
            #expect(log?["message"]?.stringValue?.contains("rejected") == true)
            #expect(log?["at"]?.stringValue != nil)
            // At most once a minute per gateway: gw1 twice, livingroom once -> two lines.
            let logs = observer.json(on: "aabridge/bridge/log").compactMap { $0["message"]?.stringValue }
            #expect(logs.filter { $0.contains("'gw1'") }.count == 1, "\(logs)")
            #expect(logs.filter { $0.contains("'livingroom'") }.count == 1, "\(logs)")

            // Invalid content for a known accessory: an update error too, and its state stays.
            let before = observer.json(on: stateTopic).last
            try await observer.publish("aabridge/telemetry/livingroom/\(Fixture.airPodsTopic)", #"{"placement":"sideways"}"#)
            let error = await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)/error")
            #expect(error?["code"] == "invalidRequest")
            #expect(error?["operation"] == "update")
            try await observer.publish("aabridge/accessory/\(Fixture.airPodsTopic)/set", #"{"source_connected":"11:22:33"}"#)
            await observer.messages.wait { $0.filter { $0.topic == "aabridge/accessory/\(Fixture.airPodsTopic)/error" }.count >= 2 }
            let after = try await observer.request("health")
            #expect(after["data"]?["telemetry_rejected"] == 5, "\(after)")
            let current = try await observer.request("accessory/current", #""id":"\#(Fixture.airPods)""#)
            #expect(
                current["data"]?["configuration"] == [
                    "capabilities": ["audioSwitching", "placement"], "placement": "offHead",
                    "primary_source": nil, "secondary_source": nil,
                ])
            let state = observer.json(on: stateTopic).last
            for key in ["placement", "primary_source", "routes", "registration", "available"] {
                #expect(state?[key] == before?[key], "\(key) unchanged")
            }
            #expect(observer.messages(on: "aabridge/accessory/\(Fixture.airPodsTopic)/decision").isEmpty)
        }
    }
}
