import AccessoryKit
import Foundation
import JSON
import TestSupport
import Testing

@testable import Bridge

/// Keys in either byte order (household.md, "Keys that users can actually get") over a real
/// mosquitto and SQLite: a 32-hex-digit IRK is tried as given and reversed; the order that
/// resolves an address advertising the accessory's model is kept and said (`irk_match`).
/// Following and re-attaching are off, so an address counts for the accessory only by its key.
@Suite("Keys in either byte order over MQTT")
struct KeyByteOrderFlowTests {
    static let state = "aabridge/accessory/\(Fixture.airPodsTopic)"
    static let key = "8899aabbccddeeff0011223344556677"
    static let unmatched = "f0e0d0c0b0a090807060504030201000"

    /// `hex` with its 16 bytes in the other order.
    static func reversed(_ hex: String) -> String {
        let bytes = stride(from: 0, to: hex.count, by: 2).map { offset in
            String(hex[hex.index(hex.startIndex, offsetBy: offset)..<hex.index(hex.startIndex, offsetBy: offset + 2)])
        }
        return bytes.reversed().joined()
    }

    /// An AirPods Pro advertisement (model 0x200E) or, with `otherModel`, an AirPods Pro 2 one
    /// (0x2014), from `address`.
    static func advertisement(_ observer: Observer, from address: String, otherModel: Bool = false) async throws {
        let topicID = address.replacingOccurrences(of: ":", with: "")
        let model = otherModel ? "1420" : "0e20"
        try await observer.publish(
            "home/kitchen/BTtoMQTT/\(topicID)",
            #"{"id":"\#(address)","mac_type":1,"manufacturerdata":"4c00071901\#(model)22f58f00000a7d9fff27234873d4305e0fed1b39e2b8","rssi":-55}"#
        )
    }

    static func irkMatch(_ observer: Observer, _ irk: String) async throws -> JSONValue? {
        let response = try await observer.request("accessory/keys", #""id":"\#(Fixture.airPods)","irk":"\#(irk)""#)
        #expect(response["status"] == "ok", "\(response.serialized)")
        #expect(response["data"]?["keys"]?["irk"] == true)
        return response["data"]?["irk_match"]
    }

    @Test("a key in either order matches an address heard before it was given; irk_match says which, never the key")
    func foundInBothForms() async throws {
        let harness = try BridgeHarness(follow: false, identityExtra: "  reattach: off")
        defer { harness.removeDirectory() }
        try await harness.run { observer in
            // Its model is known from its own advertisement; a rotated address of it is heard before any key.
            try await Self.advertisement(observer, from: Fixture.airPods)
            let rotated = try IdentityResolutionFlowTests.resolvableAddress(irk: Self.key, prand: 0x112233)
            try await Self.advertisement(observer, from: rotated)
            _ = try await observer.request("health")

            #expect(try await Self.irkMatch(observer, Self.key) == "as_given")
            #expect(try await Self.irkMatch(observer, Self.reversed(Self.key)) == "reversed")
            try await Self.advertisement(observer, from: rotated)
            await observer.waitFor(Self.state) { $0["address"] == .string(rotated) && $0["identity"] == "irk" }
            // The Keychain's base64 has a known order.
            #expect(try await Self.irkMatch(observer, "irk:m305CqYQEDQFrchXozQC7A==") == "as_given")

            let keyTexts = [Self.key, Self.reversed(Self.key), "m305CqYQEDQFrchXozQC7A"]
            for message in observer.messages.elements where !message.topic.hasPrefix("aabridge/bridge/request/") {
                for text in keyTexts { #expect(!message.payloadString.contains(text), "\(message.topic) shows a key") }
            }
        }
    }

    @Test(
        "a key nothing matched yet is kept as not_yet; the first address of the accessory's model that resolves decides, across a restart")
    func notYetThenFound() async throws {
        let harness = try BridgeHarness(follow: false, identityExtra: "  reattach: off")
        defer { harness.removeDirectory() }
        // Addresses made with the key's bytes reversed: they resolve only in the reversed order.
        let first = try IdentityResolutionFlowTests.resolvableAddress(irk: Self.reversed(Self.unmatched), prand: 0x221100)
        let second = try IdentityResolutionFlowTests.resolvableAddress(irk: Self.reversed(Self.unmatched), prand: 0x0A0B0C)
        try await harness.run { observer in
            try await Self.advertisement(observer, from: Fixture.airPods)
            _ = try await observer.request("health")
            #expect(try await Self.irkMatch(observer, Self.unmatched) == "not_yet")
            await observer.waitFor(Self.state) { $0["keys"]?["irk"] == true }

            // Another model's advertisement from an address the key resolves does not count.
            try await Self.advertisement(observer, from: first, otherModel: true)
            #expect(try await Self.irkMatch(observer, Self.unmatched) == "not_yet")
            #expect(!observer.json(on: Self.state).contains { $0["address"] == .string(first) })

            try await Self.advertisement(observer, from: second)
            await observer.waitFor(Self.state) { $0["address"] == .string(second) && $0["identity"] == "irk" }
            // The same key again: the order found is kept and said.
            #expect(try await Self.irkMatch(observer, Self.unmatched) == "reversed")
        }
        try await BridgeHarness(broker: harness.broker, directory: harness.directory, follow: false, identityExtra: "  reattach: off").run {
            observer in
            #expect(try await Self.irkMatch(observer, Self.unmatched) == "reversed", "stored")
            let third = try IdentityResolutionFlowTests.resolvableAddress(irk: Self.reversed(Self.unmatched), prand: 0x3C3C3C)
            try await Self.advertisement(observer, from: third)
            await observer.waitFor(Self.state) { $0["address"] == .string(third) && $0["identity"] == "irk" }
        }
    }
}
