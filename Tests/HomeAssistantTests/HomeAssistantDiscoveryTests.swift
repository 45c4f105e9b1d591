import AccessoryKit
import Bridge
import Configuration
import JSON
import Testing

@testable import HomeAssistant

private typealias F = HomeAssistantFixtures

@Suite struct HomeAssistantDiscoveryTests {
    let rules = HomeAssistantRules(discoveryPrefix: "homeassistant")

    @Test func everyPayloadFollowsHomeAssistantsRules() {
        let messages = F.discovery.allDevices(F.allStatuses)
        #expect(messages.count == 1 + F.allStatuses.count)
        let violations = rules.validate(messages)
        #expect(violations.isEmpty, "\(violations.map(\.description).joined(separator: "\n"))")
    }

    @Test func topicsAndObjectIDs() {
        #expect(F.discovery.accessoryDevice(F.fullStatus).topic == "homeassistant/device/aabridge_A1B2C3D4E5F6/config")
        #expect(F.discovery.bridgeDevice().topic == "homeassistant/device/aabridge_bridge_aabridge/config")
        #expect(F.discovery.removal(of: F.budsID) == F.discovery.accessoryDevice(F.fullStatus).topic)
        let nested = HomeAssistantDiscovery(discoveryPrefix: "ha/discovery", baseTopic: "home/aa.bridge 1", version: BridgeModule.version)
        #expect(nested.bridgeObjectID == "aabridge_bridge_home_aa_bridge_1")
        #expect(nested.bridgeDevice().topic == "ha/discovery/device/aabridge_bridge_home_aa_bridge_1/config")
        #expect(rules(nested).validate([nested.bridgeDevice()]).isEmpty)
    }

    private func rules(_ discovery: HomeAssistantDiscovery) -> HomeAssistantRules {
        HomeAssistantRules(discoveryPrefix: discovery.discoveryPrefix)
    }

    @Test("the device's model is the decoded model once heard, the product before; a new model republishes discovery")
    func deviceModel() {
        var status = F.fullStatus
        status.model = nil
        #expect(F.discovery.accessoryDevice(status).payload["device"]?["model"] == .string(status.accessory.product))
        var tracker = HomeAssistantDiscoveryTracker(discovery: F.discovery)
        #expect(tracker.changed(status) != nil)
        status.model = "AirPods Max"
        let republished = tracker.changed(status)
        #expect(republished?.payload["device"]?["model"] == "AirPods Max")
        #expect(tracker.changed(status) == nil, "unchanged: not republished")
    }

    @Test func fullAccessoryDevice() throws {
        let (_, payload) = F.discovery.accessoryDevice(F.fullStatus)
        #expect(
            F.componentIDs(payload) == [
                "placement", "worn", "primary_source", "secondary_source", "routes", "decision", "registration",
                "battery_left", "battery_left_charging", "battery_right", "battery_right_charging", "battery_case",
                "battery_case_charging", "rssi", "room", "presence", "address", "identity", "last_error",
                // The controls (HomeAssistantControlsTests): every one a request of the request API.
                "name", "remove", "register", "invalidate", "preferred_source", "home_source_address", "alias", "lookalike",
                "reattach", "irk", "encryption_key",
            ])
        #expect(F.uniqueIDs(payload).allSatisfy { $0.hasPrefix("aabridge_A1B2C3D4E5F6_") })
        let device = try #require(payload["device"])
        #expect(
            device == [
                "identifiers": ["aabridge_A1B2C3D4E5F6"],
                "connections": [["bluetooth", "A1:B2:C3:D4:E5:F6"]],
                "name": "Alice's AirPods",
                "manufacturer": "Apple",
                "model": "AirPods Pro (2nd generation)",
                "model_id": "inEarBud",
                "via_device": "aabridge_bridge_aabridge",
            ])
        #expect(payload["origin"] == ["name": "aabridge", "sw_version": .string(BridgeModule.version)])

        let placement = try #require(payload["components"]?["placement"])
        #expect(placement["platform"] == "sensor")
        #expect(placement["device_class"] == "enum")
        #expect(placement["state_topic"] == "aabridge/accessory/A1B2C3D4E5F6")
        #expect(placement["options"] == ["inEar", "onHead", "overTheEar", "offHead"])
        #expect(placement["availability_mode"] == "all")
        #expect(
            placement["availability"] == [
                [
                    "topic": "aabridge/bridge/state", "value_template": "{{ value_json.state }}",
                    "payload_available": "online", "payload_not_available": "offline",
                ],
                [
                    "topic": "aabridge/accessory/A1B2C3D4E5F6/availability", "value_template": "{{ value_json.state }}",
                    "payload_available": "online", "payload_not_available": "offline",
                ],
            ])

        let worn = try #require(payload["components"]?["worn"])
        #expect(worn["platform"] == "binary_sensor")
        #expect(worn["device_class"] == "occupancy")

        let decision = try #require(payload["components"]?["decision"])
        #expect(decision["platform"] == "event")
        #expect(decision["state_topic"] == "aabridge/accessory/A1B2C3D4E5F6/decision")
        #expect(decision["event_types"] == ["route", "release"])
        #expect(decision["value_template"]?.stringValue?.contains("'event_type': value_json.action") == true)
        // Only the bridge's availability: a release because the accessory went offline must arrive.
        #expect(decision["availability"]?.arrayValue?.count == 1)

        let rssi = try #require(payload["components"]?["rssi"])
        #expect(rssi["device_class"] == "signal_strength")
        #expect(rssi["unit_of_measurement"] == "dBm")
        #expect(rssi["entity_category"] == "diagnostic")
        let lastError = try #require(payload["components"]?["last_error"])
        #expect(lastError["entity_category"] == "diagnostic")
        // The bridge's own records: available with the bridge, whether or not the accessory is heard.
        #expect(lastError["availability"] == decision["availability"])
        #expect(payload["components"]?["registration"]?["availability"] == decision["availability"])
        #expect(lastError["availability_mode"] == nil)
        #expect(payload["components"]?["battery_case"]?["value_template"]?.stringValue?.contains("'case'") == true)
    }

    @Test func withoutBatteryOrAudioSwitching() {
        let (_, payload) = F.discovery.accessoryDevice(F.bareStatus)
        // Registered without audioSwitching: the home source controls all the same (household.md:
        // with or without `sources:`, and whatever the registration; they take effect once it
        // takes sources).
        #expect(
            F.componentIDs(payload) == [
                "placement", "worn", "registration", "rssi", "room", "presence", "address", "identity", "last_error",
                "name", "remove", "register", "invalidate", "preferred_source", "home_source_address", "alias", "irk", "encryption_key",
            ])
        // No company identifier in the descriptor: no manufacturer is made up.
        #expect(payload["device"]?["manufacturer"] == nil)
        #expect(payload["device"]?["model"] == "Acme Studio")
    }

    @Test func placementCapabilityOff() {
        let (_, payload) = F.discovery.accessoryDevice(F.switchingOnlyStatus)
        #expect(
            F.componentIDs(payload) == [
                "primary_source", "secondary_source", "routes", "decision", "registration", "battery", "battery_charging", "rssi",
                "room", "presence", "address", "identity", "last_error",
                // No model decoded and no look-alikes: no re-attach controls.
                "name", "remove", "register", "invalidate", "preferred_source", "home_source_address", "alias", "irk",
                "encryption_key",
            ])
        #expect(payload["device"]?["manufacturer"] == nil)
    }

    @Test func unregisteredAccessoryUsesTheProductsCapabilities() {
        let (_, payload) = F.discovery.accessoryDevice(F.unregisteredStatus)
        #expect(F.componentIDs(payload).contains("placement"))
        #expect(F.componentIDs(payload).contains("decision"))
        // A product no longer configured: only what the status says.
        var orphan = F.unregisteredStatus
        orphan.accessory.product = "Gone"
        let orphanPayload = F.discovery.accessoryDevice(orphan).payload
        // No product: nothing to register with, so only rename, remove, the home sources, the
        // alias and the keys.
        #expect(
            F.componentIDs(orphanPayload) == [
                "registration", "rssi", "room", "presence", "address", "identity", "last_error", "name", "remove", "preferred_source",
                "home_source_address", "alias", "irk", "encryption_key",
            ])
        #expect(orphanPayload["device"]?["model"] == "Gone")
        #expect(rules.validate([F.discovery.bridgeDevice(), (F.discovery.removal(of: orphan.accessory.id), orphanPayload)]).isEmpty)
    }

    @Test func renameKeepsUniqueIDsAndUpdatesTheName() {
        var renamed = F.fullStatus
        renamed.accessory.displayName = "Bob's AirPods"
        let before = F.discovery.accessoryDevice(F.fullStatus)
        let after = F.discovery.accessoryDevice(renamed)
        #expect(after.topic == before.topic)
        #expect(F.uniqueIDs(after.payload) == F.uniqueIDs(before.payload))
        #expect(after.payload["device"]?["identifiers"] == before.payload["device"]?["identifiers"])
        #expect(after.payload["device"]?["name"] == "Bob's AirPods")
        #expect(F.discovery.discoveryKey(renamed) != F.discovery.discoveryKey(F.fullStatus))
    }

    @Test func uniqueIDsAreStableAcrossInstances() {
        // A restart builds a new value from the same configuration.
        let restarted = HomeAssistantDiscovery(
            baseTopic: "aabridge", products: [F.basic, F.buds, F.studio], sources: F.discovery.sources, version: BridgeModule.version)
        for status in F.allStatuses {
            #expect(F.uniqueIDs(restarted.accessoryDevice(status).payload) == F.uniqueIDs(F.discovery.accessoryDevice(status).payload))
        }
        #expect(restarted.bridgeDevice().payload == F.discovery.bridgeDevice().payload)
    }

    @Test func discoveryKeyIgnoresStateButNotShape() {
        let key = F.discovery.discoveryKey(F.fullStatus)
        var moved = F.fullStatus
        moved.rssi = -90
        moved.gateway = "bedroom"
        moved.worn = false
        moved.routes = []
        moved.available = false
        moved.battery = Battery(left: 10, right: 11, chargingCase: 12)
        moved.lastError = AccessoryControlDevice.Error(.unknown, operation: .update, message: "x")
        #expect(F.discovery.discoveryKey(moved) == key)

        var lostCase = F.fullStatus
        lostCase.battery = Battery(left: 80, right: 75)
        #expect(F.discovery.discoveryKey(lostCase) != key)
        var reregistered = F.fullStatus
        reregistered.registration?.configuration = .init(deviceCapabilities: [.audioSwitching])
        #expect(F.discovery.discoveryKey(reregistered) != key)
        var otherProduct = F.fullStatus
        otherProduct.accessory.product = F.studio.name
        #expect(F.discovery.discoveryKey(otherProduct) != key)
    }

    @Test func bridgeDevice() throws {
        let (topic, payload) = F.discovery.bridgeDevice()
        #expect(topic == "homeassistant/device/aabridge_bridge_aabridge/config")
        #expect(payload["device"]?["identifiers"] == ["aabridge_bridge_aabridge"])
        #expect(payload["device"]?["name"] == "aabridge")
        #expect(
            F.componentIDs(payload) == [
                "connection", "picker_show", "picker", "session", "accessories",
                "picker_dismiss", "pairing_candidate", "pairing_name", "pair", "source_name", "last_response",
            ])
        let connection = try #require(payload["components"]?["connection"])
        #expect(connection["platform"] == "binary_sensor")
        #expect(connection["device_class"] == "connectivity")
        #expect(connection["state_topic"] == "aabridge/bridge/state")
        #expect(connection["payload_on"] == "online")
        #expect(connection["payload_off"] == "offline")
        // The entity that shows the bridge offline must not itself become unavailable.
        #expect(connection["availability"] == nil)
        let button = try #require(payload["components"]?["picker_show"])
        #expect(button["platform"] == "button")
        #expect(button["command_topic"] == "aabridge/bridge/request/picker/show")
        // The request the button sends is one the bridge accepts: a JSON object, all products,
        // for homeassistant.picker_timeout_s (default 120 s, not the request's 30 s).
        let press = try JSONParser.parse(try #require(button["payload_press"]?.stringValue))
        #expect(press == ["timeout": 120, "transaction": "homeassistant"])
        let other = HomeAssistantDiscovery(baseTopic: "upstairs", version: BridgeModule.version).bridgeDevice().payload
        #expect(other["device"]?["name"] == "aabridge upstairs")
    }

    @Test func jsonRoundTrip() throws {
        for (_, payload) in F.discovery.allDevices(F.allStatuses) {
            let parsed = try JSONParser.parse(payload.serialized)
            #expect(parsed == payload)
            #expect(parsed.serialized == payload.serialized)
        }
    }

    @Test func namesNeverBecomeTopicLevels() {
        var hostile = F.fullStatus
        hostile.accessory.displayName = "a/b+#"
        let (topic, payload) = F.discovery.accessoryDevice(hostile)
        let allTopics = [topic] + F.topics(in: payload)
        #expect(allTopics.count > 10)
        for topic in allTopics {
            #expect(!topic.contains("a/b"))
            #expect(!topic.contains("+"))
            #expect(!topic.contains("#"))
        }
        #expect(payload["device"]?["name"] == "a/b+#")
        #expect(rules.validate([F.discovery.bridgeDevice(), (topic, payload)]).isEmpty)
        #expect(F.discovery.removal(of: hostile.accessory.id) == topic)
    }

    @Test func enumOptionsCoverEveryPublishedValue() throws {
        let payload = F.discovery.accessoryDevice(F.fullStatus).payload
        let placement = try #require(payload["components"]?["placement"])
        let options = Set(try #require(placement["options"]?.arrayValue).compactMap(\.stringValue))
        #expect(options == Set(AccessoryControlDevice.Placement.allCases.map(\.rawValue)))
        // null (no placement yet) maps to None explicitly: HA enum sensors reject values
        // outside options, and None is unknown.
        let template = try #require(placement["value_template"]?.stringValue)
        #expect(template.hasSuffix("else None }}"))
        for value in options { #expect(template.contains("'\(value)'")) }

        let registration = try #require(payload["components"]?["registration"])
        let registrationOptions = Set(try #require(registration["options"]?.arrayValue).compactMap(\.stringValue))
        for status in F.allStatuses { #expect(registrationOptions.contains(status.registrationState)) }
        #expect(registrationOptions == ["active", "invalidated", "none"])

        let picker = try #require(F.discovery.bridgeDevice().payload["components"]?["picker"])
        #expect(picker["options"] == ["idle", "presented"])
        #expect(Payloads().picker(nil)["state"] == "idle")
    }

    @Test func birthMessage() {
        #expect(F.discovery.statusTopic == "homeassistant/status")
        #expect(F.discovery.isBirthMessage(Array("online".utf8)))
        #expect(F.discovery.isBirthMessage(Array("Online\n".utf8)))
        #expect(!F.discovery.isBirthMessage(Array("offline".utf8)))
        #expect(!F.discovery.isBirthMessage(Array("".utf8)))
        #expect(!F.discovery.isBirthMessage(Array("{\"state\":\"online\"}".utf8)))
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            let delay = F.discovery.republishDelay(using: &generator)
            #expect(delay >= .seconds(1) && delay <= .seconds(5))
        }
    }

    @Test func fromConfiguration() throws {
        var configuration = BridgeConfiguration(hostname: "test")
        configuration.mqtt.baseTopic = "aa"
        configuration.homeAssistant = HomeAssistantConfiguration(discoveryPrefix: "hass", statusTopic: "hass/status")
        configuration.products = [ProductConfiguration(product: F.buds)]
        let discovery = HomeAssistantDiscovery(configuration: configuration, version: BridgeModule.version)
        #expect(discovery.statusTopic == "hass/status")
        let (topic, payload) = discovery.accessoryDevice(F.fullStatus)
        #expect(topic == "hass/device/aabridge_A1B2C3D4E5F6/config")
        #expect(payload["components"]?["placement"]?["state_topic"] == "aa/accessory/A1B2C3D4E5F6")
        #expect(payload["device"]?["via_device"] == "aabridge_bridge_aa")
        #expect(payload["device"]?["manufacturer"] == "Apple")
        #expect(HomeAssistantRules(discoveryPrefix: "hass").validate(discovery.allDevices(F.allStatuses)).isEmpty)
    }

    @Test("Show picker presents the picker for homeassistant.picker_timeout_s")
    func pickerTimeout() throws {
        var configuration = BridgeConfiguration(hostname: "test")
        configuration.homeAssistant.pickerTimeoutSeconds = 300
        let discovery = HomeAssistantDiscovery(configuration: configuration, version: BridgeModule.version)
        let button = try #require(discovery.bridgeDevice().payload["components"]?["picker_show"])
        let press = try JSONParser.parse(try #require(button["payload_press"]?.stringValue))
        #expect(press["timeout"] == 300)
        #expect(HomeAssistantDiscovery(baseTopic: "aabridge", version: "1").pickerTimeoutSeconds == 120)
    }

    @Test("a device_tracker per accessory: home while available, room (mapped) and gateway as attributes")
    func presence() throws {
        let discovery = HomeAssistantDiscovery(
            baseTopic: "aabridge", products: [F.buds], rooms: ["esp32-3f2a": "Kitchen", "q\"}}": "Den {{ x }}"],
            version: BridgeModule.version)
        let payload = discovery.accessoryDevice(F.fullStatus).payload
        #expect(rules.validate([discovery.bridgeDevice(), (discovery.accessoryDevice(F.fullStatus).topic, payload)]).isEmpty)
        let tracker = try #require(payload["components"]?["presence"])
        #expect(tracker["platform"] == "device_tracker")
        #expect(tracker["source_type"] == "bluetooth_le")
        // No name of its own: the entity id is the device's (device_tracker.alice_s_airpods).
        #expect(tracker["name"] == .null)
        #expect(tracker["state_topic"] == "aabridge/accessory/A1B2C3D4E5F6")
        // Away, not unavailable, while the accessory is out of range: the bridge alone decides.
        #expect(
            tracker["availability"] == [
                [
                    "topic": "aabridge/bridge/state", "value_template": "{{ value_json.state }}",
                    "payload_available": "online", "payload_not_available": "offline",
                ]
            ])
        // What the templates render: HomeAssistantTemplateTests.presenceAndRooms.
        #expect(tracker["json_attributes_topic"] == "aabridge/accessory/A1B2C3D4E5F6")
    }
}
