import AccessoryKit
import JSON

extension HomeAssistantDiscovery {
    /// An accessory's controls. Each one is a request of the request API
    /// (`<base>/bridge/request/<name>`, with a `transaction`), so a press gets the same
    /// validation and the same errors as any client's request, and its outcome shows on the
    /// bridge device's "Last request" sensor. The accessory's id is fixed per device, so it
    /// is written into the payload (buttons) or the `command_template` (select, text).
    ///
    /// All are available with the bridge alone: they act on the bridge's records, which hold
    /// while the accessory is out of range.
    func accessoryControls(
        _ status: AccessoryStatus, objectID: String, capabilities: AccessoryControlDevice.Capabilities
    ) -> [(String, JSONValue)] {
        let id = status.accessory.id.description
        let state = topics.accessory(status.accessory.id)
        let bridgeOnline: JSONValue = [availabilityEntry(topics.bridgeState)]
        let idLiteral = JinjaLiteral.string(id)
        let transaction = "'\(Self.transaction)'"
        /// A static request payload for a button: the id and the transaction.
        let pressPayload: JSONValue = .string(
            JSONValue.object([("id", .string(id)), ("transaction", .string(Self.transaction))]).serialized)

        func control(
            _ platform: String, _ component: String, name: String, request: RequestName, _ extra: [(String, JSONValue)]
        ) -> (
            String, JSONValue
        ) {
            let pairs: [(String, JSONValue)] =
                [
                    ("platform", .string(platform)),
                    ("name", .string(name)),
                    ("unique_id", .string("\(objectID)_\(component)")),
                    ("command_topic", .string(topics.request(request))),
                ] + extra
            return (component, .object(pairs + [("availability", bridgeOnline)]))
        }

        var controls: [(String, JSONValue)] = [
            control(
                "text", "name", name: "Name", request: .rename,
                [
                    ("command_template", .string("{{ {'id': \(idLiteral), 'name': value, 'transaction': \(transaction)} | tojson }}")),
                    ("state_topic", .string(state)),
                    ("value_template", "{{ value_json.name }}"),
                    // accessory/rename's limits (Accessory.maximumNameLength).
                    ("min", 1), ("max", .int(Accessory.maximumNameLength)),
                    ("icon", "mdi:rename"), ("entity_category", "config"),
                ]),
            control(
                "button", "remove", name: "Remove", request: .remove,
                [("payload_press", pressPayload), ("icon", "mdi:delete"), ("entity_category", "config")]),
        ]
        let product = products[status.accessory.product]
        // Only where the product asks for a confirmation; the button is available only while
        // the accessory waits for it (its state says `awaitingAuthorization`).
        if product?.setupOptions.contains(.confirmAuthorization) == true {
            var authorize = control(
                "button", "authorize", name: "Authorize", request: .authorize,
                [("payload_press", pressPayload), ("icon", "mdi:check-decagram")])
            if case .object(var pairs) = authorize.1 {
                pairs.removeAll { $0.0 == "availability" }
                pairs.append(
                    (
                        "availability",
                        [
                            availabilityEntry(topics.bridgeState),
                            [
                                "topic": .string(state),
                                "value_template": "{{ 'online' if value_json.state == 'awaitingAuthorization' else 'offline' }}",
                                "payload_available": "online",
                                "payload_not_available": "offline",
                            ],
                        ]
                    ))
                pairs.append(("availability_mode", "all"))
                authorize.1 = .object(pairs)
            }
            controls.append(authorize)
        }
        // Register with what the product's hardware can do (accessory/register wants a
        // non-empty list within it); the placement starts `offHead` and no source is listed: a
        // fresh registration, as after pairing. The "Preferred source" select sets a source.
        let hardware = product?.capabilities ?? []
        if !hardware.isEmpty {
            let register: JSONValue = [
                "id": .string(id), "capabilities": .array(hardware.names.map(JSONValue.string)),
                "transaction": .string(Self.transaction),
            ]
            controls.append(
                control(
                    "button", "register", name: "Register", request: .register,
                    [("payload_press", .string(register.serialized)), ("icon", "mdi:link-plus"), ("entity_category", "config")]))
            controls.append(
                control(
                    "button", "invalidate", name: "Invalidate registration", request: .invalidate,
                    [("payload_press", pressPayload), ("icon", "mdi:link-off"), ("entity_category", "config")]))
        }
        if capabilities.contains(.headTracking) { controls.append(headTrackingSwitch(status, state: state, control: control)) }
        controls += homeSourceControls(status, state: state, control: control)
        controls += reattachControls(status, bridgeOnline: bridgeOnline, objectID: objectID)
        // Keys are write-only. Without a state topic Home Assistant's text would be optimistic
        // and keep the typed key as its state (in the state machine, the recorder's history
        // and every state_changed event). So the state comes from the accessory's state topic
        // and is always empty: typing a key never shows, stores or echoes it. Whether a key is
        // set is the Address sensor's `irk` / `encryption_key` attribute. An empty entry
        // deletes the key (`null` in accessory/keys).
        for (component, key, name) in [("irk", "irk", "IRK"), ("encryption_key", "encryption_key", "Encryption key")] {
            controls.append(
                control(
                    "text", component, name: name, request: .keys,
                    [
                        (
                            "command_template",
                            .string(
                                "{{ {'id': \(idLiteral), '\(key)': value if value else None, 'transaction': \(transaction)} | tojson }}")
                        ),
                        ("state_topic", .string(state)),
                        ("value_template", "{{ '' }}"),
                        ("mode", "password"), ("min", 0), ("max", 64),
                        ("icon", "mdi:key-variant"), ("entity_category", "config"),
                    ]))
        }
        return controls
    }

    /// The "Head tracking" switch: `accessory/head_tracking` with `active` true or false. It shows
    /// the state's `head_tracking` and is available only while there is a session (`active` or
    /// `inactive`; null before a registration with `headTracking`, or after an invalidation),
    /// so a press can only be refused for a reason the state does not already show.
    private func headTrackingSwitch(
        _ status: AccessoryStatus, state: String,
        control: (String, String, String, RequestName, [(String, JSONValue)]) -> (String, JSONValue)
    ) -> (String, JSONValue) {
        let id = status.accessory.id.description
        func press(_ active: Bool) -> JSONValue {
            .string(
                JSONValue.object([("id", .string(id)), ("active", .bool(active)), ("transaction", .string(Self.transaction))]).serialized)
        }
        var toggle = control(
            "switch", "head_tracking", "Head tracking", .headTracking,
            [
                ("payload_on", press(true)), ("payload_off", press(false)),
                ("state_topic", .string(state)),
                ("value_template", "{{ 'ON' if value_json.head_tracking == 'active' else 'OFF' }}"),
                ("state_on", "ON"), ("state_off", "OFF"),
                ("icon", "mdi:rotate-orbit"),
            ])
        if case .object(var pairs) = toggle.1 {
            pairs.removeAll { $0.0 == "availability" }
            pairs.append(
                (
                    "availability",
                    [
                        availabilityEntry(topics.bridgeState),
                        [
                            "topic": .string(state),
                            "value_template": "{{ 'online' if value_json.head_tracking in ['active', 'inactive'] else 'offline' }}",
                            "payload_available": "online",
                            "payload_not_available": "offline",
                        ],
                    ]
                ))
            pairs.append(("availability_mode", "all"))
            toggle.1 = .object(pairs)
        }
        return toggle
    }

    /// The "Home source" options: every named source device (by name, an address added where
    /// two share a name), then the accessory's home sources that have no name (by address).
    func homeSourceOptions(_ status: AccessoryStatus) -> [(label: String, address: BluetoothAddress)] {
        let named = sourceNames.sorted { ($0.value, $0.key) < ($1.value, $1.key) }
        var seen: [String: Int] = [:]
        for (_, name) in named { seen[name, default: 0] += 1 }
        let labelled = named.map { address, name in (label: (seen[name] ?? 0) > 1 ? "\(name) (\(address))" : name, address: address) }
        let unnamed = status.homeSources.filter { sourceNames[$0] == nil }.map { (label: $0.description, address: $0) }
        return labelled + unnamed
    }

    /// The home source controls (household.md, "Home sources"): a select of the known sources
    /// and "(none)", and a text for any address; and the alias text. Each sends its own request
    /// (`accessory/home_sources`, `accessory/alias`), which never registers again nor touches
    /// the placement. The select keeps the unique id of the earlier "Preferred source" select
    /// (`_preferred_source`), so an existing entity carries on under its new name.
    private func homeSourceControls(
        _ status: AccessoryStatus, state: String,
        control: (String, String, String, RequestName, [(String, JSONValue)]) -> (String, JSONValue)
    ) -> [(String, JSONValue)] {
        let id = JinjaLiteral.string(status.accessory.id.description)
        let transaction = "'\(Self.transaction)'"
        let none = Self.noOption
        let options = homeSourceOptions(status)
        let ids = JinjaLiteral.dictionary(options.map { ($0.label, $0.address.description) })
        let labels = JinjaLiteral.dictionary(options.map { ($0.address.description, $0.label) })
        return [
            control(
                "select", "preferred_source", "Home source", .homeSources,
                [
                    (
                        "command_template",
                        .string(
                            "{% set ids = \(ids) %}{{ {'id': \(id), 'sources': [ids[value]] if value in ids else [], "
                                + "'transaction': \(transaction)} | tojson }}")
                    ),
                    ("options", .array(([none] + options.map(\.label)).map(JSONValue.string))),
                    ("state_topic", .string(state)),
                    (
                        "value_template",
                        .string(
                            "{% set labels = \(labels) %}{% set first = (value_json.home_sources or [None])[0] %}"
                                + "{{ labels.get(first, '\(none)') if first else '\(none)' }}")
                    ),
                    ("icon", "mdi:cellphone-sound"), ("entity_category", "config"),
                ]),
            control(
                "text", "home_source_address", "Home source address", .homeSources,
                [
                    (
                        "command_template",
                        .string(
                            "{{ {'id': \(id), 'sources': [value | trim] if value | trim else [], 'transaction': \(transaction)} | tojson }}"
                        )
                    ),
                    ("state_topic", .string(state)),
                    ("value_template", "{{ (value_json.home_sources or [''])[0] }}"),
                    ("min", 0), ("max", 17), ("icon", "mdi:cellphone-link"), ("entity_category", "config"),
                ]),
            control(
                "text", "alias", "Alias", .alias,
                [
                    (
                        "command_template",
                        .string(
                            "{{ {'id': \(id), 'address': (value | trim) if value | trim else None, 'transaction': \(transaction)} | tojson }}"
                        )
                    ),
                    ("state_topic", .string(state)),
                    ("value_template", "{{ value_json.alias or '' }}"),
                    ("min", 0), ("max", 17), ("icon", "mdi:bluetooth-connect"), ("entity_category", "config"),
                ]),
        ]
    }

    /// The re-attach controls (household.md, "Found again after a night"), for an accessory
    /// that advertises Apple proximity pairing (its model is decoded) or has look-alikes: the
    /// "Look-alike" select of the addresses that could be it, and "Re-attach". Both go through
    /// the re-attach form (`bridge/reattach/set`), since a button cannot carry the address; the
    /// press is then `accessory/reattach`, answered on the Last request sensor.
    private func reattachControls(_ status: AccessoryStatus, bridgeOnline: JSONValue, objectID: String) -> [(String, JSONValue)] {
        let id = status.accessory.id
        let options = (lookalikes[id] ?? []).map(\.description)
        guard status.model != nil || !options.isEmpty else { return [] }
        let idLiteral = JinjaLiteral.string(id.description)
        let none = "(none)"
        let offered = JinjaLiteral.list(options)
        let press: JSONValue = ["id": .string(id.description), "action": "reattach", "transaction": .string(Self.transaction)]
        return [
            (
                "lookalike",
                [
                    "platform": "select", "name": "Look-alike", "unique_id": .string("\(objectID)_lookalike"),
                    "command_topic": .string(topics.bridgeReattachSet),
                    "command_template": .string(
                        "{{ {'id': \(idLiteral), 'lookalike': None if value == '\(none)' else value, 'transaction': '\(Self.transaction)'} | tojson }}"
                    ),
                    "options": .array(([none] + options).map(JSONValue.string)),
                    "state_topic": .string(topics.reattachChoice(id)),
                    // A choice that is no look-alike any more (expired) shows as none, not as an invalid option.
                    "value_template": .string(
                        "{% set offered = \(offered) %}{{ value_json.lookalike if value_json.lookalike in offered else '\(none)' }}"),
                    "icon": "mdi:head-question", "entity_category": "config", "availability": bridgeOnline,
                ]
            ),
            (
                "reattach",
                [
                    "platform": "button", "name": "Re-attach", "unique_id": .string("\(objectID)_reattach"),
                    "command_topic": .string(topics.bridgeReattachSet), "payload_press": .string(press.serialized),
                    "icon": "mdi:link-variant", "entity_category": "config", "availability": bridgeOnline,
                ]
            ),
        ]
    }
}
