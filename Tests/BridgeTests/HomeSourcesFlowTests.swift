import AccessoryKit
import Foundation
import JSON
import Storage
import TestSupport
import Testing

@testable import Bridge

/// Sources that last (household.md, "Home sources", "Aliases"), over a real mosquitto and a
/// real SQLite store: the case closed for longer than the availability window, then worn
/// again; a report while away; a restart; `/set` and telemetry on an alias; bad input.
@Suite("Home sources, aliases and source names over MQTT")
struct HomeSourcesFlowTests {
    static let state = "aabridge/accessory/\(Fixture.airPodsTopic)"
    static let decisions = "aabridge/accessory/\(Fixture.airPodsTopic)/decision"
    static let telemetry = "aabridge/telemetry/livingroom/\(Fixture.airPodsTopic)"
    static let phoneRoute = "aabridge/source/\(Fixture.phoneTopic)/route"
    static let laptopRoute = "aabridge/source/665544332211/route"
    static let alias = "F0:F1:F2:F3:F4:F5"
    static let aliasTopic = "F0F1F2F3F4F5"

    /// Alice's AirPods (migrated, registered by auto_register) get the phone as their home
    /// source, are worn (their first sighting: routed, `startup`), go into the case and are not
    /// heard for longer than the availability window (3 s; under load a 1-s window ran out
    /// between two messages of the test): offline, nothing connected.
    static func inTheCaseOvernight(_ observer: Observer) async throws {
        let set = try await observer.request("accessory/home_sources", #""id":"\#(Fixture.airPods)","sources":["\#(Fixture.phone)"]"#)
        #expect(set["status"] == "ok", "\(set)")
        #expect(set["data"]?["home_sources"] == [.string(Fixture.phone)], "data: the state object")
        try await observer.publish(telemetry, #"{"placement":"inEar"}"#)
        let first = await observer.waitFor(decisions) { $0["action"] == "route" }
        #expect(first?["reason"] == "startup", "the first return after a start")
        try await observer.publish(telemetry, #"{"placement":"offHead"}"#)
        await observer.waitFor(phoneRoute) { $0["target"] == "fallback" }
        // Offline again, after the online of the first sighting (not the offline of the start).
        let availability = "aabridge/accessory/\(Fixture.airPodsTopic)/availability"
        let online = await observer.waitFor(availability) { $0["state"] == "online" }
        try #require(online != nil)
        let onlineAt = try #require(observer.json(on: availability).lastIndex { $0["state"] == "online" })
        await observer.waitFor(availability, after: onlineAt + 1, timeout: .seconds(10)) { $0["state"] == "offline" }
        let routedAt = try #require(observer.json(on: state).lastIndex { $0["primary_source"] == .string(Fixture.phone) })
        let away = await observer.waitFor(state, after: routedAt + 1) { $0["available"] == false }
        #expect(away?["primary_source"] == .null, "connected sources are cleared when it becomes unavailable")
        #expect(away?["home_sources"] == [.string(Fixture.phone)], "home sources are not")
    }

    @Test("the case closed beyond the availability window, then worn again: routed to the home source, reason home_source")
    func foundAgainInTheMorning() async throws {
        try await withBridge(availabilityTimeoutSeconds: 3) { _, observer in
            try await Self.inTheCaseOvernight(observer)
            let routes = observer.json(on: Self.decisions).count
            try await observer.publish(Self.telemetry, #"{"placement":"inEar"}"#)
            let morning = await observer.waitFor(Self.decisions) { $0["action"] == "route" && $0["reason"] == "home_source" }
            #expect(morning?["source"] == .string(Fixture.phone))
            #expect(
                observer.json(on: Self.decisions).count == routes + 1,
                "one decision, the home source's: \(observer.json(on: Self.decisions))")
            await observer.waitFor(Self.phoneRoute) { $0["target"] == .string(Fixture.airPods) && $0["reason"] == "home_source" }
            let back = await observer.waitFor(Self.state) { $0["available"] == true && $0["primary_source"] == .string(Fixture.phone) }
            #expect(back?["placement"] == "inEar")
        }
    }

    @Test("a report while away wins: the source connected while the case was closed is the one used, not the home source")
    func reportWhileAwayWins() async throws {
        try await withBridge(availabilityTimeoutSeconds: 3) { _, observer in
            try await Self.inTheCaseOvernight(observer)
            // The Mac says the AirPods connected to it (report-sources), while no gateway hears them.
            try await observer.publish("\(Self.state)/set", #"{"source_connected":"\#(Fixture.laptop)"}"#)
            await observer.waitFor(Self.state) { $0["primary_source"] == .string(Fixture.laptop) }
            try await observer.publish(Self.telemetry, #"{"placement":"inEar"}"#)
            await observer.waitFor(Self.laptopRoute) { $0["target"] == .string(Fixture.airPods) }
            let back = await observer.waitFor(Self.state) { $0["available"] == true }
            #expect(back?["primary_source"] == .string(Fixture.laptop))
            #expect(back?["secondary_source"] == .null)
            #expect(!observer.json(on: Self.decisions).contains { $0["reason"] == "home_source" })
            #expect(observer.json(on: Self.phoneRoute).last?["target"] == "fallback")
        }
    }

    @Test("a restart keeps home sources, the alias and source names; connected sources present on return are not overwritten")
    func restart() async throws {
        let harness = try BridgeHarness()
        defer { harness.removeDirectory() }
        try await harness.run { observer in
            #expect(
                try await observer.request("accessory/home_sources", #""id":"\#(Fixture.airPods)","sources":["\#(Fixture.phone)"]"#)[
                    "status"] == "ok")
            let alias = try await observer.request("accessory/alias", #""id":"\#(Fixture.airPods)","address":"\#(Self.alias)""#)
            #expect(alias["data"]?["alias"] == .string(Self.alias))
            let named = try await observer.request("source/name", #""address":"\#(Fixture.laptop)","name":"  Bob's MacBook ""#)
            #expect(named["data"] == ["address": .string(Fixture.laptop), "name": "Bob's MacBook"], "trimmed")
            try await observer.publish(Self.telemetry, #"{"placement":"inEar"}"#)
            await observer.waitFor(Self.state) { $0["primary_source"] == .string(Fixture.phone) }
            // The laptop is what they play from now.
            try await observer.publish("\(Self.state)/set", #"{"sources":["\#(Fixture.laptop)"]}"#)
            let route = await observer.waitFor(Self.laptopRoute) { $0["target"] == .string(Fixture.airPods) }
            #expect(route?["name"] == "Bob's MacBook")
        }
        try await harness.run { observer in
            let restored = await observer.waitFor(Self.state) { $0["home_sources"] != nil }
            #expect(restored?["home_sources"] == [.string(Fixture.phone)])
            #expect(restored?["alias"] == .string(Self.alias))
            #expect(restored?["primary_source"] == .string(Fixture.laptop), "stored as connected")
            // Heard within the window: the laptop it is still connected to stays.
            try await observer.publish(Self.telemetry, #"{"placement":"inEar"}"#)
            let heard = await observer.waitFor(Self.state) { $0["available"] == true }
            #expect(heard?["primary_source"] == .string(Fixture.laptop))
            let route = await observer.waitFor(Self.laptopRoute) { $0["target"] == .string(Fixture.airPods) }
            #expect(route?["name"] == "Bob's MacBook", "the name given at run time survived the restart")
            #expect(!observer.json(on: Self.decisions).contains { $0["reason"] == "home_source" || $0["reason"] == "startup" })
        }
    }

    @Test("/set and native telemetry on the alias's topic are the accessory's; an advertisement from the alias is not")
    func alias() async throws {
        try await withBridge { _, observer in
            #expect(
                try await observer.request("accessory/alias", #""id":"\#(Fixture.airPods)","address":"\#(Self.alias)""#)["status"] == "ok")
            try await observer.publish("aabridge/accessory/\(Self.aliasTopic)/set", #"{"source_connected":"\#(Fixture.phone)"}"#)
            await observer.waitFor(Self.state) { $0["primary_source"] == .string(Fixture.phone) }
            try await observer.publish("aabridge/telemetry/livingroom/\(Self.aliasTopic)", #"{"placement":"inEar","rssi":-44}"#)
            await observer.waitFor(Self.phoneRoute) { $0["target"] == .string(Fixture.airPods) }
            let heard = await observer.waitFor(Self.state) { $0["available"] == true }
            #expect(heard?["placement"] == "inEar")
            // An advertiser at the alias's address is someone else (its id is the public address).
            try await observer.publish(
                "home/gw1/BTtoMQTT/\(Self.aliasTopic)", #"{"id":"\#(Self.alias)","rssi":-30,"manufacturerdata":"4c0010050b1c6f5a43"}"#)
            #expect(try await observer.request("health")["status"] == "ok", "an ordering barrier")
            #expect(!observer.json(on: Self.state).contains { $0["address"] == .string(Self.alias) })
            #expect(try await observer.request("accessory/alias", #""id":"\#(Fixture.airPods)","address":null"#)["data"]?["alias"] == .null)
            try await observer.publish("aabridge/accessory/\(Self.aliasTopic)/set", #"{"source_disconnected":"\#(Fixture.phone)"}"#)
            let health = try await observer.request("health")
            #expect(health["data"]?["telemetry_rejected"] == 1, "a removed alias names no accessory")
            #expect(observer.json(on: Self.state).last?["primary_source"] == .string(Fixture.phone))
        }
    }

    @Test(
        "bad input: invalidRequest naming the field, nothing stored",
        arguments: [
            ("accessory/home_sources", #""id":"\#(Fixture.airPods)","sources":["\#(Fixture.airPods)"]"#, "'sources'[0]"),
            ("accessory/home_sources", #""id":"\#(Fixture.airPods)","sources":["\#(Fixture.phone)","\#(Fixture.phone)"]"#, "given twice"),
            (
                "accessory/home_sources",
                #""id":"\#(Fixture.airPods)","sources":["11:22:33:44:55:01","11:22:33:44:55:02","11:22:33:44:55:03"]"#,
                "at most 2"
            ),
            (
                "accessory/home_sources", #""id":"\#(Fixture.airPods)","sources":["not an address"]"#,
                "'sources'[0] must be a Bluetooth address"
            ),
            ("accessory/home_sources", #""id":"\#(Fixture.airPods)""#, "'sources' is required"),
            ("accessory/alias", #""id":"\#(Fixture.airPods)","address":"\#(Fixture.headphones)""#, "'address'"),
            ("accessory/alias", #""id":"\#(Fixture.airPods)","address":"\#(Fixture.phone)""#, "source device"),
            ("accessory/alias", #""id":"\#(Fixture.airPods)","address":"12:34""#, "'address' must be a Bluetooth address"),
            ("accessory/alias", #""id":"\#(Fixture.airPods)""#, "'address' is required"),
            ("source/name", #""address":"\#(Fixture.laptop)","name":"\#(String(repeating: "n", count: 65))""#, "'name' must be 1-64"),
            ("source/name", #""address":"\#(Fixture.laptop)","name":"   ""#, "'name' must be 1-64"),
            ("source/name", #""address":"\#(Fixture.laptop)""#, "'name' is required"),
        ])
    func badInput(request: String, members: String, message: String) async throws {
        let harness = try BridgeHarness()
        defer { harness.removeDirectory() }
        try await harness.run { observer in
            // The phone is a source device (the configuration names it); the headphones are an accessory.
            let refused = try await observer.request(request, members)
            #expect(refused["error"]?["code"] == "invalidRequest")
            #expect(refused["error"]?["message"]?.stringValue?.contains(message) == true, "\(refused)")
        }
        let stored = try AccessoryStore(path: harness.databasePath)
        defer { stored.close() }
        let state = try stored.load()
        let airPods = try #require(BluetoothAddress(Fixture.airPods))
        #expect(state.homeSources[airPods] == nil)
        #expect(state.aliases.isEmpty)
        #expect(state.sourceNames.isEmpty)
    }

    @Test(
        "Home Assistant's controls: a home source chosen, a source named, an alias typed; the placement and secondary source stay",
        .enabled(if: Jinja.testsEnabled, "needs python3 with jinja2"))
    func homeAssistantControls() async throws {
        try await withBridge(homeAssistant: true, subscribe: ["aabridge/#", "homeassistant/#"]) { _, observer in
            try await controls(observer)
        }
    }

    /// The body of ``homeAssistantControls()`` (a method of its own, as SimulatedHomeAssistantTests'
    /// are, for the compiler's sake).
    func controls(_ observer: Observer) async throws {
        let ha = SimulatedHomeAssistant(observer: observer)
        let device = "aabridge_\(Fixture.airPodsTopic)", bridge = SimulatedHomeAssistantTests.bridge
        try #require(await ha.waitForDevice(device) { $0["components"]?["preferred_source"] != nil } != nil)
        // Worn, playing from the phone and the laptop (what the phone and the Mac reported).
        try await observer.publish(Self.telemetry, #"{"placement":"inEar","sources":["\#(Fixture.phone)","\#(Fixture.laptop)"]}"#)
        let playing = await observer.waitFor(Self.state) { $0["secondary_source"] == .string(Fixture.laptop) }
        #expect(playing?["placement"] == "inEar")
        #expect(try ha.component(device, "preferred_source")["options"] == ["(none)", "Alice's iPhone"])

        // The laptop gets a name from the bridge device, and becomes an option.
        try await ha.type(bridge, "source_name", "\(Fixture.laptop) = Bob's MacBook")
        try #require(
            await ha.waitForDevice(device) {
                $0["components"]?["preferred_source"]?["options"] == ["(none)", "Alice's iPhone", "Bob's MacBook"]
            } != nil)
        #expect(try ha.state(bridge, "source_name") == "", "write-only")
        try await ha.select(device, "preferred_source", option: "Bob's MacBook")
        let chosen = await observer.waitFor(Self.state) { $0["home_sources"] == [.string(Fixture.laptop)] }
        #expect(chosen?["placement"] == "inEar", "not registered again: the placement stays")
        #expect(chosen?["primary_source"] == .string(Fixture.phone), "the connected sources stay")
        #expect(chosen?["secondary_source"] == .string(Fixture.laptop))
        #expect(try ha.state(device, "preferred_source") == "Bob's MacBook")
        #expect(try ha.attributes(bridge, "last_response")?["request"] == "accessory/home_sources")

        // An address nobody named, through the text; then the alias.
        try await ha.type(device, "home_source_address", "22:33:44:55:66:77")
        await observer.waitFor(Self.state) { $0["home_sources"] == ["22:33:44:55:66:77"] }
        await ha.waitForDevice(device) {
            $0["components"]?["preferred_source"]?["options"]?.arrayValue?.contains("22:33:44:55:66:77") == true
        }
        #expect(try ha.state(device, "preferred_source") == "22:33:44:55:66:77")
        #expect(try ha.state(device, "home_source_address") == "22:33:44:55:66:77")
        try await ha.type(device, "alias", Self.alias)
        await observer.waitFor(Self.state) { $0["alias"] == .string(Self.alias) }
        #expect(try ha.state(device, "alias") == Self.alias)
        let last = await observer.waitFor(Self.state) { $0["alias"] == .string(Self.alias) }
        #expect(last?["placement"] == "inEar" && last?["secondary_source"] == .string(Fixture.laptop))
        // A refusal shows on Last request: the alias cannot be a source device's address.
        try await ha.type(device, "alias", Fixture.phone)
        await observer.waitFor("aabridge/bridge/last_response") { $0["status"] == "error" && $0["request"] == "accessory/alias" }
        #expect(try ha.state(bridge, "last_response") == "invalidRequest")
    }
}
