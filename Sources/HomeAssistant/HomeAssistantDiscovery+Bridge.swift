import JSON

extension HomeAssistantDiscovery {
    /// The bridge's device: its connection state, the picker (show, dismiss, its state), the
    /// pairing form (candidate, name, Pair), the last request's outcome and the setup session.
    ///
    /// - Parameters:
    ///   - candidates: the picker's candidates now: the "Candidate" select's options, so the
    ///     runtime republishes this device whenever they change.
    ///   - gateways: the heard gateways, each with its diagnostic sensor; republished likewise.
    public func bridgeDevice(
        candidates: [HomeAssistantCandidate] = [], gateways: [HomeAssistantGateway] = []
    ) -> (topic: String, payload: JSONValue) {
        let objectID = bridgeObjectID
        let unique = { (component: String) in "\(objectID)_\(component)" }
        let bridgeOnline = [availabilityEntry(topics.bridgeState)]
        var components: [(String, JSONValue)] = [
            // No availability: this entity is the one that shows the bridge offline.
            (
                "connection",
                [
                    "platform": "binary_sensor",
                    "name": "Connection",
                    "unique_id": .string(unique("connection")),
                    "state_topic": .string(topics.bridgeState),
                    "value_template": "{{ value_json.state }}",
                    "payload_on": "online",
                    "payload_off": "offline",
                    "device_class": "connectivity",
                    "entity_category": "diagnostic",
                ]
            ),
            (
                "picker_show",
                [
                    "platform": "button",
                    "name": "Show picker",
                    "unique_id": .string(unique("picker_show")),
                    "command_topic": .string(topics.request(.showPicker)),
                    // All products, for `homeassistant.picker_timeout_s`: the request's default
                    // (30 s) is too short to choose a candidate and type a name on a phone.
                    "payload_press": .string(
                        "{\"timeout\":\(pickerTimeoutSeconds),\"transaction\":\"\(Self.transaction)\"}"),
                    "icon": "mdi:bluetooth-connect",
                    "availability": .array(bridgeOnline),
                ]
            ),
            (
                "picker",
                [
                    "platform": "sensor",
                    "name": "Picker",
                    "unique_id": .string(unique("picker")),
                    "state_topic": .string(topics.bridgePicker),
                    "value_template": "{{ value_json.state }}",
                    "device_class": "enum",
                    "options": ["idle", "presented"],
                    "json_attributes_topic": .string(topics.bridgePicker),
                    "json_attributes_template":
                        "{{ {'products': value_json.products, 'candidates': value_json.candidates, 'expires_at': value_json.expires_at} | tojson }}",
                    "availability": .array(bridgeOnline),
                ]
            ),
            (
                "session",
                [
                    "platform": "sensor",
                    "name": "Setup session",
                    "unique_id": .string(unique("session")),
                    "state_topic": .string(topics.bridgeInfo),
                    "value_template": "{{ value_json.session }}",
                    "device_class": "enum",
                    "options": ["activated", "invalidated"],
                    "entity_category": "diagnostic",
                    "availability": .array(bridgeOnline),
                ]
            ),
            (
                "accessories",
                [
                    "platform": "sensor",
                    "name": "Accessories",
                    "unique_id": .string(unique("accessories")),
                    "state_topic": .string(topics.bridgeInfo),
                    "value_template": "{{ value_json.accessories }}",
                    "state_class": "measurement",
                    "icon": "mdi:headphones",
                    "entity_category": "diagnostic",
                    "availability": .array(bridgeOnline),
                ]
            ),
        ]
        components += controls(candidates: candidates, unique: unique, availability: .array(bridgeOnline))
        components += gatewaySensors(gateways, unique: unique, availability: .array(bridgeOnline))
        let device: [(String, JSONValue)] = [
            ("identifiers", [.string(objectID)]),
            // Two bridges on one broker differ by base topic; the default one is just "aabridge".
            ("name", .string(topics.base == "aabridge" ? "aabridge" : "aabridge \(topics.base)")),
            ("manufacturer", "aabridge"),
            ("model", "AudioAccessoryKit bridge"),
            ("sw_version", .string(version)),
        ]
        let payload: JSONValue = [
            "device": .object(device),
            "origin": origin,
            "components": .object(components),
        ]
        return (configTopic(objectID: objectID), payload)
    }

    /// One entry of an `availability` list for a `{"state":"online"|"offline"}` topic.
    func availabilityEntry(_ topic: String) -> JSONValue {
        [
            "topic": .string(topic),
            "value_template": "{{ value_json.state }}",
            "payload_available": "online",
            "payload_not_available": "offline",
        ]
    }
}
