import AccessoryKit
import JSON
import Testing

@testable import HomeAssistant

private typealias F = HomeAssistantFixtures

/// The validator must itself catch each broken rule, or the discovery tests prove nothing.
@Suite struct HomeAssistantRulesTests {
    let rules = HomeAssistantRules(discoveryPrefix: "homeassistant")
    let bridge = F.discovery.bridgeDevice()
    let accessory = F.discovery.accessoryDevice(F.fullStatus)

    /// The violations after `change` is applied to the accessory payload (the bridge published too).
    private func violations(_ change: (inout JSONValue) -> Void) -> [String] {
        var payload = accessory.payload
        change(&payload)
        return rules.validate([bridge, (accessory.topic, payload)]).map(\.description)
    }

    private func expectViolation(_ fragment: String, sourceLocation: SourceLocation = #_sourceLocation, _ change: (inout JSONValue) -> Void)
    {
        let found = violations(change)
        #expect(found.contains { $0.contains(fragment) }, "expected '\(fragment)' in \(found)", sourceLocation: sourceLocation)
    }

    @Test func validPayloadsPass() {
        #expect(rules.validate([bridge, accessory]).isEmpty)
    }

    @Test func requiredOptionsPerPlatform() {
        expectViolation("sensor requires state_topic") { $0.set(["components", "rssi", "state_topic"], nil) }
        expectViolation("binary_sensor requires state_topic") { $0.set(["components", "worn", "state_topic"], nil) }
        expectViolation("event requires event_types") { $0.set(["components", "decision", "event_types"], nil) }
        expectViolation("event_types") { $0.set(["components", "decision", "event_types"], []) }
        expectViolation("unique_id is required") { $0.set(["components", "rssi", "unique_id"], nil) }
        expectViolation("platform missing") { $0.set(["components", "rssi", "platform"], "thermostat") }
        var bridgePayload = bridge.payload
        bridgePayload.set(["components", "picker_show", "command_topic"], nil)
        #expect(rules.validate([(bridge.topic, bridgePayload)]).contains { $0.message.contains("button requires command_topic") })
    }

    @Test("a select option 'none' (Home Assistant reads it as no option) and a bad device_tracker are caught")
    func noneOptionAndTracker() {
        var bridgePayload = bridge.payload
        bridgePayload.set(["components", "pairing_candidate", "options"], ["None", "AirPods (A1:B2:C3:D4:E5:F6)"])
        #expect(rules.validate([(bridge.topic, bridgePayload)]).contains { $0.message.contains("reads as no option") })
        expectViolation("reads as no option") { $0.set(["components", "preferred_source", "options"], ["none"]) }
        expectViolation("source_type") { $0.set(["components", "presence", "source_type"], "radar") }
        expectViolation("payload_home equals payload_not_home") { $0.set(["components", "presence", "payload_not_home"], "home") }
        expectViolation("device_tracker requires state_topic") { $0.set(["components", "presence", "state_topic"], nil) }
    }

    @Test func deviceOriginAndComponents() {
        expectViolation("needs identifiers or connections") {
            $0.set(["device", "identifiers"], nil)
            $0.set(["device", "connections"], nil)
        }
        expectViolation("[type, value] pair") { $0.set(["device", "connections"], [["bluetooth"]]) }
        expectViolation("origin.name") { $0.set(["origin", "name"], nil) }
        expectViolation("via_device") { $0.set(["device", "via_device"], "nobody") }
        expectViolation("components: missing") { $0.set(["components"], .object([])) }
    }

    @Test func uniqueIDsAcrossPayloads() {
        let copy = (F.discovery.removal(of: F.basicID), accessory.payload)
        let found = rules.validate([bridge, accessory, copy]).map(\.message)
        #expect(found.contains { $0.contains("unique_id aabridge_A1B2C3D4E5F6_placement also used") })
        #expect(found.contains { $0.contains("device identifier aabridge_A1B2C3D4E5F6 also used") })
    }

    @Test func topicsAndObjectIDs() {
        let bad = rules.validate([bridge, ("homeassistant/device/aabridge A1/config", accessory.payload)]).map(\.message)
        #expect(bad.contains { $0.contains("object id") })
        let misplaced = rules.validate([bridge, ("homeassistant/sensor/aabridge_A1/config", accessory.payload)]).map(\.message)
        #expect(misplaced.contains { $0.contains("not <prefix>/device/<object_id>/config") })
        expectViolation("wildcard") { $0.set(["components", "rssi", "state_topic"], "aabridge/accessory/+") }
        expectViolation("empty level") { $0.set(["components", "rssi", "state_topic"], "aabridge//x") }
        expectViolation("component id") {
            guard case .object(var pairs)? = $0["components"] else { return }
            pairs[0].0 = "place ment"
            $0.set(["components"], .object(pairs))
        }
    }

    @Test func abbreviations() {
        expectViolation("mixes abbreviations and full key names") { $0.rename(["components", "rssi"], "platform", to: "p") }
        expectViolation("unknown or undocumented key stat_tpc") { $0.rename(["components", "rssi"], "state_topic", to: "stat_tpc") }
        expectViolation("unknown or undocumented key colour") { $0.set(["components", "rssi", "colour"], "red") }
        // A payload entirely in abbreviations is as valid as one in full names.
        var short = accessory.payload
        short.abbreviate()
        #expect(rules.validate([bridge, (accessory.topic, short)]).isEmpty)
        #expect(short["cmps"] != nil && short["components"] == nil)
    }

    @Test func entityRules() {
        expectViolation("options need device_class enum") { $0.set(["components", "placement", "device_class"], nil) }
        expectViolation("an enum sensor needs a non-empty list") { $0.set(["components", "placement", "options"], nil) }
        expectViolation("is invalid for sensor") { $0.set(["components", "rssi", "entity_category"], "config") }
        expectViolation("signal_strength sensors use unit") { $0.set(["components", "rssi", "unit_of_measurement"], "%") }
        expectViolation("battery sensors use unit %") { $0.set(["components", "battery_left", "unit_of_measurement"], nil) }
        expectViolation("is not a binary_sensor device class") { $0.set(["components", "worn", "device_class"], "worn") }
        expectViolation("payload_on equals payload_off") { $0.set(["components", "worn", "payload_off"], "ON") }
        expectViolation("unbalanced") { $0.set(["components", "rssi", "value_template"], "{{ value_json.rssi }") }
        expectViolation("event_type") { $0.set(["components", "decision", "value_template"], "{{ value_json.action }}") }
    }

    @Test func availabilityRules() {
        expectViolation("topic is required") {
            $0.set(["components", "rssi", "availability"], [["value_template": "{{ value_json.state }}"]])
        }
        expectViolation("must be all, any or latest") { $0.set(["components", "rssi", "availability_mode"], "both") }
        expectViolation("without availability") { $0.set(["components", "rssi", "availability"], nil) }
        expectViolation("payload_available equals") {
            $0.set(
                ["components", "rssi", "availability"],
                [["topic": "aabridge/bridge/state", "payload_available": "x", "payload_not_available": "x"]])
        }
    }
}

extension JSONValue {
    /// Sets (or with nil removes) the value at a path of object keys, keeping key order.
    mutating func set(_ path: [String], _ value: JSONValue?) {
        guard let key = path.first, case .object(var pairs) = self else { return }
        let index = pairs.firstIndex { $0.0 == key }
        if path.count == 1 {
            switch (index, value) {
            case (let index?, let value?): pairs[index].1 = value
            case (let index?, nil): pairs.remove(at: index)
            case (nil, let value?): pairs.append((key, value))
            case (nil, nil): break
            }
        } else if let index {
            pairs[index].1.set(Array(path.dropFirst()), value)
        }
        self = .object(pairs)
    }

    /// Renames a key of the object at `path`.
    mutating func rename(_ path: [String], _ key: String, to newKey: String) {
        guard let object = path.isEmpty ? self : path.reduce(Optional(self), { $0?[$1] }), case .object(var pairs) = object else { return }
        if let index = pairs.firstIndex(where: { $0.0 == key }) { pairs[index].0 = newKey }
        if path.isEmpty { self = .object(pairs) } else { set(path, .object(pairs)) }
    }

    /// Every key replaced by its documented abbreviation, recursively (component ids stay).
    mutating func abbreviate(componentIDs: Bool = false) {
        switch self {
        case .object(let pairs):
            self = .object(
                pairs.map { key, value in
                    var value = value
                    value.abbreviate(componentIDs: key == "components")
                    let short = componentIDs ? key : (HomeAssistantRules.abbreviations[key] ?? key)
                    return (short, value)
                })
        case .array(let values):
            self = .array(
                values.map {
                    var value = $0; value.abbreviate(); return value
                })
        default: break
        }
    }
}
