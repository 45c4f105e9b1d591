import Foundation
import MQTT
import Telemetry
import TestSupport
import Testing

@testable import Bridge

/// The AirPods Pro 3 case advertises on its own (`07 11 06` + 16 encrypted bytes, issue 48): no
/// model, colour or battery in clear, so only an IRK can say whose case it is (docs/identity.md).
@Suite("The charging case's own advertisement over MQTT")
struct ChargingCaseFlowTests {
    /// The case's manufacturer data: Apple, type 0x07, length 0x11, prefix 0x06, one AES block.
    static let caseFrame = "4c00071106" + "8f2a61c03b9d4e7751aa0cde36f2190b"
    /// A case frame whose 16 bytes, decrypted with ``encryptionKey`` as the buds' payload is,
    /// give levels of 112 (plaintext `00 70 70 70` + zeros, encrypted with AES-128-ECB): the buds'
    /// consistency check would refuse it, and with it the IRK's attribution.
    static let keyedCaseFrame = "4c00071106" + "44b16a8fe4ad62bf496b09f6a8beb5db"
    static let encryptionKey = "000102030405060708090a0b0c0d0e0f"

    @Test("the case's frame from an address its IRK resolves counts for it, with or without the encryption key; another's is nobody's")
    func attributedByIRK() async throws {
        let harness = try BridgeHarness(headphonesIRK: IdentityResolutionFlowTests.irk)
        defer { harness.removeDirectory() }
        let observer = try await Observer(broker: harness.broker)
        try await harness.start(observer: observer)
        let stateTopic = "aabridge/accessory/\(Fixture.headphonesTopic)"
        let address = try IdentityResolutionFlowTests.resolvableAddress(prand: 0x2A_1B3C)
        let topicID = address.replacingOccurrences(of: ":", with: "")
        try await observer.publish(
            "home/hall/BTtoMQTT/\(topicID)", #"{"id":"\#(address)","mac_type":1,"manufacturerdata":"\#(Self.caseFrame)","rssi":-47}"#)
        // A rename publishes the state at once, with the gateway and RSSI the sighting left.
        _ = try await observer.request("accessory/rename", #""id":"\#(Fixture.headphones)","name":"Bob's case""#)
        let state = await observer.waitFor(stateTopic) { $0["name"] == "Bob's case" }
        #expect(state?["gateway"] == "hall")
        #expect(state?["rssi"] == -47)
        #expect(state?["identity"] == "irk")
        // With the encryption key too, the case's 16 bytes are not decrypted (no public layout):
        // read with the buds' layout they would look inconsistent and cost the IRK's attribution.
        let keys = try await observer.request(
            "accessory/keys", #""id":"\#(Fixture.headphones)","encryption_key":"\#(Self.encryptionKey)""#)
        #expect(keys["data"]?["keys"] == ["irk": true, "encryption_key": true], "\(keys)")
        let rotated = try IdentityResolutionFlowTests.resolvableAddress(prand: 0x05_6789)
        try await observer.publish(
            "home/porch/BTtoMQTT/\(rotated.replacingOccurrences(of: ":", with: ""))",
            #"{"id":"\#(rotated)","mac_type":1,"manufacturerdata":"\#(Self.keyedCaseFrame)","rssi":-44}"#)
        _ = try await observer.request("accessory/rename", #""id":"\#(Fixture.headphones)","name":"Bob's case, keyed""#)
        let keyed = await observer.waitFor(stateTopic) { $0["name"] == "Bob's case, keyed" }
        #expect(keyed?["gateway"] == "porch")
        #expect(keyed?["identity"] == "irk")
        // Another key's address: nobody's. The accessory's state keeps the porch's sighting.
        let stranger = try IdentityResolutionFlowTests.resolvableAddress(irk: "00112233445566778899aabbccddeeff", prand: 0x11_2233)
        try await observer.publish(
            "home/garden/BTtoMQTT/\(stranger.replacingOccurrences(of: ":", with: ""))",
            #"{"id":"\#(stranger)","mac_type":1,"manufacturerdata":"\#(Self.caseFrame)","rssi":-30}"#)
        let health = try await observer.request("health")
        #expect(health["data"]?["telemetry_rejected"] == 0, "\(health)")
        _ = try await observer.request("accessory/rename", #""id":"\#(Fixture.headphones)","name":"Bob final""#)
        let final = await observer.waitFor(stateTopic) { $0["name"] == "Bob final" }
        #expect(final?["gateway"] == "porch")
        #expect(await harness.stop() == 0)
        await observer.disconnect()
    }
}
