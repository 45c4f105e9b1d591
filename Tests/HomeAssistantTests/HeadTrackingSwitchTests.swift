import AccessoryKit
import Bridge
import JSON
import TestSupport
import Testing

@testable import HomeAssistant

private typealias F = HomeAssistantFixtures

/// The "Head tracking" switch (iOS 27's head-tracking session): `accessory/head_tracking` on and
/// off, its state from the accessory's `head_tracking`, available only while there is a session.
@Suite struct HeadTrackingSwitchTests {
    static let spatial = Product(
        name: "Spatial Buds", hardware: .inEarBud, capabilities: [.audioSwitching, .placement, .headTracking, .audioSpatialization],
        descriptor: DiscoveryDescriptor(bluetoothCompanyIdentifier: 0x0A12))
    static let discovery = HomeAssistantDiscovery(baseTopic: "aabridge", products: [F.buds, spatial], version: BridgeModule.version)
    static let id = BluetoothAddress("A1:B2:C3:D4:E5:21")!

    static func status(_ capabilities: AccessoryControlDevice.Capabilities?, session: HeadTrackingState?) -> AccessoryStatus {
        AccessoryStatus(
            accessory: F.accessory(id, name: "Spatial", product: spatial),
            registration: capabilities.map { Registration(configuration: .init(devicePlacement: .offHead, deviceCapabilities: $0)) },
            headTracking: session)
    }

    func component(_ status: AccessoryStatus) -> JSONValue? {
        Self.discovery.accessoryDevice(status).payload["components"]?["head_tracking"]
    }

    @Test("registered with headTracking: a switch sending accessory/head_tracking with the id, active and a transaction")
    func theSwitch() throws {
        let toggle = try #require(component(Self.status([.audioSwitching, .placement, .headTracking], session: .inactive)))
        #expect(toggle["platform"] == "switch")
        #expect(toggle["name"] == "Head tracking")
        #expect(toggle["unique_id"] == "aabridge_A1B2C3D4E521_head_tracking")
        #expect(toggle["command_topic"] == "aabridge/bridge/request/accessory/head_tracking")
        #expect(toggle["state_topic"] == "aabridge/accessory/A1B2C3D4E521")
        let on = try JSONParser.parse(Array(try #require(toggle["payload_on"]?.stringValue).utf8))
        let off = try JSONParser.parse(Array(try #require(toggle["payload_off"]?.stringValue).utf8))
        #expect(on["id"] == "A1:B2:C3:D4:E5:21" && on["active"] == .bool(true) && on["transaction"] != nil)
        #expect(off["id"] == "A1:B2:C3:D4:E5:21" && off["active"] == .bool(false))
        #expect(toggle["availability_mode"] == "all")
        let violations = HomeAssistantRules(discoveryPrefix: "homeassistant").validate([
            Self.discovery.bridgeDevice(),
            Self.discovery.accessoryDevice(Self.status([.audioSwitching, .placement, .headTracking], session: .active)),
        ])
        #expect(violations.isEmpty, "\(violations.map(\.description).joined(separator: "\n"))")
    }

    @Test("no switch without headTracking: registered without it, audioSpatialization alone, a product without it")
    func noSwitch() {
        #expect(component(Self.status([.audioSwitching, .placement, .audioSpatialization], session: nil)) == nil)
        #expect(component(F.fullStatus) == nil)
        // Not registered: the product's capabilities decide, as for every component; the state's
        // null makes it unavailable until a registration with headTracking.
        #expect(component(Self.status(nil, session: nil)) != nil)
    }

    @Test("registering with headTracking republishes discovery (the switch appears)")
    func republished() {
        var tracker = HomeAssistantDiscoveryTracker(discovery: Self.discovery)
        #expect(tracker.changed(Self.status([.audioSwitching], session: nil)) != nil)
        let registered = tracker.changed(Self.status([.audioSwitching, .headTracking], session: .inactive))
        #expect(registered?.payload["components"]?["head_tracking"] != nil)
        #expect(
            tracker.changed(Self.status([.audioSwitching, .headTracking], session: .active)) == nil, "the state alone: not republished")
    }

    @Test("the state object says head_tracking last: active, inactive or null")
    func statePayload() {
        let payloads = Payloads()
        for (session, text) in [(HeadTrackingState.active, JSONValue.string("active")), (.inactive, "inactive")] {
            #expect(payloads.status(Self.status([.headTracking], session: session))["head_tracking"] == text)
        }
        let none = payloads.status(Self.status([.audioSwitching], session: nil))
        #expect(none["head_tracking"] == .null)
        guard case .object(let pairs) = none else { return }
        #expect(pairs.last?.0 == "head_tracking")
        #expect(pairs.dropLast().last?.0 == "alias", "every existing key keeps its place")
    }

    @Test(
        "the templates in Jinja2: ON only for active; available for active and inactive, not for null",
        .enabled(if: Jinja.testsEnabled, "needs python3 with jinja2"))
    func templates() throws {
        let toggle = try #require(component(Self.status([.headTracking], session: .inactive)))
        let value = try #require(toggle["value_template"]?.stringValue)
        let available = try #require(toggle["availability"]?.arrayValue?.last?["value_template"]?.stringValue)
        let states: [JSONValue] = [["head_tracking": "active"], ["head_tracking": "inactive"], ["head_tracking": .null]]
        let rendered = try HomeAssistantTemplateTests.render(states.map { (value, $0) } + states.map { (available, $0) })
        #expect(rendered == ["ON", "OFF", "OFF", "online", "online", "offline"])
    }
}
