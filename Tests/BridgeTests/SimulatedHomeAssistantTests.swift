import Foundation
import JSON
import TestSupport
import Testing

@testable import Bridge

/// The bridge driven the way Home Assistant drives it: only through the entities its retained
/// discovery configs advertise (``SimulatedHomeAssistant``), on a real broker, with the
/// bridge runtime in this process.
@Suite("Home Assistant's controls, simulated", .enabled(if: Jinja.testsEnabled, "needs python3 with jinja2"))
struct SimulatedHomeAssistantTests {
    static let bridge = "aabridge_bridge_aabridge"
    static let airPods = "aabridge_\(Fixture.advertisementTopic.split(separator: "/").last!)"
    static let lastResponse = "aabridge/bridge/last_response"
    static let pairing = "aabridge/bridge/pairing"

    /// Waits for the next `bridge/last_response` (after `count` of them) and returns it.
    func nextOutcome(_ observer: Observer, after count: Int, sourceLocation: SourceLocation = #_sourceLocation) async -> JSONValue? {
        let arrived = await observer.messages.wait(timeout: .seconds(20)) { elements in
            elements.filter { $0.topic == Self.lastResponse }.count > count
        }
        guard arrived else {
            Issue.record("no new last_response", sourceLocation: sourceLocation)
            return nil
        }
        return observer.json(on: Self.lastResponse)[count]
    }

    func outcomes(_ observer: Observer) -> Int { observer.messages(on: Self.lastResponse).count }

    @Test("pairing from the picker to a named accessory, then rename, source and removal, through discovery alone")
    func fullPairing() async throws {
        try await withBridge(homeAssistant: true, subscribe: ["aabridge/#", "homeassistant/#"]) { _, observer in
            try await pairThroughDiscovery(observer)
        }
    }

    /// The body of ``fullPairing()``, in a method of its own: inlined in the closure, the
    /// Swift 6.3.1 compiler crashed in its SendNonSendable pass on one variant of it, and
    /// another variant's `Observer.waitFor` calls missed messages already received.
    func pairThroughDiscovery(_ observer: Observer) async throws {
        let ha = SimulatedHomeAssistant(observer: observer)
        let bridge = Self.bridge, airPods = Self.airPods
        try #require(await ha.waitForDevice(bridge) { $0["components"]?["pair"] != nil } != nil)
        // Nothing on offer yet: the select's only option is the placeholder.
        #expect(try ha.component(bridge, "pairing_candidate")["options"] == ["(none)"])

        try await ha.press(bridge, "picker_show")
        await observer.waitFor("aabridge/bridge/picker") { $0["state"] == "presented" }
        #expect(try ha.state(bridge, "picker") == "presented")
        try await observer.publish(Fixture.advertisementTopic, Fixture.advertisementPayload)

        // The candidate becomes an option: the bridge device's discovery is republished.
        let label = "AirPods Pro (\(Fixture.advertisementID))"
        let offered = await ha.waitForDevice(bridge) {
            $0["components"]?["pairing_candidate"]?["options"]?.arrayValue?.contains(.string(label)) == true
        }
        try #require(offered != nil, "options: \(String(describing: try? ha.component(bridge, "pairing_candidate")["options"]))")

        var count = outcomes(observer)
        try await ha.select(bridge, "pairing_candidate", option: label)
        #expect(await nextOutcome(observer, after: count)?["status"] == "ok")
        await observer.waitFor(Self.pairing) { $0["candidate"]?.stringValue == Fixture.advertisementID }
        #expect(try ha.state(bridge, "pairing_candidate") == label)

        count = outcomes(observer)
        try await ha.type(bridge, "pairing_name", "Kitchen AirPods")
        #expect(await nextOutcome(observer, after: count)?["status"] == "ok")
        #expect(try ha.state(bridge, "pairing_name") == "Kitchen AirPods")

        count = outcomes(observer)
        try await ha.press(bridge, "pair")
        // Through the request path: answered as picker/select, with Home Assistant's transaction.
        let selected = await observer.waitFor("aabridge/bridge/response/picker/select") { $0["transaction"] == "homeassistant" }
        #expect(selected?["status"] == "ok")
        #expect(selected?["data"]?["name"] == "Kitchen AirPods")
        let outcome = await nextOutcome(observer, after: count)
        #expect(outcome?["request"] == "picker/select")
        #expect(try ha.state(bridge, "last_response") == "ok")
        // The form is empty again: the candidate left the picker, the name was given.
        await observer.waitFor(Self.pairing) { $0["candidate"] == .null && $0["name"] == .null }
        #expect(try ha.state(bridge, "pairing_candidate") == "(none)")

        // bridge/info counts it at once (the Accessories sensor reads it there).
        #expect(await observer.waitFor("aabridge/bridge/info") { $0["accessories"] == 4 } != nil)
        #expect(try ha.state(bridge, "accessories") == "4")
        // The accessory's device, named as typed, registered (the product auto-registers).
        try #require(await ha.waitForDevice(airPods) { $0["device"]?["name"] == "Kitchen AirPods" } != nil)
        let state = "aabridge/accessory/\(Fixture.advertisementID.replacingOccurrences(of: ":", with: ""))"
        await observer.waitFor(state) { $0["registration"] == "active" }
        #expect(try ha.state(airPods, "name") == "Kitchen AirPods")
        #expect(try ha.state(airPods, "registration") == "active")
        #expect(try ha.state(airPods, "preferred_source") == "(none)")

        // Rename through its text.
        try await ha.type(airPods, "name", "Den AirPods")
        await observer.waitFor(state) { $0["name"] == "Den AirPods" }
        #expect(try ha.state(airPods, "name") == "Den AirPods")
        await ha.waitForDevice(airPods) { $0["device"]?["name"] == "Den AirPods" }

        // The home source through its select: the accessory is available with no connected source,
        // so it takes it at once (its registration is not made again).
        try await ha.select(airPods, "preferred_source", option: "Alice's iPhone")
        await observer.waitFor(state) { $0["primary_source"] == .string(Fixture.phone) }
        #expect(try ha.state(airPods, "preferred_source") == "Alice's iPhone")
        #expect(try ha.state(bridge, "last_response") == "ok")
        #expect(try ha.attributes(bridge, "last_response")?["request"] == "accessory/home_sources")

        // A key typed into its text is set, and never becomes the entity's state.
        let irk = "0123456789abcdef0123456789abcdef"
        try await ha.type(airPods, "irk", irk)
        await observer.waitFor(state) { $0["keys"]?["irk"] == true }
        #expect(try ha.state(airPods, "irk") == "")
        #expect(
            !observer.messages.elements.contains { $0.topic != "aabridge/bridge/request/accessory/keys" && $0.payloadString.contains(irk) })

        // Removed with its button: the device's discovery is cleared.
        let staleRemove = try ha.component(airPods, "remove")
        let beforeRemove = outcomes(observer)
        try await ha.press(airPods, "remove")
        // Its own outcome first (the discovery is cleared before it is published), so that the
        // stale press below is not answered by this one's.
        let removed = await observer.waitFor(Self.lastResponse, after: beforeRemove) { $0["request"] == "accessory/remove" }
        #expect(removed?["status"] == "ok", "\(String(describing: removed))")
        let cleared = await observer.messages.wait(timeout: .seconds(20)) { elements in
            elements.contains { $0.topic == ha.configTopic(airPods) && $0.payload.isEmpty }
        }
        #expect(cleared)
        #expect(ha.device(airPods) == nil)
        #expect(await observer.waitFor("aabridge/bridge/info") { $0["accessories"] == 3 } != nil)

        // A press Home Assistant still had (the entity before it processed the removal):
        // the request API's error shows on the Last request sensor.
        count = outcomes(observer)
        try await observer.client.publishAcknowledged(
            topic: staleRemove["command_topic"]!.stringValue!, string: staleRemove["payload_press"]!.stringValue!,
            qos: .atLeastOnce, retain: false)
        let refused = await nextOutcome(observer, after: count)
        #expect(refused?["request"] == "accessory/remove")
        #expect(refused?["status"] == "error")
        #expect(try ha.state(bridge, "last_response") == "invalidRequest")
        #expect(try ha.attributes(bridge, "last_response")?["message"]?.stringValue?.contains("unknown accessory") == true)
    }

    @Test("bad input: Pair without a candidate, a 129-character name, a rename too long: the error shows, nothing changes")
    func badInput() async throws {
        try await withBridge(homeAssistant: true, subscribe: ["aabridge/#", "homeassistant/#"]) { _, observer in
            let ha = SimulatedHomeAssistant(observer: observer)
            let bridge = Self.bridge
            let migrated = "aabridge_\(Fixture.airPodsTopic)"
            try #require(await ha.waitForDevice(bridge) { $0["components"]?["pair"] != nil } != nil)
            try #require(await ha.waitForDevice(migrated) != nil)
            await observer.waitFor(Self.pairing)
            let events = observer.eventTypes.count

            // Pair with nothing chosen: picker/select's own refusal, answered on its topic.
            var count = outcomes(observer)
            try await ha.press(bridge, "pair")
            let refused = await observer.waitFor("aabridge/bridge/response/picker/select") { $0["transaction"] == "homeassistant" }
            #expect(refused?["error"]?["code"] == "invalidRequest")
            #expect(refused?["error"]?["message"]?.stringValue?.contains("'id' is required") == true)
            #expect(await nextOutcome(observer, after: count)?["request"] == "picker/select")
            #expect(try ha.state(bridge, "last_response") == "invalidRequest")

            // A name over 128 characters: Home Assistant's text refuses it itself (max 128) ...
            let long = String(repeating: "n", count: 129)
            await #expect(throws: SimulatedHomeAssistant.Refused.self) { try await ha.type(bridge, "pairing_name", long) }
            // ... and the bridge refuses it too when it arrives anyway: the form keeps no name.
            count = outcomes(observer)
            try await ha.type(bridge, "pairing_name", long, checkLength: false)
            let tooLong = await nextOutcome(observer, after: count)
            #expect(tooLong?["request"] == "pairing/set")
            #expect(tooLong?["error"]?["code"] == "invalidRequest")
            #expect(try ha.state(bridge, "last_response") == "invalidRequest")
            #expect(try ha.state(bridge, "pairing_name") == "")

            // A candidate the picker does not have (an option from an out-of-date discovery).
            count = outcomes(observer)
            try await observer.publish("aabridge/bridge/pairing/set", #"{"candidate":"\#(Fixture.advertisementID)"}"#)
            #expect(await nextOutcome(observer, after: count)?["error"]?["message"]?.stringValue?.contains("not a candidate") == true)
            #expect(try ha.state(bridge, "pairing_candidate") == "(none)")

            // The accessory's rename, too long: refused, the name stays.
            count = outcomes(observer)
            try await ha.type(migrated, "name", long, checkLength: false)
            let rename = await nextOutcome(observer, after: count)
            #expect(rename?["request"] == "accessory/rename")
            #expect(rename?["error"]?["code"] == "invalidRequest")
            #expect(try ha.state(migrated, "name") == "Alice's AirPods")
            #expect(observer.eventTypes.count == events, "nothing happened: \(observer.eventTypes.dropFirst(events))")
        }
    }
}
