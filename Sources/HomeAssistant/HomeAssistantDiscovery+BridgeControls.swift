import AccessoryKit
import JSON

extension HomeAssistantDiscovery {
    /// What every command of a Home Assistant control carries as its `transaction`: the
    /// response (and `bridge/last_response`) then says the press came from Home Assistant.
    static let transaction = "homeassistant"

    /// The bridge device's controls: Dismiss picker, the pairing form (Candidate select, Name
    /// text, Pair button), Name a source, and the Last request sensor.
    ///
    /// A button's payload is static, so Pair cannot carry the candidate and name: the select
    /// and the text fill in a form the bridge keeps (`bridge/pairing/set`, its state retained
    /// on `bridge/pairing`), and Pair makes the bridge send `picker/select` with them through
    /// the request path (mqtt-api.md, "Pairing form").
    func controls(
        candidates: [HomeAssistantCandidate], unique: (String) -> String, availability: JSONValue
    ) -> [(String, JSONValue)] {
        let none = Self.noOption
        // Home Assistant needs at least one option; "(none)" (no candidate chosen) is also what
        // clears the choice.
        let options = [none] + candidates.map(\.label)
        let ids = JinjaLiteral.dictionary(candidates.map { ($0.label, $0.id.description) })
        let labels = JinjaLiteral.dictionary(candidates.map { ($0.id.description, $0.label) })
        let press = "{\"transaction\":\"\(Self.transaction)\"}"
        return [
            (
                "picker_dismiss",
                [
                    "platform": "button",
                    "name": "Dismiss picker",
                    "unique_id": .string(unique("picker_dismiss")),
                    "command_topic": .string(topics.request(.dismissPicker)),
                    "payload_press": .string(press),
                    "icon": "mdi:close-circle-outline",
                    "availability": availability,
                ]
            ),
            (
                "pairing_candidate",
                [
                    "platform": "select",
                    "name": "Candidate",
                    "unique_id": .string(unique("pairing_candidate")),
                    "command_topic": .string(topics.bridgePairingSet),
                    // The option is a label; the form wants the address ("(none)" maps to null, which
                    // clears the choice).
                    "command_template": .string(
                        "{% set ids = \(ids) %}{{ {'candidate': ids.get(value), 'transaction': '\(Self.transaction)'} | tojson }}"),
                    "options": .array(options.map(JSONValue.string)),
                    "state_topic": .string(topics.bridgePairing),
                    "value_template": .string(
                        "{% set labels = \(labels) %}{{ labels.get(value_json.candidate, '\(none)') if value_json.candidate else '\(none)' }}"
                    ),
                    "icon": "mdi:headphones-settings",
                    "availability": availability,
                ]
            ),
            (
                "pairing_name",
                [
                    "platform": "text",
                    "name": "Name to give",
                    "unique_id": .string(unique("pairing_name")),
                    "command_topic": .string(topics.bridgePairingSet),
                    "command_template": .string("{{ {'name': value, 'transaction': '\(Self.transaction)'} | tojson }}"),
                    "state_topic": .string(topics.bridgePairing),
                    "value_template": "{{ value_json.name or '' }}",
                    // Empty clears the name (the accessory keeps the one it advertises); the bridge
                    // refuses more than picker/select does (Accessory.maximumNameLength).
                    "min": 0,
                    "max": .int(Accessory.maximumNameLength),
                    "icon": "mdi:rename",
                    "availability": availability,
                ]
            ),
            (
                "pair",
                [
                    "platform": "button",
                    "name": "Pair",
                    "unique_id": .string(unique("pair")),
                    "command_topic": .string(topics.bridgePairingSet),
                    "payload_press": .string("{\"action\":\"pair\",\"transaction\":\"\(Self.transaction)\"}"),
                    "icon": "mdi:link-variant",
                    "availability": availability,
                ]
            ),
            (
                "source_name",
                [
                    "platform": "text",
                    "name": "Name a source",
                    "unique_id": .string(unique("source_name")),
                    "command_topic": .string(topics.request(.nameSource)),
                    // `address=name` names a source device; `address=` removes the name given here
                    // (source/name checks the address and the name, and refuses with the key).
                    "command_template": .string(
                        "{% set parts = value.split('=', 1) %}{{ {'address': parts[0] | trim, "
                            + "'name': (parts[1] | trim) if parts | length > 1 and parts[1] | trim else None, "
                            + "'transaction': '\(Self.transaction)'} | tojson }}"),
                    // Write-only: what was typed never stays as the entity's state.
                    "state_topic": .string(topics.bridgeState),
                    "value_template": "{{ '' }}",
                    "min": 0,
                    "max": 90,
                    "icon": "mdi:cellphone-text",
                    "entity_category": "config",
                    "availability": availability,
                ]
            ),
            (
                "last_response",
                [
                    "platform": "sensor",
                    "name": "Last request",
                    "unique_id": .string(unique("last_response")),
                    "state_topic": .string(topics.bridgeLastResponse),
                    // `ok`, or the error code: a refused press shows here.
                    "value_template": "{{ 'ok' if value_json.status == 'ok' else value_json.error.code }}",
                    "json_attributes_topic": .string(topics.bridgeLastResponse),
                    "json_attributes_template":
                        "{{ {'request': value_json.request, 'transaction': value_json.transaction, 'message': value_json.error.message if value_json.error else None, 'at': value_json.at} | tojson }}",
                    "icon": "mdi:message-reply-text-outline",
                    "entity_category": "diagnostic",
                    "availability": availability,
                ]
            ),
        ]
    }
}
