import JSON

@testable import HomeAssistant

/// Home Assistant's documented rules for device-based MQTT discovery, as a checker for the
/// payloads aabridge publishes (test target only: the product never validates itself).
///
/// What it encodes, from Home Assistant's MQTT integration documentation:
/// - topic `<prefix>/device/<object_id>/config`, object id only `[a-zA-Z0-9_-]`;
/// - a payload with `device`/`dev` (identifiers or connections), `origin`/`o` (name) and
///   `components`/`cmps`, each component with `platform`/`p` and a `unique_id`;
/// - required options per platform (sensor and binary_sensor: state_topic; event:
///   state_topic and event_types; button, switch and text: command_topic; select:
///   command_topic and options), known options only. The control platforms' options are
///   those of https://www.home-assistant.io/integrations/button.mqtt/, .../select.mqtt/,
///   .../text.mqtt/ and .../switch.mqtt/ ("Configuration Variables");
/// - select: a non-empty list of unique string options; text: `min` <= `max` (0-255),
///   `mode` text or password; switch: distinct payload_on/payload_off and state_on/state_off;
///   entity_category `config` only on controls (button, select, switch, text);
/// - abbreviations only where documented, and not mixed with full names in one payload;
/// - entity_category, device_class, state_class and unit rules of the entity platforms;
/// - `availability` a list of entries with a `topic`, `availability_mode` all/any/latest;
/// - topics a publisher may use (no `+`/`#`, no empty topic), balanced templates;
/// - unique_id unique across all payloads, device identifiers unique across devices,
///   `via_device` naming a device that is published.
struct HomeAssistantRules {
    /// One broken rule, with where it was found.
    struct Violation: Hashable, CustomStringConvertible {
        var path: String
        var message: String
        var description: String { "\(path): \(message)" }
    }

    /// Full name -> documented abbreviation, for the keys these payloads may use.
    static let abbreviations: [String: String] = [
        "device": "dev", "origin": "o", "components": "cmps", "platform": "p",
        "unique_id": "uniq_id", "state_topic": "stat_t", "value_template": "val_tpl",
        "command_topic": "cmd_t", "availability": "avty", "availability_mode": "avty_mode",
        "topic": "t", "payload_available": "pl_avail", "payload_not_available": "pl_not_avail",
        "device_class": "dev_cla", "entity_category": "ent_cat", "options": "ops",
        "event_types": "evt_typ", "payload_on": "pl_on", "payload_off": "pl_off",
        "payload_press": "pl_prs", "unit_of_measurement": "unit_of_meas", "state_class": "stat_cla",
        "json_attributes_topic": "json_attr_t", "json_attributes_template": "json_attr_tpl",
        "icon": "ic", "identifiers": "ids", "connections": "cns", "manufacturer": "mf",
        "model": "mdl", "model_id": "mdl_id", "sw_version": "sw", "hw_version": "hw",
        "serial_number": "sn", "suggested_area": "sa", "configuration_url": "cu",
        "support_url": "url", "qos": "qos", "name": "name", "via_device": "via_device",
        "availability_template": "avty_tpl", "availability_topic": "avty_t", "encoding": "e",
        "enabled_by_default": "en", "expire_after": "exp_aft", "force_update": "frc_upd",
        "retain": "ret", "off_delay": "off_dly", "suggested_display_precision": "sug_dsp_prc",
        "command_template": "cmd_tpl", "optimistic": "opt", "mode": "mode", "min": "min", "max": "max",
        "pattern": "ptrn", "state_on": "stat_on", "state_off": "stat_off",
        "payload_home": "pl_home", "payload_not_home": "pl_not_home", "payload_reset": "pl_rst", "source_type": "src_type",
    ]

    /// Full names by abbreviation.
    static let expansions: [String: String] = Dictionary(abbreviations.map { ($1, $0) }, uniquingKeysWith: { a, _ in a })

    static let entityCommon: Set<String> = [
        "platform", "name", "unique_id", "availability", "availability_mode", "availability_template",
        "availability_topic", "payload_available", "payload_not_available", "entity_category", "icon",
        "enabled_by_default", "json_attributes_topic", "json_attributes_template", "qos", "encoding",
    ]
    /// Options each platform accepts (beyond `entityCommon`), and the ones it requires.
    static let platformOptions: [String: (allowed: Set<String>, required: Set<String>)] = [
        "sensor": (
            [
                "state_topic", "value_template", "device_class", "options", "unit_of_measurement",
                "state_class", "expire_after", "force_update", "suggested_display_precision",
            ], ["state_topic"]
        ),
        "binary_sensor": (
            [
                "state_topic", "value_template", "device_class", "payload_on", "payload_off",
                "expire_after", "force_update", "off_delay",
            ], ["state_topic"]
        ),
        "event": (["state_topic", "value_template", "device_class", "event_types"], ["state_topic", "event_types"]),
        "button": (["command_topic", "command_template", "payload_press", "device_class", "retain"], ["command_topic"]),
        "select": (
            ["command_topic", "command_template", "options", "state_topic", "value_template", "optimistic", "retain"],
            ["command_topic", "options"]
        ),
        "text": (
            [
                "command_topic", "command_template", "state_topic", "value_template", "min", "max", "mode", "pattern",
                "retain",
            ], ["command_topic"]
        ),
        "switch": (
            [
                "command_topic", "command_template", "state_topic", "value_template", "payload_on", "payload_off",
                "state_on", "state_off", "optimistic", "device_class", "retain",
            ], ["command_topic"]
        ),
        // https://www.home-assistant.io/integrations/device_tracker.mqtt/
        "device_tracker": (
            ["state_topic", "value_template", "payload_home", "payload_not_home", "payload_reset", "source_type"],
            ["state_topic"]
        ),
    ]
    /// `source_type` values Home Assistant's device_tracker accepts.
    static let sourceTypes: Set<String> = ["gps", "router", "bluetooth", "bluetooth_le"]
    /// The platforms that send commands: the only ones `entity_category: config` suits.
    static let controlPlatforms: Set<String> = ["button", "select", "switch", "text"]
    static let deviceClasses: [String: Set<String>] = [
        "sensor": ["enum", "battery", "signal_strength", "timestamp", "duration", "temperature", "voltage"],
        "binary_sensor": ["occupancy", "connectivity", "problem", "presence", "battery", "battery_charging", "plug", "running"],
        "event": ["button", "doorbell", "motion"],
        "button": ["identify", "restart", "update"],
        "switch": ["outlet", "switch"],
    ]
    static let deviceKeys: Set<String> = [
        "identifiers", "connections", "name", "manufacturer", "model", "model_id", "sw_version", "hw_version",
        "serial_number", "suggested_area", "via_device", "configuration_url",
    ]
    static let originKeys: Set<String> = ["name", "sw_version", "support_url"]
    static let availabilityKeys: Set<String> = ["topic", "value_template", "payload_available", "payload_not_available"]
    /// Options that may also sit at the root, shared by every component.
    static let sharedRootKeys: Set<String> = ["state_topic", "command_topic", "availability", "availability_mode", "qos", "encoding"]

    let discoveryPrefix: String

    /// Every violation in a set of discovery messages (published together), empty when valid.
    func validate(_ messages: [(topic: String, payload: JSONValue)]) -> [Violation] {
        var violations: [Violation] = []
        var uniqueIDs: [String: String] = [:]
        var deviceIDs: [String: String] = [:]
        var viaDevices: [(String, String)] = []
        for (topic, payload) in messages {
            let result = validate(topic: topic, payload: payload)
            violations += result.violations
            for id in result.uniqueIDs {
                if let other = uniqueIDs[id] {
                    violations.append(Violation(path: topic, message: "unique_id \(id) also used in \(other)"))
                }
                uniqueIDs[id] = topic
            }
            for id in result.deviceIDs {
                if let other = deviceIDs[id] {
                    violations.append(Violation(path: topic, message: "device identifier \(id) also used in \(other)"))
                }
                deviceIDs[id] = topic
            }
            if let via = result.viaDevice { viaDevices.append((topic, via)) }
        }
        for (topic, via) in viaDevices where deviceIDs[via] == nil {
            violations.append(Violation(path: topic, message: "via_device \(via) is no published device's identifier"))
        }
        return violations
    }

    /// The violations of one message, with the ids it declares.
    func validate(
        topic: String, payload: JSONValue
    ) -> (violations: [Violation], uniqueIDs: [String], deviceIDs: [String], viaDevice: String?) {
        var context = Context(topic: topic)
        checkTopic(topic, &context)
        guard case .object(let root) = payload else {
            context.fail("payload", "is not a JSON object")
            return (context.violations, [], [], nil)
        }
        let rootKeys = context.expand(root, at: "payload", allowed: Set(["device", "origin", "components"]).union(Self.sharedRootKeys))
        var deviceIDs: [String] = []
        var viaDevice: String?
        if case .object(let device)? = rootKeys["device"] {
            let keys = context.expand(device, at: "device", allowed: Self.deviceKeys)
            (deviceIDs, viaDevice) = checkDevice(keys, &context)
        } else {
            context.fail("device", "missing or not an object")
        }
        if case .object(let origin)? = rootKeys["origin"] {
            let keys = context.expand(origin, at: "origin", allowed: Self.originKeys)
            if keys["name"]?.stringValue?.isEmpty ?? true { context.fail("origin.name", "required") }
        } else {
            context.fail("origin", "missing or not an object")
        }
        var uniqueIDs: [String] = []
        if case .object(let components)? = rootKeys["components"], !components.isEmpty {
            for (id, component) in components {
                if !Self.isObjectID(id) { context.fail("components.\(id)", "component id outside [a-zA-Z0-9_-]") }
                guard case .object(let pairs) = component else {
                    context.fail("components.\(id)", "not an object")
                    continue
                }
                if let unique = checkComponent(id, pairs, root: rootKeys, &context) { uniqueIDs.append(unique) }
            }
        } else {
            context.fail("components", "missing, empty or not an object")
        }
        if context.usedAbbreviation && context.usedFullName {
            context.fail("payload", "mixes abbreviations and full key names")
        }
        return (context.violations, uniqueIDs, deviceIDs, viaDevice)
    }

    /// The topic and its object id.
    private func checkTopic(_ topic: String, _ context: inout Context) {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let prefixLevels = discoveryPrefix.split(separator: "/", omittingEmptySubsequences: false).count
        guard topic.hasPrefix(discoveryPrefix + "/"), levels.count == prefixLevels + 3,
            levels[prefixLevels] == "device", levels.last == "config"
        else {
            context.fail("topic", "not <prefix>/device/<object_id>/config")
            return
        }
        if !Self.isObjectID(levels[prefixLevels + 1]) { context.fail("topic", "object id outside [a-zA-Z0-9_-]") }
    }

    /// The device's identifiers and `via_device`.
    private func checkDevice(_ device: [String: JSONValue], _ context: inout Context) -> ([String], String?) {
        var identifiers: [String] = []
        switch device["identifiers"] {
        case .string(let id)?: identifiers = [id]
        case .array(let ids)?:
            identifiers = ids.compactMap(\.stringValue)
            if identifiers.count != ids.count { context.fail("device.identifiers", "must be strings") }
        case nil: break
        default: context.fail("device.identifiers", "must be a string or a list of strings")
        }
        var connections = 0
        if let value = device["connections"] {
            if let list = value.arrayValue {
                for connection in list {
                    guard let pair = connection.arrayValue, pair.count == 2, pair.allSatisfy({ $0.stringValue?.isEmpty == false }) else {
                        context.fail("device.connections", "each connection is a [type, value] pair of strings")
                        continue
                    }
                    connections += 1
                }
            } else {
                context.fail("device.connections", "must be a list")
            }
        }
        if identifiers.isEmpty && connections == 0 { context.fail("device", "needs identifiers or connections") }
        for key in ["name", "manufacturer", "model", "model_id", "sw_version", "via_device"] {
            if let value = device[key], value.stringValue == nil { context.fail("device.\(key)", "must be a string") }
        }
        return (identifiers, device["via_device"]?.stringValue)
    }

    /// One component; returns its unique_id.
    private func checkComponent(
        _ id: String, _ pairs: [(String, JSONValue)], root: [String: JSONValue], _ context: inout Context
    ) -> String? {
        let path = "components.\(id)"
        guard let platform = pairs.first(where: { $0.0 == "p" || $0.0 == "platform" })?.1.stringValue,
            let rules = Self.platformOptions[platform]
        else {
            context.fail(path, "platform missing or not one of \(Self.platformOptions.keys.sorted())")
            return nil
        }
        let options = context.expand(pairs, at: path, allowed: Self.entityCommon.union(rules.allowed))
        // Root-level shared options count as given for every component.
        for key in rules.required where options[key] == nil && root[key] == nil {
            context.fail(path, "\(platform) requires \(key)")
        }
        let unique = options["unique_id"]?.stringValue
        if unique?.isEmpty ?? true { context.fail(path, "unique_id is required with device-based discovery") }
        for key in ["state_topic", "command_topic", "json_attributes_topic"] {
            if let value = options[key] { checkPublishTopic(value, at: "\(path).\(key)", &context) }
        }
        // A password text's state is deliberately constant (a key is never echoed), as is a
        // write-only text's (what was typed is a command, not a state to keep).
        let constantState =
            platform == "text" && (options["mode"]?.stringValue == "password" || options["value_template"]?.stringValue == "{{ '' }}")
        for key in ["value_template", "json_attributes_template"] {
            if let value = options[key] {
                checkTemplate(value, at: "\(path).\(key)", readsValue: !(constantState && key == "value_template"), &context)
            }
        }
        if let value = options["command_template"] { checkTemplate(value, at: "\(path).command_template", readsValue: false, &context) }
        if options["value_template"] != nil && options["state_topic"] == nil && root["state_topic"] == nil {
            context.fail(path, "value_template without state_topic")
        }
        if options["json_attributes_template"] != nil && options["json_attributes_topic"] == nil {
            context.fail(path, "json_attributes_template without json_attributes_topic")
        }
        if let category = options["entity_category"] {
            switch (category.stringValue, platform) {
            case ("diagnostic"?, _): break
            case ("config"?, _) where Self.controlPlatforms.contains(platform): break
            default: context.fail("\(path).entity_category", "\(category.serialized) is invalid for \(platform)")
            }
        }
        let deviceClass = options["device_class"]?.stringValue
        if let deviceClass, !(Self.deviceClasses[platform]?.contains(deviceClass) ?? false) {
            context.fail("\(path).device_class", "\(deviceClass) is not a \(platform) device class")
        }
        if platform != "select" { checkSensorClasses(options, deviceClass: deviceClass, at: path, &context) }
        if platform == "binary_sensor" {
            let on = options["payload_on"]?.stringValue ?? "ON", off = options["payload_off"]?.stringValue ?? "OFF"
            if on == off { context.fail(path, "payload_on equals payload_off") }
        }
        if platform == "event" {
            let types = options["event_types"]?.arrayValue ?? []
            if types.isEmpty || types.contains(where: { $0.stringValue?.isEmpty ?? true }) {
                context.fail("\(path).event_types", "must be a non-empty list of strings")
            }
            // The state payload (after the template) must be a JSON object with `event_type`.
            if let template = options["value_template"]?.stringValue, !template.contains("event_type") {
                context.fail("\(path).value_template", "must render a JSON object with event_type")
            }
        }
        if platform == "button", let press = options["payload_press"], press.stringValue == nil {
            context.fail("\(path).payload_press", "must be a string")
        }
        checkControl(platform, options, at: path, &context)
        checkAvailability(options, root: root, at: path, &context)
        return unique
    }

    /// Select, text and switch rules.
    private func checkControl(_ platform: String, _ options: [String: JSONValue], at path: String, _ context: inout Context) {
        switch platform {
        case "select":
            let values = options["options"]?.arrayValue ?? []
            let strings = values.compactMap(\.stringValue)
            if values.isEmpty || strings.count != values.count {
                context.fail("\(path).options", "a select needs a non-empty list of string options")
            }
            if Set(strings).count != strings.count { context.fail("\(path).options", "options must be unique") }
            // Home Assistant's MQTT select takes a state of `none` (any case) as "no option": an
            // option so named could never show as chosen (the real Home Assistant showed unknown).
            if let none = strings.first(where: { $0.lowercased() == "none" }) {
                context.fail("\(path).options", "option '\(none)' reads as no option in Home Assistant; use '(none)'")
            }
        case "text":
            let minimum = options["min"].map { $0.intValue ?? -1 } ?? 0
            let maximum = options["max"].map { $0.intValue ?? -1 } ?? 255
            if minimum < 0 || maximum < 0 || minimum > maximum || maximum > 255 {
                context.fail(path, "text needs 0 <= min <= max <= 255")
            }
            if let mode = options["mode"], !["text", "password"].contains(mode.stringValue ?? "") {
                context.fail("\(path).mode", "must be text or password")
            }
        case "switch":
            let on = options["payload_on"]?.stringValue ?? "ON", off = options["payload_off"]?.stringValue ?? "OFF"
            if on == off { context.fail(path, "payload_on equals payload_off") }
            let stateOn = options["state_on"]?.stringValue ?? on, stateOff = options["state_off"]?.stringValue ?? off
            if stateOn == stateOff { context.fail(path, "state_on equals state_off") }
        case "device_tracker":
            if let type = options["source_type"], !Self.sourceTypes.contains(type.stringValue ?? "") {
                context.fail("\(path).source_type", "must be one of \(Self.sourceTypes.sorted())")
            }
            let home = options["payload_home"]?.stringValue ?? "home", away = options["payload_not_home"]?.stringValue ?? "not_home"
            if home == away { context.fail(path, "payload_home equals payload_not_home") }
        default:
            break
        }
    }

    /// Sensor rules: enum options, units of battery and signal strength, state classes.
    private func checkSensorClasses(_ options: [String: JSONValue], deviceClass: String?, at path: String, _ context: inout Context) {
        if deviceClass == "enum" {
            let values = options["options"]?.arrayValue ?? []
            if values.isEmpty || values.contains(where: { $0.stringValue == nil }) {
                context.fail("\(path).options", "an enum sensor needs a non-empty list of string options")
            }
            if options["unit_of_measurement"] != nil || options["state_class"] != nil {
                context.fail(path, "an enum sensor has no unit or state_class")
            }
        } else if options["options"] != nil {
            context.fail("\(path).options", "options need device_class enum")
        }
        let unit = options["unit_of_measurement"]?.stringValue
        if deviceClass == "battery" && unit != "%" { context.fail(path, "battery sensors use unit %") }
        if deviceClass == "signal_strength" && unit != "dBm" && unit != "dB" {
            context.fail(path, "signal_strength sensors use unit dBm or dB")
        }
        if let stateClass = options["state_class"]?.stringValue,
            !["measurement", "total", "total_increasing", "measurement_angle"].contains(stateClass)
        {
            context.fail("\(path).state_class", "unknown state class \(stateClass)")
        }
    }

    /// `availability` entries and `availability_mode`.
    private func checkAvailability(_ options: [String: JSONValue], root: [String: JSONValue], at path: String, _ context: inout Context) {
        let availability = options["availability"] ?? root["availability"]
        if let availability {
            guard case .array(let entries) = availability, !entries.isEmpty else {
                context.fail("\(path).availability", "must be a non-empty list")
                return
            }
            for (index, entry) in entries.enumerated() {
                let entryPath = "\(path).availability[\(index)]"
                guard case .object(let pairs) = entry else {
                    context.fail(entryPath, "not an object")
                    continue
                }
                let keys = context.expand(pairs, at: entryPath, allowed: Self.availabilityKeys)
                guard let topic = keys["topic"] else {
                    context.fail(entryPath, "topic is required")
                    continue
                }
                checkPublishTopic(topic, at: "\(entryPath).topic", &context)
                if let template = keys["value_template"] { checkTemplate(template, at: "\(entryPath).value_template", &context) }
                // Without payloads Home Assistant compares with `online` / `offline`.
                let available = keys["payload_available"]?.stringValue ?? "online"
                let notAvailable = keys["payload_not_available"]?.stringValue ?? "offline"
                if available == notAvailable { context.fail(entryPath, "payload_available equals payload_not_available") }
            }
        }
        if let mode = options["availability_mode"] ?? root["availability_mode"] {
            if !["all", "any", "latest"].contains(mode.stringValue ?? "") {
                context.fail("\(path).availability_mode", "must be all, any or latest")
            }
            if availability == nil { context.fail("\(path).availability_mode", "without availability") }
        }
    }

    private func checkPublishTopic(_ value: JSONValue, at path: String, _ context: inout Context) {
        guard let topic = value.stringValue, !topic.isEmpty else {
            context.fail(path, "must be a non-empty string")
            return
        }
        if topic.contains("+") || topic.contains("#") { context.fail(path, "contains a wildcard: \(topic)") }
        if topic.split(separator: "/", omittingEmptySubsequences: false).contains(where: \.isEmpty) {
            context.fail(path, "has an empty level: \(topic)")
        }
    }

    /// A Jinja template with balanced `{{ }}` / `{% %}` that reads `value_json` (a state
    /// template) or anything (`readsValue` false: a command template reads `value`).
    private func checkTemplate(_ value: JSONValue, at path: String, readsValue: Bool = true, _ context: inout Context) {
        guard let template = value.stringValue else {
            context.fail(path, "must be a string")
            return
        }
        func count(_ token: String) -> Int { template.components(separatedBy: token).count - 1 }
        if count("{{") != count("}}") || count("{%") != count("%}") || count("{{") + count("{%") == 0 {
            context.fail(path, "unbalanced or no template delimiters: \(template)")
        }
        if readsValue && !template.contains("value_json") { context.fail(path, "does not read value_json") }
    }

    static func isObjectID(_ text: String) -> Bool {
        !text.isEmpty
            && text.unicodeScalars.allSatisfy { scalar in
                switch scalar {
                case "a"..."z", "A"..."Z", "0"..."9", "_", "-": true
                default: false
                }
            }
    }

    /// Collected violations and which key style the payload uses.
    struct Context {
        var topic: String
        var violations: [Violation] = []
        var usedAbbreviation = false
        var usedFullName = false

        mutating func fail(_ path: String, _ message: String) {
            violations.append(Violation(path: "\(topic) \(path)", message: message))
        }

        /// The pairs keyed by full name; unknown keys, undocumented abbreviations, duplicates
        /// and a key given both ways are violations.
        mutating func expand(_ pairs: [(String, JSONValue)], at path: String, allowed: Set<String>) -> [String: JSONValue] {
            var result: [String: JSONValue] = [:]
            for (key, value) in pairs {
                var full = key
                if let expansion = HomeAssistantRules.expansions[key], expansion != key {
                    full = expansion
                    usedAbbreviation = true
                } else if HomeAssistantRules.abbreviations[key].map({ $0 != key }) ?? false {
                    usedFullName = true
                }
                if !allowed.contains(full) {
                    fail(path, "unknown or undocumented key \(key)")
                    continue
                }
                if result[full] != nil { fail(path, "\(full) given twice") }
                result[full] = value
            }
            return result
        }
    }
}
