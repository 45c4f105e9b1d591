import AccessoryKit
import Foundation
import JSON
import TestSupport
import Testing

@testable import Bridge

/// Found again after a night (household.md) over a real mosquitto and a real SQLite store:
/// an accessory without an IRK that was away comes back from a new address. The availability
/// window is 1 s, so "a night in the closed case" is a second of silence.
@Suite("Found again after a night: re-attach, look-alikes, the pairing sighting")
struct ReattachFlowTests {
    static let airPodsState = "aabridge/accessory/\(Fixture.airPodsTopic)"
    static let availability = "\(airPodsState)/availability"
    static let lookalikes = "aabridge/bridge/lookalikes"
    static let events = "aabridge/bridge/event"
    static let log = "aabridge/bridge/log"
    /// A second pair of the same model and colour (Bob's), paired from the picker.
    static let bobs = "D1:D2:D3:D4:D5:D6"
    static let bobsState = "aabridge/accessory/D1D2D3D4D5D6"

    /// A resolvable private address of some key nobody has: a rotation of an accessory without one.
    static func rotated(_ prand: UInt32) throws -> String {
        try IdentityResolutionFlowTests.resolvableAddress(irk: "000102030405060708090a0b0c0d0e0f", prand: prand)
    }

    /// The fixtures' AirPods Pro proximity-pairing advertisement (model 0x200E, colour 0) from
    /// `address`, heard by gateway `room`.
    static func advertisement(_ observer: Observer, from address: String, room: String, rssi: Int = -55) async throws {
        let topicID = address.replacingOccurrences(of: ":", with: "")
        try await observer.publish(
            "home/\(room)/BTtoMQTT/\(topicID)",
            #"{"id":"\#(address)","mac_type":1,"manufacturerdata":"4c000719010e2022f58f00000a7d9fff27234873d4305e0fed1b39e2b8","rssi":\#(rssi)}"#
        )
    }

    /// Advertises from `address` every 300 ms until `done` says stop or `seconds` pass.
    static func advertise(
        _ observer: Observer, from address: String, room: String, for seconds: Double, until done: () -> Bool = { false }
    ) async throws {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end, !done() {
            try await advertisement(observer, from: address, room: room)
            try await Task.sleep(for: .milliseconds(300))
        }
    }

    /// The accessory whose state topic is `state` is heard in `room` for a moment, then goes
    /// silent until it is away (its availability says offline after the online).
    static func heardThenAway(_ observer: Observer, _ id: String, state: String, room: String) async throws {
        try await advertise(observer, from: id, room: room, for: 0.7)
        let online = await observer.waitFor(state) { $0["available"] == true && $0["room"] == .string(room) }
        try #require(online != nil)
        let heardAt = try #require(observer.json(on: state).lastIndex { $0["available"] == true })
        await observer.waitFor(state, after: heardAt + 1, timeout: .seconds(10)) { $0["available"] == false }
    }

    /// Pairs Bob's AirPods from the picker (heard in `room`).
    static func pairBobs(_ observer: Observer, room: String) async throws {
        _ = try await observer.request("picker/show", #""products":["AirPods Pro"]"#)
        try await advertisement(observer, from: bobs, room: room)
        await observer.waitFor("aabridge/bridge/picker") { $0["candidates"]?.arrayValue?.isEmpty == false }
        // Heard within the (1 s) availability window of the select, or it fails connectionFailed.
        var selected: JSONValue = .null
        for _ in 0..<3 where selected["status"] != "ok" {
            try await advertisement(observer, from: bobs, room: room)
            selected = try await observer.request("picker/select", #""id":"\#(bobs)","name":"Bob's AirPods""#)
        }
        try #require(selected["status"] == "ok", "\(selected.serialized)")
    }

    static func attributed(_ address: String, _ identity: String) -> @Sendable (JSONValue) -> Bool {
        { $0["address"] == .string(address) && $0["identity"] == .string(identity) }
    }

    @Test("the only away pair of that model and colour, first heard where it was last heard: re-attached, same id, an event and a log line")
    func reattachedWhenUnique() async throws {
        try await withBridge(availabilityTimeoutSeconds: 1) { _, observer in
            try await Self.heardThenAway(observer, Fixture.airPods, state: Self.airPodsState, room: "bedroom")
            let morning = try Self.rotated(0x0A0A0A)
            let firstAdvertisement = Date()
            let reattached = Self.attributed(morning, "reattached")
            try await Self.advertise(observer, from: morning, room: "bedroom", for: 12) {
                observer.json(on: Self.airPodsState).contains(where: reattached)
            }
            let state = await observer.waitFor(Self.airPodsState, timeout: .seconds(2), reattached)
            #expect(state?["available"] == true && state?["gateway"] == "bedroom")
            #expect(state?["model"] == "AirPods Pro")
            // At least two advertisements over at least 5 s before it is attached.
            #expect(Date().timeIntervalSince(firstAdvertisement) >= 5)

            let event = await observer.waitFor(Self.events) { $0["type"] == "accessoryReattached" }
            #expect(event?["raw"] == .null, "an aabridge event: raw null")
            #expect(event?["accessory"]?["id"] == .string(Fixture.airPods))
            let heard = observer.json(on: Self.events).first { $0["type"] == "lookalikeHeard" }
            #expect(heard?["raw"] == .null && heard?["accessory"] == .null, "look-alike first heard: \(String(describing: heard))")
            let line = await observer.waitFor(Self.log) {
                ($0["message"]?.stringValue ?? "").contains("re-attached accessory \(Fixture.airPods)")
            }
            #expect(line?["level"] == "info")
            // It was listed while it was a look-alike, and leaves the list once attached.
            let listedAt = try #require(observer.json(on: Self.lookalikes).firstIndex { $0.arrayValue?.isEmpty == false })
            let listed = observer.json(on: Self.lookalikes)[listedAt].arrayValue?.first
            #expect(listed?["address"] == .string(morning), "\(String(describing: listed))")
            #expect(listed?["model"] == "AirPods Pro" && listed?["colour"] == 0 && listed?["gateway"] == "bedroom")
            #expect(listed?["could_be"] == [.string(Fixture.airPods)])
            #expect(listed?["rssi"] == -55 && listed?["last_seen"]?.stringValue != nil)
            await observer.waitFor(Self.lookalikes, after: listedAt + 1) { $0 == [] }

            // From then on the address is the accessory's (a later rotation is followed as usual:
            // the week's simulation, whose availability window is long enough for following).
            let count = observer.json(on: Self.airPodsState).count
            try await Self.advertisement(observer, from: morning, room: "bedroom")
            _ = try await observer.request("accessory/rename", #""id":"\#(Fixture.airPods)","name":"Alice's AirPods Pro""#)
            let renamed = await observer.waitFor(Self.airPodsState, after: count) { $0["name"] == "Alice's AirPods Pro" }
            #expect(renamed?["address"] == .string(morning) && renamed?["identity"] == "reattached")
        }
    }

    @Test(
        "an automatic re-attachment is undone when another address of its model and colour keeps advertising: away again, both offered, an event and a log line"
    )
    func reattachUndone() async throws {
        try await withBridge(availabilityTimeoutSeconds: 1) { _, observer in
            try await Self.heardThenAway(observer, Fixture.airPods, state: Self.airPodsState, room: "bedroom")
            let morning = try Self.rotated(0x0A0A0A)
            let reattached = Self.attributed(morning, "reattached")
            try await Self.advertise(observer, from: morning, room: "bedroom", for: 12) {
                observer.json(on: Self.airPodsState).contains(where: reattached)
            }
            try #require(await observer.waitFor(Self.airPodsState, timeout: .seconds(2), reattached) != nil)
            // A second pair of the same model and colour, heard twice in the hall.
            let rival = try Self.rotated(0x0B0B0B)
            try await Self.advertisement(observer, from: rival, room: "hall")
            try await Self.advertisement(observer, from: rival, room: "hall")
            let event = await observer.waitFor(Self.events) { $0["type"] == "reattachUndone" }
            #expect(event?["raw"] == .null && event?["accessory"]?["id"] == .string(Fixture.airPods), "\(String(describing: event))")
            let said = "undid the automatic re-attachment of accessory \(Fixture.airPods) to \(morning)"
            let line = await observer.waitFor(Self.log) { ($0["message"]?.stringValue ?? "").contains(said) }
            #expect(line?["level"] == "info")
            let away = await observer.waitFor(Self.airPodsState) { $0["available"] == false && $0["address"] != .string(morning) }
            try #require(away != nil)
            let undoneAt = try #require(observer.json(on: Self.airPodsState).lastIndex { $0["available"] == false })
            // Both keep advertising: both are offered, and the rules attach neither by themselves.
            for _ in 0..<24 {
                try await Self.advertisement(observer, from: morning, room: "bedroom")
                try await Self.advertisement(observer, from: rival, room: "hall")
                try await Task.sleep(for: .milliseconds(300))
            }
            let both = await observer.waitFor(Self.lookalikes) { list in
                Set(list.arrayValue?.compactMap { $0["address"]?.stringValue } ?? []) == [morning, rival]
            }
            #expect(both != nil, "\(observer.json(on: Self.lookalikes).last?.serialized ?? "")")
            #expect(!observer.json(on: Self.airPodsState).dropFirst(undoneAt).contains { $0["available"] == true })
        }
    }

    @Test("a restart keeps the room it was last heard in: found again the first morning after it")
    func reattachedAfterARestart() async throws {
        let harness = try BridgeHarness(availabilityTimeoutSeconds: 1)
        defer { harness.removeDirectory() }
        try await harness.run { observer in
            try await Self.advertise(observer, from: Fixture.airPods, room: "bedroom", for: 0.7)
            await observer.waitFor(Self.airPodsState) { $0["room"] == "bedroom" && $0["model"] == "AirPods Pro" }
        }
        try await BridgeHarness(broker: harness.broker, directory: harness.directory, availabilityTimeoutSeconds: 1).run { observer in
            let morning = try Self.rotated(0x0C0C0C)
            let reattached = Self.attributed(morning, "reattached")
            try await Self.advertise(observer, from: morning, room: "bedroom", for: 12) {
                observer.json(on: Self.airPodsState).contains(where: reattached)
            }
            #expect(await observer.waitFor(Self.airPodsState, timeout: .seconds(2), reattached) != nil)
        }
    }

    @Test("two away pairs fit and both were last heard by the gateway that hears it: offered, never attached")
    func refusedWhenAmbiguous() async throws {
        try await withBridge(availabilityTimeoutSeconds: 1) { _, observer in
            try await Self.pairBobs(observer, room: "kitchen")
            try await Self.heardThenAway(observer, Fixture.airPods, state: Self.airPodsState, room: "kitchen")
            await observer.waitFor(Self.bobsState) { $0["available"] == false }
            let morning = try Self.rotated(0x1D1D1D)
            try await Self.advertise(observer, from: morning, room: "kitchen", for: 7)
            let listed = await observer.waitFor(Self.lookalikes) { $0.arrayValue?.first?["address"] == .string(morning) }
            #expect(
                listed?.arrayValue?.first?["could_be"] == [.string(Fixture.airPods), .string(Self.bobs)], "\(String(describing: listed))")
            let states = observer.json(on: Self.airPodsState) + observer.json(on: Self.bobsState)
            #expect(!states.contains { $0["address"] == .string(morning) }, "a look-alike was attached to one of them")
            #expect(!observer.eventTypes.contains("accessoryReattached"))
        }
    }

    @Test("one away pair, but two look-alikes of its model and colour within the window: neither is attached")
    func refusedWithTwoLookalikes() async throws {
        try await withBridge(availabilityTimeoutSeconds: 1) { _, observer in
            try await Self.heardThenAway(observer, Fixture.airPods, state: Self.airPodsState, room: "bedroom")
            let mine = try Self.rotated(0x2E2E2E)
            let other = try Self.rotated(0x2F2F2F)
            let end = Date().addingTimeInterval(7)
            while Date() < end {
                try await Self.advertisement(observer, from: mine, room: "bedroom")
                try await Self.advertisement(observer, from: other, room: "bedroom")
                try await Task.sleep(for: .milliseconds(300))
            }
            await observer.waitFor(Self.lookalikes) { $0.arrayValue?.count == 2 }
            let states = observer.json(on: Self.airPodsState)
            #expect(!states.contains { $0["address"] == .string(mine) || $0["address"] == .string(other) })
        }
    }

    @Test("two away pairs fit: the one last heard by the gateway that hears it first, and not by the other's, is re-attached")
    func tieBreakByGateway() async throws {
        try await withBridge(availabilityTimeoutSeconds: 1) { _, observer in
            try await Self.pairBobs(observer, room: "office")
            try await Self.heardThenAway(observer, Self.bobs, state: Self.bobsState, room: "office")
            try await Self.heardThenAway(observer, Fixture.airPods, state: Self.airPodsState, room: "bedroom")
            let morning = try Self.rotated(0x3A3A3A)
            let reattached = Self.attributed(morning, "reattached")
            try await Self.advertise(observer, from: morning, room: "bedroom", for: 12) {
                observer.json(on: Self.airPodsState).contains(where: reattached)
            }
            #expect(await observer.waitFor(Self.airPodsState, timeout: .seconds(2), reattached) != nil)
            #expect(!observer.json(on: Self.bobsState).contains { $0["address"] == .string(morning) })
        }
    }

    @Test("a neighbour's identical pair in the hall is only offered; accessory/reattach attaches what the user says is theirs")
    func lookalikeAttachedByRequest() async throws {
        try await withBridge(availabilityTimeoutSeconds: 1) { _, observer in
            try await Self.heardThenAway(observer, Fixture.airPods, state: Self.airPodsState, room: "bedroom")
            let hall = try Self.rotated(0x4B4B4B)
            try await Self.advertise(observer, from: hall, room: "hall", for: 6.5)
            let listed = await observer.waitFor(Self.lookalikes) { $0.arrayValue?.first?["address"] == .string(hall) }
            #expect(listed?.arrayValue?.first?["gateway"] == "hall" && listed?.arrayValue?.first?["could_be"] == [.string(Fixture.airPods)])
            #expect(!observer.json(on: Self.airPodsState).contains { $0["address"] == .string(hall) }, "attached on its own")

            // The user says it is theirs (say they took the case to the hall).
            let response = try await observer.request("accessory/reattach", #""id":"\#(Fixture.airPods)","address":"\#(hall)""#)
            #expect(response["status"] == "ok", "\(response.serialized)")
            #expect(response["data"]?["id"] == .string(Fixture.airPods))
            await observer.waitFor(Self.events) {
                $0["type"] == "accessoryReattached" && $0["accessory"]?["id"] == .string(Fixture.airPods)
            }
            await observer.waitFor(Self.log) { ($0["message"]?.stringValue ?? "").contains("(accessory/reattach)") }
            let listedAt = try #require(observer.json(on: Self.lookalikes).lastIndex { $0.arrayValue?.isEmpty == false })
            await observer.waitFor(Self.lookalikes, after: listedAt + 1) { $0 == [] }
            try await Self.advertisement(observer, from: hall, room: "hall")
            await observer.waitFor(Self.airPodsState, Self.attributed(hall, "reattached"))
        }
    }

    @Test("accessory/reattach to an address that is someone else's is invalidRequest saying whose, and changes nothing")
    func reattachRefusals() async throws {
        try await withBridge(availabilityTimeoutSeconds: 1) { _, observer in
            let headphonesIRK = IdentityKeysFlowTests.irkHex
            _ = try await observer.request("accessory/keys", #""id":"\#(Fixture.headphones)","irk":"\#(headphonesIRK)""#)
            let alias = "F0:F1:F2:F3:F4:F5"
            _ = try await observer.request("accessory/alias", #""id":"\#(Fixture.speaker)","address":"\#(alias)""#)
            let headphonesAddress = try IdentityKeysFlowTests.resolvableAddress(prand: 0x010203)
            let stranger = try Self.rotated(0x5C5C5C)
            let cases: [(String, String, String)] = [
                (Fixture.airPods, Fixture.headphones, "is the id of another accessory"),
                (Fixture.airPods, Fixture.airPods, "is the accessory's own id"),
                (Fixture.airPods, alias, "is the alias of accessory \(Fixture.speaker)"),
                (Fixture.airPods, headphonesAddress, "resolves with the IRK of accessory \(Fixture.headphones)"),
                (Fixture.headphones, stranger, "has an IRK, and it does not resolve"),
                ("E9:E9:E9:E9:E9:E9", stranger, "unknown accessory"),
            ]
            for (id, address, message) in cases {
                let response = try await observer.request("accessory/reattach", #""id":"\#(id)","address":"\#(address)""#)
                #expect(response["status"] == "error", "\(id) -> \(address)")
                #expect(response["error"]?["code"] == "invalidRequest")
                #expect(response["error"]?["message"]?.stringValue?.contains(message) == true, "\(response.serialized)")
            }
            for (members, message) in [
                (#""id":"\#(Fixture.airPods)""#, "'address' is required"),
                (#""id":"\#(Fixture.airPods)","address":"12:34""#, "'address' must be a Bluetooth address"),
            ] {
                let response = try await observer.request("accessory/reattach", members)
                #expect(response["error"]?["message"]?.stringValue?.contains(message) == true, "\(response.serialized)")
            }
            #expect(!observer.eventTypes.contains("accessoryReattached"))
            let state = try #require(observer.json(on: Self.airPodsState).last)
            #expect(state["address"] == .null, "nothing changed: \(state.serialized)")
        }
    }

    @Test("the re-attach form: a look-alike chosen, then Re-attach sends accessory/reattach; a press with no choice is refused")
    func reattachForm() async throws {
        try await withBridge(availabilityTimeoutSeconds: 1) { _, observer in
            let form = "aabridge/bridge/reattach/set"
            let choice = "\(Self.airPodsState)/reattach"
            try await observer.publish(form, #"{"id":"\#(Fixture.airPods)","action":"reattach","transaction":"empty"}"#)
            let refused = await observer.waitFor("aabridge/bridge/last_response") { $0["transaction"] == "empty" }
            #expect(refused?["request"] == "accessory/reattach" && refused?["status"] == "error")
            #expect(refused?["error"]?["message"]?.stringValue?.contains("'address' is required") == true)

            try await Self.heardThenAway(observer, Fixture.airPods, state: Self.airPodsState, room: "bedroom")
            let hall = try Self.rotated(0x6D6D6D)
            try await Self.advertise(observer, from: hall, room: "hall", for: 2)
            await observer.waitFor(Self.lookalikes) { $0.arrayValue?.first?["address"] == .string(hall) }
            try await observer.publish(form, #"{"id":"\#(Fixture.airPods)","lookalike":"\#(hall)","transaction":"choose"}"#)
            let chosen = await observer.waitFor("aabridge/bridge/response/reattach/set") { $0["transaction"] == "choose" }
            #expect(chosen?["status"] == "ok" && chosen?["data"]?["lookalike"] == .string(hall))
            await observer.waitFor(choice) { $0["lookalike"] == .string(hall) }
            let choices = observer.json(on: choice).count
            try await observer.publish(form, #"{"id":"\#(Fixture.airPods)","action":"reattach","transaction":"press"}"#)
            let pressed = await observer.waitFor("aabridge/bridge/response/accessory/reattach") { $0["transaction"] == "press" }
            #expect(pressed?["status"] == "ok", "\(String(describing: pressed))")
            // (after: the choice was null before the look-alike was chosen too.)
            await observer.waitFor(choice, after: choices) { $0["lookalike"] == .null }

            for (payload, message) in [
                (#"{"lookalike":"\#(hall)"}"#, "'id' is required"),
                (#"{"id":"\#(Fixture.airPods)","lookalike":"nope"}"#, "'lookalike' must be a Bluetooth address"),
                (#"{"id":"\#(Fixture.airPods)","action":"pair"}"#, "'action' must be \"reattach\""),
                (#"{"id":"\#(Fixture.airPods)"}"#, "expected 'lookalike' or 'action'"),
                (#"{"id":"E9:E9:E9:E9:E9:E9","lookalike":null}"#, "unknown accessory"),
                ("[]", "must be a JSON object"),
            ] {
                let count = observer.json(on: "aabridge/bridge/response/reattach/set").count
                try await observer.publish(form, payload)
                let response = await observer.waitFor("aabridge/bridge/response/reattach/set", after: count)
                #expect(response?["status"] == "error", "\(payload)")
                #expect(
                    response?["error"]?["message"]?.stringValue?.contains(message) == true, "\(payload): \(String(describing: response))")
            }
        }
    }

    @Test(
        "Home Assistant: the Look-alike select offers what could be the accessory, Re-attach attaches it, a refusal shows on Last request")
    func homeAssistantAnswersALookalike() async throws {
        try await withBridge(availabilityTimeoutSeconds: 1, homeAssistant: true, subscribe: ["aabridge/#", "homeassistant/#"]) {
            _, observer in
            let homeAssistant = SimulatedHomeAssistant(observer: observer)
            let device = "aabridge_\(Fixture.airPodsTopic)"
            let lastResponse = "aabridge/bridge/last_response"
            try await Self.heardThenAway(observer, Fixture.airPods, state: Self.airPodsState, room: "bedroom")
            // An accessory that advertises proximity pairing has the controls once its model is known.
            await homeAssistant.waitForDevice(device) { $0["components"]?["reattach"] != nil }
            #expect(try homeAssistant.state(device, "lookalike") == "(none)")
            try await homeAssistant.press(device, "reattach")
            let refused = await observer.waitFor(lastResponse) { $0["request"] == "accessory/reattach" }
            #expect(refused?["status"] == "error" && refused?["transaction"] == "homeassistant", "\(String(describing: refused))")

            let hall = try Self.rotated(0x8F8F8F)
            try await Self.advertise(observer, from: hall, room: "hall", for: 2)
            await homeAssistant.waitForDevice(device) { $0["components"]?["lookalike"]?["options"] == ["(none)", .string(hall)] }
            try await homeAssistant.select(device, "lookalike", option: hall)
            await observer.waitFor("\(Self.airPodsState)/reattach") { $0["lookalike"] == .string(hall) }
            #expect(try homeAssistant.state(device, "lookalike") == hall)
            let count = observer.json(on: lastResponse).count
            let choices = observer.json(on: "\(Self.airPodsState)/reattach").count
            try await homeAssistant.press(device, "reattach")
            let pressed = await observer.waitFor(lastResponse, after: count) { $0["request"] == "accessory/reattach" }
            #expect(pressed?["status"] == "ok", "\(String(describing: pressed))")
            // (after: the choice was null before the look-alike was chosen too.)
            await observer.waitFor("\(Self.airPodsState)/reattach", after: choices) { $0["lookalike"] == .null }
            #expect(try homeAssistant.state(device, "lookalike") == "(none)")
            // Attached: no look-alike any more, so none offered.
            await homeAssistant.waitForDevice(device) { $0["components"]?["lookalike"]?["options"] == ["(none)"] }
            try await Self.advertisement(observer, from: hall, room: "hall")
            await observer.waitFor(Self.airPodsState, Self.attributed(hall, "reattached"))
        }
    }

    @Test("identity.reattach: ask only offers; off does not look")
    func askAndOff() async throws {
        for mode in ["ask", "off"] {
            let harness = try BridgeHarness(availabilityTimeoutSeconds: 1, identityExtra: "  reattach: \(mode)")
            defer { harness.removeDirectory() }
            try await harness.run { observer in
                try await Self.heardThenAway(observer, Fixture.airPods, state: Self.airPodsState, room: "bedroom")
                let morning = try Self.rotated(0x7E7E7E)
                try await Self.advertise(observer, from: morning, room: "bedroom", for: 6.5)
                _ = try await observer.request("health")
                #expect(!observer.json(on: Self.airPodsState).contains { $0["address"] == .string(morning) }, "\(mode)")
                if mode == "ask" {
                    await observer.waitFor(Self.lookalikes) { $0.arrayValue?.first?["address"] == .string(morning) }
                } else {
                    #expect(!observer.json(on: Self.lookalikes).contains { $0.arrayValue?.isEmpty == false }, "off lists nothing")
                }
            }
        }
    }

    @Test(
        "the pairing sighting counts: address, rssi, gateway, model and battery right after picker/select, and a rotation at once is followed"
    )
    func pairingThenImmediateRotation() async throws {
        try await withBridge { _, observer in
            _ = try await observer.request("picker/show", #""products":["AirPods Pro"]"#)
            try await Self.advertisement(observer, from: Self.bobs, room: "study", rssi: -61)
            await observer.waitFor("aabridge/bridge/picker") { $0["candidates"]?.arrayValue?.isEmpty == false }
            let selected = try await observer.request("picker/select", #""id":"\#(Self.bobs)","name":"Bob's AirPods""#)
            #expect(selected["status"] == "ok", "\(selected.serialized)")
            let state = await observer.waitFor(Self.bobsState) { $0["name"] == "Bob's AirPods" }
            #expect(state?["address"] == .string(Self.bobs))
            #expect(state?["rssi"] == -61 && state?["gateway"] == "study")
            #expect(state?["model"] == "AirPods Pro")
            #expect(
                state?["battery"] == ["left": 50, "left_charging": false],
                "the fixture says the left bud is at 50 %, not charging: \(String(describing: state))")

            // The pair rotates before it is heard again.
            let next = try Self.rotated(0x0F0F0F)
            let followed = Self.attributed(next, "followed")
            try await Self.advertise(observer, from: next, room: "study", for: 15) {
                observer.json(on: Self.bobsState).contains(where: followed)
            }
            #expect(await observer.waitFor(Self.bobsState, timeout: .seconds(2), followed) != nil)
        }
    }
}
