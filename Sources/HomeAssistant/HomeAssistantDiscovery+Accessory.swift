import AccessoryKit
import JSON

extension HomeAssistantDiscovery {
    /// An accessory's device with its components.
    ///
    /// - Parameters:
    ///   - status: the accessory's current status.
    ///   - batteryParts: the battery sensors to create; nil takes the parts `status` has a
    ///     level for. A caller that wants battery entities to survive a moment without a
    ///     decoded level passes every part it has seen (`HomeAssistantDiscoveryTracker` does).
    public func accessoryDevice(
        _ status: AccessoryStatus, batteryParts: Set<HomeAssistantBatteryPart>? = nil
    ) -> (topic: String, payload: JSONValue) {
        let id = status.accessory.id
        let objectID = objectID(of: id)
        let state = topics.accessory(id)
        let capabilities = capabilities(of: status)
        let availability: JSONValue = [availabilityEntry(topics.bridgeState), availabilityEntry(topics.availability(id))]

        /// A component reading the accessory's state topic, available while bridge and accessory
        /// are; with `bridgeOnly`, while the bridge is (for what the bridge knows, not the radio).
        func entity(
            _ platform: String, _ component: String, name: String, template: String, _ extra: [(String, JSONValue)],
            bridgeOnly: Bool = false
        ) -> (String, JSONValue) {
            var pairs: [(String, JSONValue)] =
                [
                    ("platform", .string(platform)),
                    ("name", .string(name)),
                    ("unique_id", .string("\(objectID)_\(component)")),
                    ("state_topic", .string(state)),
                    ("value_template", .string(template)),
                ] + extra
            if bridgeOnly {
                pairs.append(("availability", [availabilityEntry(topics.bridgeState)]))
            } else {
                pairs += [("availability", availability), ("availability_mode", "all")]
            }
            return (component, .object(pairs))
        }

        var components: [(String, JSONValue)] = []
        if capabilities.contains(.placement) {
            let placements = AccessoryControlDevice.Placement.allCases.map(\.rawValue)
            let list = placements.map { "'\($0)'" }.joined(separator: ", ")
            components.append(
                entity(
                    "sensor", "placement", name: "Placement",
                    // An enum sensor refuses any value outside `options`: null (no placement yet)
                    // and anything unexpected become None, which Home Assistant shows as unknown.
                    template: "{{ value_json.placement if value_json.placement in [\(list)] else None }}",
                    [("device_class", "enum"), ("options", .array(placements.map(JSONValue.string))), ("icon", "mdi:headphones")]))
            components.append(
                entity(
                    "binary_sensor", "worn", name: "Worn",
                    // `worn` is null until a wear reading arrives: None keeps the state unknown.
                    template: "{% if value_json.worn is true %}ON{% elif value_json.worn is false %}OFF{% else %}None{% endif %}",
                    [("payload_on", "ON"), ("payload_off", "OFF"), ("device_class", "occupancy")]))
        }
        if capabilities.contains(.audioSwitching) {
            components.append(
                entity(
                    "sensor", "primary_source", name: "Primary source",
                    template: "{{ value_json.primary_source if value_json.primary_source else 'none' }}",
                    [("icon", "mdi:cellphone-sound")]))
            components.append(
                entity(
                    "sensor", "secondary_source", name: "Secondary source",
                    template: "{{ value_json.secondary_source if value_json.secondary_source else 'none' }}",
                    [("icon", "mdi:cellphone-sound")]))
            // The state is the count (a state is limited to 255 characters); the addresses
            // are in the `routes` attribute.
            components.append(
                entity(
                    "sensor", "routes", name: "Routed sources",
                    template: "{{ value_json.routes | count }}",
                    [
                        ("json_attributes_topic", .string(state)),
                        ("json_attributes_template", "{{ {'routes': value_json.routes} | tojson }}"),
                        ("icon", "mdi:swap-horizontal"),
                    ]))
            components.append(decisionEvent(id, objectID: objectID))
        }
        // Registration and last error are the bridge's records, valid while the accessory is out
        // of range too (an invalidation must stay visible then).
        components.append(
            entity(
                "sensor", "registration", name: "Registration",
                template: "{{ value_json.registration }}",
                [("device_class", "enum"), ("options", ["active", "invalidated", "none"]), ("entity_category", "diagnostic")],
                bridgeOnly: true))
        let parts = (batteryParts ?? HomeAssistantBatteryPart.present(in: status.battery)).sorted()
        for part in parts {
            components.append(
                entity(
                    "sensor", part.componentID, name: part.entityName,
                    template: "{% set battery = value_json.battery or {} %}"
                        + "{{ battery.get('\(part.rawValue)') if battery.get('\(part.rawValue)') is number else None }}",
                    [
                        ("device_class", "battery"), ("unit_of_measurement", "%"), ("state_class", "measurement"),
                        ("entity_category", "diagnostic"),
                    ]))
            // Its charging flag beside it: unknown while the telemetry says none.
            let flag = part.chargingKey
            components.append(
                entity(
                    "binary_sensor", part.chargingComponentID, name: part.chargingEntityName,
                    template: "{% set battery = value_json.battery or {} %}"
                        + "{% if battery.get('\(flag)') is true %}ON{% elif battery.get('\(flag)') is false %}OFF{% else %}None{% endif %}",
                    [
                        ("payload_on", "ON"), ("payload_off", "OFF"), ("device_class", "battery_charging"),
                        ("entity_category", "diagnostic"),
                    ]))
        }
        components.append(
            entity(
                "sensor", "rssi", name: "RSSI",
                template: "{{ value_json.rssi if value_json.rssi is number else None }}",
                [
                    ("device_class", "signal_strength"), ("unit_of_measurement", "dBm"), ("state_class", "measurement"),
                    ("entity_category", "diagnostic"),
                ]))
        // The room follows the radio: unknown while nobody hears the accessory. Shown by the
        // name `rooms:` gives the node (the state topic keeps the node's own name).
        components.append(
            entity(
                "sensor", "room", name: "Room", template: "\(roomsVariable){{ \(roomExpression) if value_json.room else None }}",
                [("icon", "mdi:home-map-marker")]))
        components.append(presence(state: state, objectID: objectID))
        // Where it was last heard from and how that was recognised as this accessory (its own
        // address, its IRK, or a followed rotation), with which keys it has: never the keys.
        components.append(
            entity(
                "sensor", "address", name: "Address", template: "{{ value_json.address if value_json.address else 'none' }}",
                [
                    ("json_attributes_topic", .string(state)),
                    (
                        "json_attributes_template",
                        .string(
                            "{{ {'identity': value_json.identity, 'irk': value_json['keys'].irk, "
                                + "'encryption_key': value_json['keys'].encryption_key} | tojson }}")
                    ),
                    ("icon", "mdi:bluetooth"), ("entity_category", "diagnostic"),
                ],
                bridgeOnly: true))
        let attributions = IdentityAttribution.allCases.map(\.rawValue)
        components.append(
            entity(
                "sensor", "identity", name: "Identity",
                template:
                    "{{ value_json.identity if value_json.identity in [\(attributions.map { "'\($0)'" }.joined(separator: ", "))] else None }}",
                [
                    ("device_class", "enum"), ("options", .array(attributions.map(JSONValue.string))),
                    ("icon", "mdi:account-key"), ("entity_category", "diagnostic"),
                ],
                bridgeOnly: true))
        components.append(
            entity(
                "sensor", "last_error", name: "Last error",
                template: "{{ value_json.last_error.code if value_json.last_error else 'none' }}",
                [
                    ("json_attributes_topic", .string(state)),
                    ("json_attributes_template", "{{ (value_json.last_error or {}) | tojson }}"),
                    ("icon", "mdi:alert-circle-outline"), ("entity_category", "diagnostic"),
                ],
                bridgeOnly: true))

        components += accessoryControls(status, objectID: objectID, capabilities: capabilities)

        let payload: JSONValue = [
            "device": accessoryDeviceInfo(status),
            "origin": origin,
            "components": .object(components),
        ]
        return (configTopic(objectID: objectID), payload)
    }

    /// `{% set rooms = {...} %}`: the `rooms:` mapping for a template, empty without one.
    var roomsVariable: String {
        rooms.isEmpty ? "" : "{% set rooms = \(JinjaLiteral.dictionary(rooms.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })) %}"
    }

    /// The state's `room` by its mapped name (after ``roomsVariable``).
    var roomExpression: String {
        rooms.isEmpty ? "value_json.room" : "rooms.get(value_json.room, value_json.room)"
    }

    /// The presence tracker (Bermuda, ESPresense and Private BLE Device style): `home` while
    /// the accessory is available, `not_home` once no gateway heard it within
    /// `switching.availability_timeout_s`; the room (mapped) and the gateway as attributes.
    /// No name of its own, so its entity id is the device's (`device_tracker.alice_s_airpods`).
    /// Available with the bridge only: an accessory out of range is away, not unavailable.
    func presence(state: String, objectID: String) -> (String, JSONValue) {
        (
            "presence",
            [
                "platform": "device_tracker",
                "name": .null,
                "unique_id": .string("\(objectID)_presence"),
                "state_topic": .string(state),
                "value_template": "{{ 'home' if value_json.available else 'not_home' }}",
                "payload_home": "home",
                "payload_not_home": "not_home",
                "source_type": "bluetooth_le",
                "json_attributes_topic": .string(state),
                "json_attributes_template": .string(
                    "\(roomsVariable){{ {'room': \(roomExpression) if value_json.room else None, 'gateway': value_json.gateway} | tojson }}"
                ),
                "icon": "mdi:headphones-bluetooth",
                "availability": [availabilityEntry(topics.bridgeState)],
            ]
        )
    }

    /// The decision event: `route` / `release` from `<base>/accessory/<ID>/decision`.
    ///
    /// Available with the bridge only: the `release` with reason `unavailable` arrives just
    /// when the accessory goes offline, and an entity unavailable by then would hide it.
    func decisionEvent(_ id: BluetoothAddress, objectID: String) -> (String, JSONValue) {
        (
            "decision",
            [
                "platform": "event",
                "name": "Decision",
                "unique_id": .string("\(objectID)_decision"),
                "state_topic": .string(topics.decision(id)),
                // Home Assistant's event entity wants a JSON object with `event_type`; the other
                // keys become the event's attributes.
                "value_template": .string(
                    "{{ {'event_type': value_json.action, 'source': value_json.source, 'source_name': value_json.source_name, "
                        + "'reason': value_json.reason, 'placement': value_json.placement, 'at': value_json.at} | tojson }}"),
                "event_types": ["route", "release"],
                "icon": "mdi:swap-horizontal-bold",
                "availability": [availabilityEntry(topics.bridgeState)],
            ]
        )
    }

    /// `device`: identifiers and the Bluetooth connection (so Home Assistant merges it with
    /// a device another integration knows by the same address), name, model, via the bridge.
    func accessoryDeviceInfo(_ status: AccessoryStatus) -> JSONValue {
        let accessory = status.accessory
        var pairs: [(String, JSONValue)] = [
            ("identifiers", [.string(objectID(of: accessory.id))]),
            ("connections", [["bluetooth", .string(accessory.id.description)]]),
            ("name", .string(accessory.displayName)),
        ]
        let product = products[accessory.product]
        let company = product?.descriptor.bluetoothCompanyIdentifier ?? accessory.descriptor.bluetoothCompanyIdentifier
        if let manufacturer = company.flatMap(Self.manufacturer(companyIdentifier:)) {
            pairs.append(("manufacturer", .string(manufacturer)))
        }
        // The decoded model ("AirPods Max") says more than the product that matched it
        // ("AirPods or Beats"); the product until the accessory has been heard.
        pairs.append(("model", .string(status.model ?? accessory.product)))
        if let hardware = product?.hardware { pairs.append(("model_id", .string(hardware.rawValue))) }
        pairs.append(("via_device", .string(bridgeObjectID)))
        return .object(pairs)
    }

    /// The company behind a Bluetooth SIG company identifier, for the few audio makers a
    /// product's descriptor is likely to name; other identifiers leave `manufacturer` out
    /// rather than guess.
    static func manufacturer(companyIdentifier: UInt16) -> String? {
        switch companyIdentifier {
        case 0x004C: "Apple"
        case 0x0075: "Samsung"
        case 0x009E: "Bose"
        case 0x00E0: "Google"
        case 0x012D: "Sony"
        default: nil
        }
    }
}
