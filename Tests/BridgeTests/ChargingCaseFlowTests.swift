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

    @Test("from an address the accessory's IRK resolves, the case's frame counts for it: gateway and RSSI, nothing rejected")
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
        // Another key's address: nobody's. The accessory's state keeps the hall's sighting.
        let stranger = try IdentityResolutionFlowTests.resolvableAddress(irk: "00112233445566778899aabbccddeeff", prand: 0x11_2233)
        try await observer.publish(
            "home/garden/BTtoMQTT/\(stranger.replacingOccurrences(of: ":", with: ""))",
            #"{"id":"\#(stranger)","mac_type":1,"manufacturerdata":"\#(Self.caseFrame)","rssi":-30}"#)
        let health = try await observer.request("health")
        #expect(health["data"]?["telemetry_rejected"] == 0, "\(health)")
        _ = try await observer.request("accessory/rename", #""id":"\#(Fixture.headphones)","name":"Bob final""#)
        let final = await observer.waitFor(stateTopic) { $0["name"] == "Bob final" }
        #expect(final?["gateway"] == "hall")
        #expect(await harness.stop() == 0)
        await observer.disconnect()
    }
}
