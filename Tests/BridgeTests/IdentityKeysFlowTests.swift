import AccessoryKit
import Foundation
import JSON
import MQTT
import TestSupport
import Testing

@testable import Bridge
@testable import Telemetry

/// identity.md over a real broker: keys given at run time, rotations followed with and
/// without them, and keys never shown.
@Suite("Identity: keys at run time and following rotations")
struct IdentityKeysFlowTests {
    /// The Core Specification's sample IRK (Vol 3 Part H, D.7), as ESPresense writes it ...
    static let irkHex = "ec0234a357c8ad05341010a60a397d9b"
    /// ... and as the macOS Keychain and Home Assistant show it (base64 of the reversed bytes).
    static let irkBase64 = "m305CqYQEDQFrchXozQC7A=="
    static let headphonesState = "aabridge/accessory/\(Fixture.headphonesTopic)"
    static let airPodsState = "aabridge/accessory/\(Fixture.airPodsTopic)"

    /// A resolvable private address generated from `irk` by the Core Specification's `ah`.
    static func resolvableAddress(irk: String = irkHex, prand: UInt32) throws -> String {
        try IdentityResolutionFlowTests.resolvableAddress(irk: irk, prand: prand)
    }

    /// An Acme Studio sighting (the headphones' product) from `address` through gateway `room`.
    static func sighting(_ observer: Observer, from address: String, room: String = "kitchen", rssi: Int = -50) async throws {
        let topicID = address.replacingOccurrences(of: ":", with: "")
        try await observer.publish(
            "home/\(room)/BTtoMQTT/\(topicID)", #"{"id":"\#(address)","rssi":\#(rssi),"name":"Acme Studio"}"#)
    }

    @Test("a key set with accessory/keys (hex) makes rotating addresses count for the accessory, and survives a restart")
    func keysAtRunTime() async throws {
        let first = try BridgeHarness()
        defer { first.removeDirectory() }
        try await first.run { observer in
            let before = try Self.resolvableAddress(prand: 0x708194)
            // Without a key the rotating address is nobody.
            try await Self.sighting(observer, from: before)
            let response = try await observer.request("accessory/keys", #""id":"\#(Fixture.headphones)","irk":"\#(Self.irkHex)""#)
            #expect(response["status"] == "ok", "\(response.serialized)")
            #expect(response["data"]?["id"] == .string(Fixture.headphones))
            #expect(response["data"]?["keys"] == ["irk": true, "encryption_key": false])
            await observer.waitFor(Self.headphonesState) { $0["keys"]?["irk"] == true }

            try await Self.sighting(observer, from: before, room: "study", rssi: -48)
            let resolved = await observer.waitFor(Self.headphonesState) { $0["address"] == .string(before) }
            #expect(resolved?["identity"] == "irk")
            #expect(resolved?["gateway"] == "study" && resolved?["rssi"] == -48)
            #expect(resolved?["available"] == true)
        }

        // A restart reads the key from storage: the next rotation is recognised at once.
        try await BridgeHarness(broker: first.broker, directory: first.directory).run { observer in
            let after = try Self.resolvableAddress(prand: 0x2A5F01)
            try await Self.sighting(observer, from: after, room: "hall")
            let restarted = await observer.waitFor(Self.headphonesState) { $0["address"] == .string(after) }
            #expect(restarted?["identity"] == "irk")
            #expect(restarted?["keys"]?["irk"] == true)
        }
    }

    @Test("the Keychain's base64 form works the same; null deletes the key and rotating addresses are nobody again")
    func base64AndDeletion() async throws {
        try await withBridge { _, observer async throws in
            let set = try await observer.request("accessory/keys", #""id":"\#(Fixture.headphones)","irk":"irk:\#(Self.irkBase64)""#)
            #expect(set["data"]?["keys"]?["irk"] == true, "\(set.serialized)")
            let first = try Self.resolvableAddress(prand: 0x123456)
            try await Self.sighting(observer, from: first)
            await observer.waitFor(Self.headphonesState) { $0["address"] == .string(first) && $0["identity"] == "irk" }

            let deleted = try await observer.request("accessory/keys", #""id":"\#(Fixture.headphones)","irk":null"#)
            #expect(deleted["data"]?["keys"] == ["irk": false, "encryption_key": false], "\(deleted.serialized)")
            await observer.waitFor(Self.headphonesState) { $0["keys"]?["irk"] == false }
            let second = try Self.resolvableAddress(prand: 0x3A0F0F)
            try await Self.sighting(observer, from: second)
            // A rename publishes the state at once: the deleted key resolved nothing.
            _ = try await observer.request("accessory/rename", #""id":"\#(Fixture.headphones)","name":"After deletion""#)
            let state = await observer.waitFor(Self.headphonesState) { $0["name"] == "After deletion" }
            #expect(state?["address"] == .string(first))
        }
    }

    @Test(
        "a malformed key, a key of the wrong length, bad base64, a non-string and an unknown id are invalidRequest naming the field; nothing changes"
    )
    func badKeys() async throws {
        try await withBridge { _, observer async throws in
            let cases: [(members: String, field: String)] = [
                (#""id":"\#(Fixture.headphones)","irk":"zz0234a357c8ad05341010a60a397d9b""#, "irk"),
                (#""id":"\#(Fixture.headphones)","irk":"ec0234a357c8ad05341010a60a397d""#, "irk"),
                (#""id":"\#(Fixture.headphones)","encryption_key":"m305CqYQEDQFrchXozQC7A=!""#, "encryption_key"),
                (#""id":"\#(Fixture.headphones)","encryption_key":"QUJD""#, "encryption_key"),
                (#""id":"\#(Fixture.headphones)","irk":42"#, "irk"),
                (#""id":"D1:D2:D3:D4:D5:D6","irk":"\#(Self.irkHex)""#, "D1:D2:D3:D4:D5:D6"),
                (#""irk":"\#(Self.irkHex)""#, "id"),
            ]
            for (members, field) in cases {
                let response = try await observer.request("accessory/keys", members)
                #expect(response["status"] == "error", "\(members)")
                #expect(response["error"]?["code"] == "invalidRequest", "\(members)")
                let message = response["error"]?["message"]?.stringValue ?? ""
                #expect(message.contains(field), "\(message)")
                #expect(!message.contains("0234a357"), "the message repeats the key: \(message)")
            }
            _ = try await observer.request("accessory/rename", #""id":"\#(Fixture.headphones)","name":"Checked""#)
            let state = await observer.waitFor(Self.headphonesState) { $0["name"] == "Checked" }
            #expect(state?["keys"] == ["irk": false, "encryption_key": false])
        }
    }

    @Test("no key appears in any published payload: responses, states, bridge/info, bridge/accessories, logs")
    func keysNeverPublished() async throws {
        try await withBridge(homeAssistant: true, subscribe: ["#"]) { _, observer async throws in
            _ = try await observer.request(
                "accessory/keys", #""id":"\#(Fixture.headphones)","irk":"\#(Self.irkHex)","encryption_key":"\#(Self.irkBase64)""#)
            _ = try await observer.request(
                "accessory/keys", #""id":"\#(Fixture.airPods)","irk":"EC:02:34:A3:57:C8:AD:05:34:10:10:A6:0A:39:7D:9B""#)
            _ = try await observer.request("accessory/keys", #""id":"\#(Fixture.speaker)","irk":"ec0234a357c8ad05341010a60a397d9bff""#)
            _ = try await observer.request("health")
            await observer.waitFor("aabridge/bridge/accessories") { accessories in
                accessories.arrayValue?.contains { $0["keys"]?["encryption_key"] == true } == true
            }
            let forms = [Self.irkHex, Self.irkBase64, "m305CqYQEDQFrchXozQC7A", "EC:02:34", "0234a357", "0234A357"]
            for message in observer.messages.elements where !message.topic.hasPrefix("aabridge/bridge/request/") {
                let text = message.payloadString
                for form in forms { #expect(!text.contains(form), "\(message.topic) shows a key: \(text.prefix(300))") }
            }
        }
    }

    @Test("the file's IRK is applied at every start, also to an accessory that was migrated before the key was added")
    func configuredKeyAtEveryStart() async throws {
        let first = try BridgeHarness()
        defer { first.removeDirectory() }
        try await first.run { _ in }

        try await BridgeHarness(broker: first.broker, directory: first.directory, headphonesIRK: Self.irkHex).run { observer in
            let address = try Self.resolvableAddress(prand: 0x55AA55)
            try await Self.sighting(observer, from: address)
            let state = await observer.waitFor(Self.headphonesState) { $0["address"] == .string(address) }
            #expect(state?["identity"] == "irk")
        }
    }

    // MARK: Following without keys

    /// The AirPods Pro advertisement of the fixtures (model 0x200E, colour 0x00, left 50 %, case 80 %: see
    /// Tests/Fixtures/gateway-payloads.jsonl), from `address`.
    static func airPodsAdvertisement(_ observer: Observer, from address: String, room: String = "kitchen") async throws {
        let topicID = address.replacingOccurrences(of: ":", with: "")
        try await observer.publish(
            "home/\(room)/BTtoMQTT/\(topicID)",
            #"{"id":"\#(address)","mac_type":1,"manufacturerdata":"4c000719010e2022f58f00000a7d9fff27234873d4305e0fed1b39e2b8","rssi":-55}"#
        )
    }

    /// Advertises from `address` every 300 ms until `done` says stop or `seconds` pass.
    static func advertise(
        _ observer: Observer, from address: String, for seconds: Double, until done: () -> Bool = { false }
    ) async throws {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end, !done() {
            try await airPodsAdvertisement(observer, from: address)
            try await Task.sleep(for: .milliseconds(300))
        }
    }

    @Test("AirPods without a key are followed to their next address within 15 s: same model, colour, battery and gateway")
    func followsRotationWithoutKeys() async throws {
        try await withBridge { _, observer async throws in
            try await Self.advertise(observer, from: Fixture.airPods, for: 1.2)
            await observer.waitFor(Self.airPodsState) { $0["available"] == true && $0["model"] == "AirPods Pro" }
            // The rotation: the old address falls silent, a new resolvable one starts.
            let next = try Self.resolvableAddress(irk: "000102030405060708090a0b0c0d0e0f", prand: 0x0C0FFE)
            let started = Date()
            let followed: @Sendable (JSONValue) -> Bool = { $0["address"] == .string(next) && $0["identity"] == "followed" }
            try await Self.advertise(observer, from: next, for: 15) { !observer.json(on: Self.airPodsState).filter(followed).isEmpty }
            let state = await observer.waitFor(Self.airPodsState, timeout: .seconds(1), followed)
            #expect(state?["available"] == true)
            #expect(Date().timeIntervalSince(started) < 15)
        }
    }

    @Test("two identical AirPods silent at once and one new address: neither follows it, and bridge/log says why")
    func ambiguityRefused() async throws {
        try await withBridge { _, observer async throws in
            // A second pair of the same model, paired from the picker.
            _ = try await observer.request("picker/show", #""products":["AirPods Pro"]"#)
            let second = "D1:D2:D3:D4:D5:D6"
            try await Self.airPodsAdvertisement(observer, from: second)
            await observer.waitFor("aabridge/bridge/picker") { $0["candidates"]?.arrayValue?.isEmpty == false }
            let selected = try await observer.request("picker/select", #""id":"\#(second)","name":"Bob's AirPods""#)
            #expect(selected["status"] == "ok", "\(selected.serialized)")
            for _ in 0..<4 {
                try await Self.airPodsAdvertisement(observer, from: Fixture.airPods)
                try await Self.airPodsAdvertisement(observer, from: second)
                try await Task.sleep(for: .milliseconds(300))
            }
            let next = try Self.resolvableAddress(irk: "000102030405060708090a0b0c0d0e0f", prand: 0x1D1D1D)
            let warned: @Sendable (JSONValue) -> Bool = { ($0["message"]?.stringValue ?? "").contains("fits 2 accessories") }
            try await Self.advertise(observer, from: next, for: 30) { !observer.json(on: "aabridge/bridge/log").filter(warned).isEmpty }
            let warning = await observer.waitFor("aabridge/bridge/log", timeout: .seconds(1), warned)
            #expect(warning?["level"] == "warning")
            let states = observer.json(on: Self.airPodsState) + observer.json(on: "aabridge/accessory/D1D2D3D4D5D6")
            #expect(!states.contains { $0["address"] == .string(next) }, "a look-alike was attributed to one of them")
        }
    }

    @Test("with identity.follow off, a rotation is not followed")
    func followOff() async throws {
        let harness = try BridgeHarness(follow: false)
        defer { harness.removeDirectory() }
        try await harness.run { observer in
            try await Self.advertise(observer, from: Fixture.airPods, for: 1.2)
            await observer.waitFor(Self.airPodsState) { $0["available"] == true }
            let next = try Self.resolvableAddress(irk: "000102030405060708090a0b0c0d0e0f", prand: 0x2E2E2E)
            try await Self.advertise(observer, from: next, for: 8)
            #expect(!observer.json(on: Self.airPodsState).contains { $0["address"] == .string(next) })
        }
    }

    // MARK: Encrypted proximity payload

    /// The fixture's clear proximity-pairing bytes (left bud broadcasting, 50 %), colour 0x00, a
    /// zero byte, then `plaintext` encrypted with `key`, as OpenMQTTGateway publishes them.
    static func encryptedAdvertisement(from address: String, plaintext: [UInt8], key: String) throws -> (topic: String, payload: String) {
        let parsed = try AccessoryKey.parse(key).get()
        let encrypted = try #require(ProximityPairing.encrypt(plaintext: plaintext, with: parsed))
        let data = "4c000719010e2022f58f00000a" + Hex.encode(encrypted)
        let topicID = address.replacingOccurrences(of: ":", with: "")
        return ("home/kitchen/BTtoMQTT/\(topicID)", #"{"id":"\#(address)","mac_type":1,"manufacturerdata":"\#(data)","rssi":-52}"#)
    }

    @Test(
        "with an encryption key, battery levels come in 1 % steps; a rotating address whose payload does not decrypt is not the accessory's"
    )
    func encryptedPayload() async throws {
        try await withBridge { _, observer async throws in
            let encryptionKey = "000102030405060708090a0b0c0d0e0f"
            let keys = try await observer.request(
                "accessory/keys", #""id":"\#(Fixture.airPods)","irk":"\#(Self.irkHex)","encryption_key":"\#(encryptionKey)""#)
            #expect(keys["data"]?["keys"] == ["irk": true, "encryption_key": true], "\(keys.serialized)")
            // Left (the broadcasting bud) 53 %, right 63 %, case 100 %.
            let plaintext: [UInt8] = [0x01, 53, 63, 100] + Array(repeating: 0, count: 12)
            let own = try Self.encryptedAdvertisement(from: Fixture.airPods, plaintext: plaintext, key: encryptionKey)
            try await observer.publish(own.topic, own.payload)
            let state = await observer.waitFor(Self.airPodsState) { $0["battery"]?["left"] == 53 }
            #expect(
                state?["battery"] == [
                    "left": 53, "right": 63, "case": 100, "left_charging": false, "right_charging": false, "case_charging": false,
                ])

            // A resolvable address of the accessory's IRK, but a payload encrypted with another key.
            // (Garbage passes the check by chance about one time in ten when only one clear level
            // is known, see docs/telemetry.md; under this key the left level decrypts to 85, not ~50.)
            let rotated = try Self.resolvableAddress(prand: 0x4B4B4B)
            let forged = try Self.encryptedAdvertisement(from: rotated, plaintext: plaintext, key: "0f0e0d0c0b0a09080706050403020100")
            try await observer.publish(forged.topic, forged.payload)
            let genuine = try Self.encryptedAdvertisement(
                from: try Self.resolvableAddress(prand: 0x5C5C5C), plaintext: [0x01, 55, 63, 100] + Array(repeating: 0, count: 12),
                key: encryptionKey)
            try await observer.publish(genuine.topic, genuine.payload)
            await observer.waitFor(Self.airPodsState) { $0["battery"]?["left"] == 55 && $0["identity"] == "irk" }
            #expect(!observer.json(on: Self.airPodsState).contains { $0["address"] == .string(rotated) })
        }
    }
}
