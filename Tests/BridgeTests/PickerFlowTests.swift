import Foundation
import MQTT
import TestSupport
import Testing

@testable import Bridge

/// The AccessorySetupKit picker driven over MQTT with a real advertisement.
@Suite("Picker over MQTT")
struct PickerFlowTests {
    static let event = "aabridge/bridge/event"
    static let picker = "aabridge/bridge/picker"

    /// A picker for the Acme headphones (confirmAuthorization, no auto_register) with
    /// D0:C3:D2:A1:B2:C3, "Acme Studio 2", discovered through gateway gw2.
    static func presentAcmeCandidate(_ observer: Observer) async throws {
        #expect(try await observer.request("picker/show", #""products":["Acme Studio Headphones"]"#)["status"] == "ok")
        try await observer.publish(
            "home/gw2/BTtoMQTT/D0C3D2A1B2C3",
            #"{"id":"D0:C3:D2:A1:B2:C3","name":"Acme Studio 2","rssi":-58,"servicedatauuid":"fe2c","servicedata":"00aabbcc"}"#)
        await observer.waitFor(Self.event) { $0["type"] == "accessoryDiscovered" }
    }

    @Test("show, a real AirPods advertisement, select with a name: events in order, auto-registered")
    func pickerSetup() async throws {
        try await withBridge { _, observer async throws in
            let shown = try await observer.request("picker/show", #""products":["AirPods Pro"],"timeout":"long""#)
            #expect(shown["status"] == "ok")
            let present = await observer.waitFor(Self.event) { $0["type"] == "pickerDidPresent" }
            #expect(present?["raw"] == 40)
            #expect(present?["accessory"] == .null)
            let presented = await observer.waitFor(Self.picker) { $0["state"] == "presented" }
            #expect(presented?["products"] == ["AirPods Pro"])
            #expect(presented?["expires_at"]?.stringValue != nil)

            // The gateway hears the AirPods twice: one candidate, one accessoryDiscovered.
            try await observer.publish(Fixture.advertisementTopic, Fixture.advertisementPayload)
            try await observer.publish(Fixture.advertisementTopic, Fixture.advertisementPayload)
            let discovered = await observer.waitFor(Self.event) { $0["type"] == "accessoryDiscovered" }
            #expect(discovered?["raw"] == 33)
            #expect(discovered?["accessory"]?["id"] == .string(Fixture.advertisementID))
            #expect(discovered?["accessory"]?["product"] == "AirPods Pro")
            let withCandidate = await observer.waitFor(Self.picker) { ($0["candidates"]?.arrayValue?.count ?? 0) > 0 }
            let candidate = withCandidate?["candidates"]?.arrayValue?.first
            #expect(candidate?["id"] == .string(Fixture.advertisementID))
            #expect(candidate?["product"] == "AirPods Pro")
            #expect(candidate?["rssi"] == -55)
            #expect(candidate?["gateway"] == "gw1")

            let selected = try await observer.request("picker/select", #""id":"\#(Fixture.advertisementID)","name":"Kitchen AirPods""#)
            #expect(selected["status"] == "ok")
            #expect(
                selected["data"] == [
                    "id": .string(Fixture.advertisementID), "name": "Kitchen AirPods", "product": "AirPods Pro", "state": "authorized",
                ])
            await observer.waitFor(Self.event) { $0["type"] == "pickerDidDismiss" }
            let types = observer.eventTypes
            #expect(types.filter { $0 == "accessoryDiscovered" }.count == 1, "once per accessory: \(types)")
            let setup = Array(types.drop { $0 != "pickerSetupPairing" })
            #expect(setup == ["pickerSetupPairing", "pickerSetupRename", "accessoryAdded", "pickerDidDismiss"], "\(types)")
            let events = observer.json(on: Self.event)
            let added = events.first { $0["type"] == "accessoryAdded" && $0["accessory"]?["id"] == .string(Fixture.advertisementID) }
            #expect(added?["accessory"]?["name"] == "Kitchen AirPods")
            #expect(events.first { $0["type"] == "pickerDidDismiss" }?["error"] == .null, "a successful setup is no error")
            #expect(events.filter { $0["type"]?.stringValue?.hasPrefix("picker") == true }.allSatisfy { $0["accessory"] == .null })
            await observer.waitFor(Self.picker) { $0["state"] == "idle" }

            // The product has auto_register: registered right after pairing, initial placement offHead.
            let topic = "aabridge/accessory/F1E2D3C4B5A6"
            let state = await observer.waitFor(topic) { $0["registration"] == "active" }
            #expect(state?["placement"] == "offHead")
            #expect(state?["capabilities"] == ["audioSwitching", "placement"])
            let current = try await observer.request("accessory/current", #""id":"\#(Fixture.advertisementID)""#)
            #expect(current["data"]?["configuration"]?["capabilities"] == ["audioSwitching", "placement"])
            // It was just heard: its availability topic says online (HA's availability needs it).
            await observer.waitFor("\(topic)/availability") { $0 == ["state": "online"] }
            let accessories = await observer.waitFor("aabridge/bridge/accessories") { ($0.arrayValue?.count ?? 0) == 4 }
            #expect(accessories?.arrayValue?.compactMap { $0["id"]?.stringValue }.contains(Fixture.advertisementID) == true)

            // Now authorized: heard again, it is no candidate of a new picker.
            #expect(try await observer.request("picker/show", #""products":["AirPods Pro"]"#)["status"] == "ok")
            try await observer.publish(Fixture.advertisementTopic, Fixture.advertisementPayload)
            _ = try await observer.request("health") // answered after the advertisement was handled
            #expect(observer.json(on: Self.picker).last?["candidates"] == [])
            #expect(observer.eventTypes.filter { $0 == "accessoryDiscovered" }.count == 1)
            #expect(try await observer.request("picker/dismiss")["status"] == "ok")
        }
    }

    @Test("sources at pairing: select with primary_source registers the AirPods with it; advertisements alone route the phone")
    func sourcesAtPairing() async throws {
        try await withBridge { _, observer async throws in
            #expect(try await observer.request("picker/show", #""products":["AirPods Pro"]"#)["status"] == "ok")
            try await observer.publish(Fixture.advertisementTopic, Fixture.advertisementPayload)
            await observer.waitFor(Self.picker) { ($0["candidates"]?.arrayValue?.count ?? 0) > 0 }
            let selected = try await observer.request(
                "picker/select",
                #""id":"\#(Fixture.advertisementID)","primary_source":"\#(Fixture.phone)","secondary_source":"\#(Fixture.laptop)""#)
            #expect(selected["status"] == "ok")
            let current = try await observer.request("accessory/current", #""id":"\#(Fixture.advertisementID)""#)
            #expect(current["data"]?["configuration"]?["primary_source"] == .string(Fixture.phone))
            #expect(current["data"]?["configuration"]?["secondary_source"] == .string(Fixture.laptop))
            // No firmware reports anything: the next advertisement says the left bud is in an ear.
            try await observer.publish(Fixture.advertisementTopic, Fixture.advertisementPayload)
            let route = await observer.waitFor("aabridge/source/\(Fixture.phoneTopic)/route") {
                $0["target"] == .string(Fixture.advertisementID)
            }
            #expect(route?["reason"] == "placement:inEar")
            let decision = await observer.waitFor("aabridge/accessory/F1E2D3C4B5A6/decision") { $0["source"] == .string(Fixture.phone) }
            #expect(decision?["reason"] == "placement:inEar")
        }
    }

    @Test("select with a name beyond rename's 1-128 characters, or a blank one: invalidRequest, the candidate stays")
    func selectNameRule() async throws {
        try await withBridge { _, observer async throws in
            #expect(try await observer.request("picker/show")["status"] == "ok")
            try await observer.publish(Fixture.advertisementTopic, Fixture.advertisementPayload)
            await observer.waitFor(Self.picker) { ($0["candidates"]?.arrayValue?.count ?? 0) > 0 }
            for name in [String(repeating: "x", count: 129), "   "] {
                let refused = try await observer.request("picker/select", #""id":"\#(Fixture.advertisementID)","name":"\#(name)""#)
                #expect(refused["error"]?["code"] == "invalidRequest")
                #expect(refused["error"]?["message"]?.stringValue?.contains("'name' must be 1-128 characters") == true)
            }
            let longest = String(repeating: "y", count: 128)
            let selected = try await observer.request("picker/select", #""id":"\#(Fixture.advertisementID)","name":"\#(longest)""#)
            #expect(selected["data"]?["name"] == .string(longest))
        }
    }

    @Test("primary_source on select for a product without auto_register: set up with it as its home source, not registered")
    func sourcesOfAnyProductAreHomeSources() async throws {
        try await withBridge { _, observer async throws in
            try await Self.presentAcmeCandidate(observer)
            // A secondary without a primary is refused before anything is looked at.
            let lonely = try await observer.request(
                "picker/select", #""id":"D0:C3:D2:A1:B2:C3","secondary_source":"\#(Fixture.phone)""#)
            #expect(lonely["error"]?["code"] == "invalidRequest")
            #expect(lonely["error"]?["message"]?.stringValue?.contains("secondary_source") == true)
            #expect(!observer.eventTypes.drop { $0 != "pickerDidPresent" }.contains("accessoryAdded"))
            let selected = try await observer.request(
                "picker/select", #""id":"D0:C3:D2:A1:B2:C3","primary_source":"\#(Fixture.phone)""#)
            #expect(selected["status"] == "ok")
            let state = await observer.waitFor("aabridge/accessory/D0C3D2A1B2C3") { $0["home_sources"] == [.string(Fixture.phone)] }
            #expect(state?["registration"] == "none", "only an auto_register product is registered at setup")
        }
    }

    @Test("a second picker/show while presented: pickerAlreadyActive; dismiss: userCancelled")
    func alreadyActiveAndCancel() async throws {
        try await withBridge { _, observer async throws in
            #expect(try await observer.request("picker/show")["status"] == "ok")
            let second = try await observer.request("picker/show", #""timeout":"short""#)
            #expect(second["status"] == "error")
            #expect(second["error"]?["code"] == "pickerAlreadyActive")
            #expect(second["error"]?["domain"] == "ASErrorDomain")
            #expect(second["error"]?["raw"] == 500)
            #expect(second["data"] == .object([]))
            #expect(observer.eventTypes.filter { $0 == "pickerDidPresent" }.count == 1)

            #expect(try await observer.request("picker/dismiss")["status"] == "ok")
            let dismissed = await observer.waitFor(Self.event) { $0["type"] == "pickerDidDismiss" }
            #expect(dismissed?["raw"] == 50)
            #expect(dismissed?["error"] == ["domain": "ASErrorDomain", "code": "userCancelled", "raw": 700])
            await observer.waitFor(Self.picker) { $0["state"] == "idle" }
        }
    }

    @Test("a short discovery timeout with nothing selected: pickerDidDismiss with discoveryTimeout")
    func discoveryTimeout() async throws {
        try await withBridge { _, observer async throws in
            let shown = try await observer.request("picker/show", #""timeout":1"#)
            #expect(shown["status"] == "ok")
            let presented = await observer.waitFor(Self.picker) { $0["state"] == "presented" }
            #expect(presented?["expires_at"]?.stringValue != nil)
            let dismissed = await observer.waitFor(Self.event, timeout: .seconds(4)) { $0["type"] == "pickerDidDismiss" }
            #expect(dismissed?["error"]?["code"] == "discoveryTimeout")
            #expect(dismissed?["error"]?["raw"] == 200)
            await observer.waitFor(Self.picker) { $0["state"] == "idle" }
        }
    }

    @Test("finish_discovery with no candidates dismisses with discoveryTimeout")
    func finishWithoutCandidates() async throws {
        try await withBridge { _, observer async throws in
            #expect(try await observer.request("picker/show", #""timeout":"unbounded""#)["status"] == "ok")
            let presented = await observer.waitFor(Self.picker) { $0["state"] == "presented" }
            #expect(presented?["expires_at"] == .null, "unbounded")
            #expect(try await observer.request("picker/finish_discovery")["status"] == "ok")
            let dismissed = await observer.waitFor(Self.event) { $0["type"] == "pickerDidDismiss" }
            #expect(dismissed?["error"]?["code"] == "discoveryTimeout")
        }
    }

    @Test("select of an id that is not a candidate: invalidRequest, the picker stays")
    func selectNonCandidate() async throws {
        try await withBridge { _, observer async throws in
            #expect(try await observer.request("picker/show")["status"] == "ok")
            let response = try await observer.request("picker/select", #""id":"01:02:03:04:05:06""#)
            #expect(response["status"] == "error")
            #expect(response["error"]?["code"] == "invalidRequest")
            #expect(response["error"]?["domain"] == "ASErrorDomain")
            #expect(response["error"]?["raw"] == 450)
            #expect(!observer.eventTypes.contains("pickerDidDismiss"))
            #expect(observer.json(on: Self.picker).last?["state"] == "presented")
            // Without a picker at all, select is refused too.
            #expect(try await observer.request("picker/dismiss")["status"] == "ok")
            let again = try await observer.request("picker/select", #""id":"01:02:03:04:05:06""#)
            #expect(again["status"] == "error")
        }
    }

    @Test("confirmAuthorization: added as awaitingAuthorization until accessory/authorize")
    func confirmAuthorization() async throws {
        try await withBridge { _, observer async throws in
            try await Self.presentAcmeCandidate(observer)
            let selected = try await observer.request("picker/select", #""id":"D0:C3:D2:A1:B2:C3""#)
            #expect(selected["data"]?["state"] == "awaitingAuthorization")
            #expect(selected["data"]?["name"] == "Acme Studio 2")
            // Not authorized yet: registering is refused.
            let early = try await observer.request("accessory/register", #""id":"D0:C3:D2:A1:B2:C3","capabilities":["audioSwitching"]"#)
            #expect(early["error"]?["code"] == "invalidRequest")
            let authorized = try await observer.request("accessory/authorize", #""id":"D0:C3:D2:A1:B2:C3""#)
            #expect(authorized["status"] == "ok")
            await observer.waitFor("aabridge/accessory/D0C3D2A1B2C3") { $0["state"] == "authorized" }
            let registered = try await observer.request(
                "accessory/register", #""id":"D0:C3:D2:A1:B2:C3","capabilities":["audioSwitching"]"#)
            #expect(registered["status"] == "ok")
        }
    }

    @Test("a clean stop with the picker presented leaves no stale presented picker retained")
    func stopWithPickerPresented() async throws {
        let harness = try BridgeHarness()
        defer { harness.removeDirectory() }
        let observer = try await Observer(broker: harness.broker)
        try await harness.start(observer: observer)
        #expect(try await observer.request("picker/show")["status"] == "ok")
        await observer.waitFor(Self.picker) { $0["state"] == "presented" }
        #expect(await harness.stop() == 0)
        await observer.waitFor("aabridge/bridge/state") { $0["state"] == "offline" }
        let late = try await Observer(broker: harness.broker)
        let retained = await late.waitFor(Self.picker)
        #expect(retained?["state"] == "idle", "\(retained.map(\.serialized) ?? "-")")
        // And the retained bridge state says offline, the info's session invalidated.
        #expect(await late.waitFor("aabridge/bridge/state")?["state"] == "offline")
        #expect(await late.waitFor("aabridge/bridge/info")?["session"] == "invalidated")
        #expect(observer.eventTypes.last == "invalidated", "\(observer.eventTypes)")
        await late.disconnect()
        await observer.disconnect()
    }
}
