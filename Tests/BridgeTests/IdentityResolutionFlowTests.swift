import Foundation
import MQTT
import Telemetry
import TestSupport
import Testing

@testable import Bridge

/// Accessories with rotating (resolvable private) addresses: a configured IRK maps every
/// address they rotate through to their identity.
@Suite("Identity resolution over MQTT")
struct IdentityResolutionFlowTests {
    static let irk = "ec0234a357c8ad05341010a60a397d9b"

    /// A resolvable private address for `irk`: prand with 0b01 in its top bits, then ah(irk, prand).
    static func resolvableAddress(irk: String = irk, prand: UInt32) throws -> String {
        let key = try #require(IdentityResolvingKey(hex: irk))
        let random = (prand & 0x3F_FFFF) | 0x40_0000
        let hash = try #require(key.hash(prand: random))
        let value = UInt64(random) << 24 | UInt64(hash)
        return (0..<6).reversed().map { String(format: "%02X", (value >> (8 * UInt64($0))) & 0xFF) }.joined(separator: ":")
    }

    @Test("an advertisement from a rotating address counts for the identity: its state shows the sighting")
    func rotatingAddressResolves() async throws {
        let harness = try BridgeHarness(headphonesIRK: Self.irk)
        defer { harness.removeDirectory() }
        let observer = try await Observer(broker: harness.broker)
        try await harness.start(observer: observer)
        let stateTopic = "aabridge/accessory/\(Fixture.headphonesTopic)"
        for (index, prand) in [UInt32(0x708194), 0x123456].enumerated() {
            let address = try Self.resolvableAddress(prand: prand)
            let topicID = address.replacingOccurrences(of: ":", with: "")
            try await observer.publish(
                "home/room\(index)/BTtoMQTT/\(topicID)",
                #"{"id":"\#(address)","rssi":-5\#(index),"name":"Acme Studio"}"#)
            // A rename publishes the state at once, with the gateway and RSSI the sighting left
            // (a sighting alone is republished only after the refresh interval).
            _ = try await observer.request("accessory/rename", #""id":"\#(Fixture.headphones)","name":"Bob \#(index)""#)
            let state = await observer.waitFor(stateTopic) { $0["gateway"] == .string("room\(index)") && $0["rssi"] == .int(-50 - index) }
            #expect(state != nil, "sighting from \(address) resolved to \(Fixture.headphones)")
        }
        // An address no key resolves is nobody: the identity's state is not touched by it.
        try await observer.publish("home/elsewhere/BTtoMQTT/4A0000000001", #"{"id":"4A:00:00:00:00:01","rssi":-40}"#)
        _ = try await observer.request("accessory/rename", #""id":"\#(Fixture.headphones)","name":"Bob final""#)
        let final = await observer.waitFor(stateTopic) { $0["name"] == "Bob final" }
        #expect(final?["gateway"] == "room1")
        #expect(await harness.stop() == 0)
        await observer.disconnect()
    }
}
