import AccessoryKit
import Foundation
import JSON
import TestSupport
import Testing

@testable import Bridge

/// The box's own adapter as a gateway (`format: bluez`), against python-dbusmock's BlueZ on a
/// private bus given to the bridge as its system bus: no real adapter, no bluetoothd. The mock
/// records a monitor's registration and never calls it back: passive scanning is shown up to
/// its registration only.
@Suite("The box's adapter through BlueZ", .serialized)
struct BlueZGatewayFlowTests {
    static let gateways = "aabridge/bridge/gateways"

    /// The `box` gateway as `bridge/gateways` shows it (the bluez entry's one heard gateway).
    static func box(_ payload: JSONValue) -> JSONValue? {
        payload.arrayValue?.first { $0["name"] == "box" }?["heard"]?.arrayValue?.first { $0["name"] == "box" }
    }

    static func problems(_ payload: JSONValue) -> [String] {
        box(payload)?["problems"]?.arrayValue?.compactMap { $0["code"]?.stringValue } ?? []
    }

    /// A proximity-pairing frame of AirPods Pro (BatteryFlowTests' shape), as hex after the company id.
    static func proximityPairing(status: UInt8, battery: UInt8, chargingAndCase: UInt8) -> String {
        let bytes: [UInt8] =
            [0x07, 0x19, 0x01, 0x0E, 0x20, status, battery, chargingAndCase, 0x00, 0x00, 0x00] + [UInt8](repeating: 0, count: 16)
        return Hex.encode(bytes)
    }

    @Test("heard only through the adapter: the documented filter, paired from the picker, placement, batteries, room, a rotation by IRK")
    func heardThroughTheAdapter() async throws {
        let mock = try BlueZMock()
        defer { mock.stop() }
        try await mock.send("adapter hci0")
        // A short health interval: the gateways' figures go out on it.
        let harness = try BridgeHarness(healthIntervalSeconds: 5, headphonesIRK: IdentityResolutionFlowTests.irk, bluezBus: mock.address)
        defer { harness.removeDirectory() }
        try await harness.run { observer async throws in
            let scanning = await observer.waitFor(Self.gateways) { Self.box($0)?["scanning"] == "active" }
            #expect(Self.box(scanning ?? .null)?["state"] == "online")
            #expect(Self.problems(scanning ?? .null).isEmpty)
            // The filter BlueZ was given is the one docs/configuration.md documents.
            let documented = #"{"Transport": "le", "DuplicateData": true}"#
            let configurationDoc = try String(contentsOfFile: Repository.file("docs/configuration.md"), encoding: .utf8)
            #expect(configurationDoc.contains("`\(documented)`"))
            let given = try JSONParser.parse(try await mock.send("filter hci0"))
            let expected = try JSONParser.parse(documented)
            for key in ["Transport", "DuplicateData"] { #expect(given[key] == expected[key], "\(key): BlueZ was given \(given)") }
            #expect(try await mock.send("discovering hci0") == "true")

            // A new pair of AirPods, heard only by the adapter, is paired from the picker.
            #expect(try await observer.request("picker/show", #""products":["AirPods Pro"],"timeout":"long""#)["status"] == "ok")
            try await mock.send("device hci0 \(Fixture.advertisementID) public -60")
            let frame = Self.proximityPairing(status: 0x60, battery: 0x78, chargingAndCase: 0x55)
            try await mock.send("manufacturer hci0 \(Fixture.advertisementID) 0x004C \(frame) -48")
            let picker = await observer.waitFor("aabridge/bridge/picker") { ($0["candidates"]?.arrayValue?.count ?? 0) > 0 }
            let candidate = picker?["candidates"]?.arrayValue?.first
            #expect(candidate?["id"] == .string(Fixture.advertisementID))
            #expect(candidate?["gateway"] == "box" && candidate?["rssi"] == -48)
            let selected = try await observer.request("picker/select", #""id":"\#(Fixture.advertisementID)","name":"Box AirPods""#)
            #expect(selected["status"] == "ok")

            // Heard again: its batteries and placement, the box's gateway and room.
            let topic = "aabridge/accessory/F1E2D3C4B5A6"
            await observer.waitFor(topic) { $0["registration"] == "active" }
            try await mock.send("manufacturer hci0 \(Fixture.advertisementID) 0x004C \(frame) -47")
            let state = await observer.waitFor(topic) { $0["battery"] != .null && $0["battery"] != nil }
            #expect(
                state?["battery"] == [
                    "left": 80, "right": 70, "case": 50, "left_charging": true, "right_charging": false, "case_charging": true,
                ])
            #expect(state?["placement"]?.stringValue != nil)
            #expect(state?["gateway"] == "box")
            // The MQTT API carries the node's own name; rooms: maps it for Home Assistant.
            await observer.waitFor(topic) { $0["room"] == "box" }

            // Bob's headphones rotate their address: each new one is followed by their IRK.
            let stateTopic = "aabridge/accessory/\(Fixture.headphonesTopic)"
            for (index, prand) in [UInt32(0x708194), 0x123456].enumerated() {
                let address = try IdentityResolutionFlowTests.resolvableAddress(prand: prand)
                try await mock.send("device hci0 \(address) random -70")
                try await mock.send("service hci0 \(address) 0000fe2c-0000-1000-8000-00805f9b34fb 00 -5\(index)")
                _ = try await observer.request("accessory/rename", #""id":"\#(Fixture.headphones)","name":"Bob \#(index)""#)
                let heard = await observer.waitFor(stateTopic) { $0["gateway"] == "box" && $0["rssi"] == .int(-50 - index) }
                #expect(heard != nil, "\(address) resolved to \(Fixture.headphones)")
            }
            // Counted on the gateway: advertisements, some attributed.
            let counted = await observer.waitFor(Self.gateways) { (Self.box($0)?["attributed"]?.intValue ?? 0) > 0 }
            #expect((Self.box(counted ?? .null)?["advertisements_per_min"]?.intValue ?? 0) >= 3)
        }
    }

    @Test("faults: a denied call, the adapter removed and back, bluetoothd gone and back, powered off and on; the bridge runs on")
    func faultsAndRecovery() async throws {
        let mock = try BlueZMock()
        defer { mock.stop() }
        try await mock.send("adapter hci0")
        try await mock.send("deny hci0 SetDiscoveryFilter")
        let harness = try BridgeHarness(bluezBus: mock.address)
        defer { harness.removeDirectory() }
        try await harness.run { observer async throws in
            let denied = await observer.waitFor(Self.gateways) { Self.problems($0) == ["bluez_permission_denied"] }
            #expect(Self.box(denied ?? .null)?["state"] == "offline")
            let message = Self.box(denied ?? .null)?["problems"]?.arrayValue?.first?["message"]?.stringValue ?? ""
            #expect(message.contains("bluetooth.conf"), "the remedy: \(message)")
            // The bridge answers meanwhile.
            #expect(try await observer.request("health")["status"] == "ok")
            try await mock.send("allow hci0 SetDiscoveryFilter")
            await observer.waitFor(Self.gateways) { Self.box($0)?["scanning"] == "active" && Self.problems($0).isEmpty }

            try await mock.send("remove-adapter hci0")
            await observer.waitFor(Self.gateways) { Self.problems($0) == ["bluez_no_adapter"] }
            let removedAt = observer.messages(on: Self.gateways).count
            try await mock.send("adapter hci0")
            let back = await observer.waitFor(Self.gateways, after: removedAt - 1) {
                Self.box($0)?["scanning"] == "active" && Self.problems($0).isEmpty
            }
            #expect(back != nil)
            #expect(try await mock.send("discovering hci0") == "true")

            try await mock.send("stop-bluez")
            await observer.waitFor(Self.gateways) { Self.problems($0) == ["bluez_not_running"] }
            let stoppedAt = observer.messages(on: Self.gateways).count
            try await mock.send("start-bluez")
            try await mock.send("adapter hci0")
            let started = await observer.waitFor(Self.gateways, after: stoppedAt - 1) {
                Self.box($0)?["scanning"] == "active" && Self.problems($0).isEmpty
            }
            #expect(started != nil)
            #expect(try await mock.send("discovering hci0") == "true")

            // Powered off by someone else (the bridge never powers it): a problem until it is back on.
            try await mock.send("power hci0 off")
            await observer.waitFor(Self.gateways) { Self.problems($0) == ["bluez_adapter_off"] }
            let offAt = observer.messages(on: Self.gateways).count
            try await mock.send("power hci0 on")
            let on = await observer.waitFor(Self.gateways, after: offAt - 1) {
                Self.box($0)?["scanning"] == "active" && Self.problems($0).isEmpty
            }
            #expect(on != nil)
        }
    }

    @Test("only a device's changes are read, and the properties the bridge does not know in them are skipped")
    func onlyDeviceChangesRead() async throws {
        let mock = try BlueZMock()
        defer { mock.stop() }
        try await mock.send("adapter hci0")
        let harness = try BridgeHarness(bluezBus: mock.address)
        defer { harness.removeDirectory() }
        try await harness.run { observer async throws in
            await observer.waitFor(Self.gateways) { Self.box($0)?["scanning"] == "active" }
            #expect(try await observer.request("picker/show", #""products":["AirPods Pro"],"timeout":"long""#)["status"] == "ok")
            try await mock.send("device hci0 \(Fixture.advertisementID) public -60")
            let frame = Self.proximityPairing(status: 0x60, battery: 0x78, chargingAndCase: 0x55)
            // The same properties on another interface of the device (a battery's, a media
            // player's): no advertisement. Then on Device1, among properties the bridge does not
            // read (an array, a dictionary, a struct, a Name of the wrong type): heard.
            try await mock.send("extras hci0 \(Fixture.advertisementID) org.bluez.Battery1 0x004C \(frame) -30")
            try await mock.send("extras hci0 \(Fixture.advertisementID) org.bluez.Device1 0x004C \(frame) -48")
            let picker = await observer.waitFor("aabridge/bridge/picker") { ($0["candidates"]?.arrayValue?.count ?? 0) > 0 }
            let candidate = picker?["candidates"]?.arrayValue?.first
            #expect(candidate?["id"] == .string(Fixture.advertisementID))
            #expect(candidate?["gateway"] == "box" && candidate?["rssi"] == -48)
            let rssis = observer.json(on: "aabridge/bridge/picker").flatMap { $0["candidates"]?.arrayValue ?? [] }.compactMap { $0["rssi"] }
            #expect(!rssis.contains(-30), "the Battery1 change was read as an advertisement: \(rssis)")
        }
    }

    @Test("scanning: passive where BlueZ offers a monitor: registered, no discovery session (the mock never calls it back)")
    func passiveRegistered() async throws {
        let mock = try BlueZMock()
        defer { mock.stop() }
        try await mock.send("adapter hci0")
        let harness = try BridgeHarness(bluezBus: mock.address, bluezExtra: "    scanning: passive\n")
        defer { harness.removeDirectory() }
        try await harness.run { observer async throws in
            let said = await observer.waitFor(Self.gateways) { Self.box($0)?["scanning"] == "passive" }
            #expect(Self.problems(said ?? .null).isEmpty)
            #expect(Self.box(said ?? .null)?["state"] == "online")
            #expect(try await mock.send("monitors hci0") == #"["/org/aabridge/bluez"]"#)
            // What BlueZ would read back: one or_patterns monitor, Apple's company id in
            // manufacturer data (0xFF) and Fast Pair's service in service data (0x16).
            let exported = try await mock.send("exported")
            #expect(
                exported == #"{"/org/aabridge/bluez/monitor0": {"Patterns": [[0, 255, "4c00"], [0, 22, "2cfe"]], "Type": "or_patterns"}}"#)
            #expect(try await mock.send("discovering hci0") == "false")
        }
    }

    @Test("scanning: passive where BlueZ offers no monitor: active discovery, said so on bridge/gateways")
    func passiveUnavailable() async throws {
        let mock = try BlueZMock(monitor: false)
        defer { mock.stop() }
        try await mock.send("adapter hci0")
        let harness = try BridgeHarness(bluezBus: mock.address, bluezExtra: "    scanning: passive\n")
        defer { harness.removeDirectory() }
        try await harness.run { observer async throws in
            let said = await observer.waitFor(Self.gateways) { Self.problems($0) == ["bluez_passive_unavailable"] }
            #expect(Self.box(said ?? .null)?["scanning"] == "active")
            #expect(Self.box(said ?? .null)?["state"] == "online")
            #expect(try await mock.send("discovering hci0") == "true")
        }
    }

    @Test("no system bus: the problem with its remedy, and the bridge runs on")
    func noSystemBus() async throws {
        let harness = try BridgeHarness(bluezBus: "unix:path=/nonexistent/aabridge-test-bus")
        defer { harness.removeDirectory() }
        try await harness.run { observer async throws in
            let missing = await observer.waitFor(Self.gateways) { Self.problems($0) == ["bluez_no_system_bus"] }
            #expect(Self.box(missing ?? .null)?["state"] == "offline")
            #expect(try await observer.request("health")["status"] == "ok")
        }
    }
}
