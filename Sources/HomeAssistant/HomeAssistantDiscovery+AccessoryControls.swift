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
            _ platform: String, _ component: String, name: String, request: String, _ extra: [(String, JSONValue)]
        ) -> (
            String, JSONValue
        ) {
            let pairs: [(String, JSONValue)] =
                [
                    ("platform", .string(platform)),
                    ("name", .string(name)),
                    ("unique_id", .string("\(objectID)_\(component)")),
                    ("command_topic", .string(topics.requestPrefix + request)),
                ] + extra
            return (component, .object(pairs + [("availability", bridgeOnline)]))
        }

        var controls: [(String, JSONValue)] = [
            control(
                "text", "name", name: "Name", request: "accessory/rename",
                [
                    ("command_template", .string("{{ {'id': \(idLiteral), 'name': value, 'transaction': \(transaction)} | tojson }}")),
                    ("state_topic", .string(state)),
                    ("value_template", "{{ value_json.name }}"),
                    // accessory/rename's limits (Accessory.maximumNameLength).
                    ("min", 1), ("max", .int(Accessory.maximumNameLength)),
                    ("icon", "mdi:rename"), ("entity_category", "config"),
                ]),
            control(
                "button", "remove", name: "Remove", request: "accessory/remove",
                [("payload_press", pressPayload), ("icon", "mdi:delete"), ("entity_category", "config")]),
        ]
        let product = products[status.accessory.product]
        // Only where the product asks for a confirmation; the button is available only while
        // the accessory waits for it (its state says `awaitingAuthorization`).
        if product?.setupOptions.contains(.confirmAuthorization) == true {
            var authorize = control(
                "button", "authorize", name: "Authorize", request: "accessory/authorize",
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
                    "button", "register", name: "Register", request: "accessory/register",
                    [("payload_press", .string(register.serialized)), ("icon", "mdi:link-plus"), ("entity_category", "config")]))
            controls.append(
                control(
                    "button", "invalidate", name: "Invalidate registration", request: "accessory/invalidate",
                    [("payload_press", pressPayload), ("icon", "mdi:link-off"), ("entity_category", "config")]))
        }
        if capabilities.contains(.audioSwitching), !sources.isEmpty {
            controls.append(preferredSource(id: id, state: state, capabilities: capabilities, control: control))
        }
        // Keys are write-only. Without a state topic Home Assistant's text would be optimistic
        // and keep the typed key as its state (in the state machine, the recorder's history
        // and every state_changed event). So the state comes from the accessory's state topic
        // and is always empty: typing a key never shows, stores or echoes it. Whether a key is
        // set is the Address sensor's `irk` / `encryption_key` attribute. An empty entry
        // deletes the key (`null` in accessory/keys).
        for (component, key, name) in [("irk", "irk", "IRK"), ("encryption_key", "encryption_key", "Encryption key")] {
            controls.append(
                control(
                    "text", component, name: name, request: "accessory/keys",
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

    /// The "Preferred source" select: the configured sources by name, and "none".
    ///
    /// The primary source is part of the registration, so choosing one registers again
    /// (accessory/register, the container role's way to set it; `/set` is the extension
    /// role's) with the registered capabilities and the chosen primary. Registering replaces
    /// the registration: the secondary source is cleared and, with `placement`, the placement
    /// starts `offHead` until the next reading.
    private func preferredSource(
        id: String, state: String, capabilities: AccessoryControlDevice.Capabilities,
        control: (String, String, String, String, [(String, JSONValue)]) -> (String, JSONValue)
    ) -> (String, JSONValue) {
        let none = "none"
        // A name given twice gets its address, so every option is unique.
        var seen: [String: Int] = [:]
        for source in sources { seen[source.name, default: 0] += 1 }
        let options = sources.map { (seen[$0.name] ?? 0) > 1 ? "\($0.name) (\($0.address))" : $0.name }
        let ids = JinjaLiteral.dictionary(zip(options, sources).map { ($0, $1.address.description) })
        let names = JinjaLiteral.dictionary(zip(options, sources).map { ($1.address.description, $0) })
        let list = JinjaLiteral.list(capabilities.names)
        return control(
            "select", "preferred_source", "Preferred source", "accessory/register",
            [
                (
                    "command_template",
                    .string(
                        "{% set ids = \(ids) %}{{ {'id': \(JinjaLiteral.string(id)), 'capabilities': \(list), "
                            + "'primary_source': ids.get(value), 'transaction': '\(Self.transaction)'} | tojson }}")
                ),
                ("options", .array(([none] + options).map(JSONValue.string))),
                ("state_topic", .string(state)),
                // A primary that is not a configured source shows as "none" (it has no option).
                ("value_template", .string("{% set names = \(names) %}{{ names.get(value_json.primary_source, '\(none)') }}")),
                ("icon", "mdi:cellphone-sound"), ("entity_category", "config"),
            ])
    }
}
