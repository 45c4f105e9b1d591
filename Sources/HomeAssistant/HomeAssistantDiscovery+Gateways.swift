import JSON

extension HomeAssistantDiscovery {
    /// One diagnostic sensor per heard gateway on the bridge device (household.md, "What
    /// gateways and advertisements really say"): state `ok` or the code of its first problem,
    /// its figures of the last minute and its problems as attributes, all read from
    /// `bridge/gateways`, and a relay's scanner's Home Assistant area (`null` for other
    /// gateways). Unknown while the gateway is not listed there.
    func gatewaySensors(_ gateways: [HomeAssistantGateway], unique: (String) -> String, availability: JSONValue) -> [(String, JSONValue)] {
        gateways.map { gateway in
            let entry = JinjaLiteral.string(gateway.entry), name = JinjaLiteral.string(gateway.name)
            // The entry, then the gateway under it; `first` of nothing is undefined, hence `default`.
            let find =
                "{% set entry = value_json | selectattr('name', 'eq', \(entry)) | list %}"
                + "{% set heard = (entry[0].heard | selectattr('name', 'eq', \(name)) | list) if entry else [] %}"
            let id = "gateway_\(gateway.uniquePart)"
            return (
                id,
                [
                    "platform": "sensor",
                    "name": .string("Gateway \(gateway.name)"),
                    "unique_id": .string(unique(id)),
                    "state_topic": .string(topics.bridgeGateways),
                    "value_template": .string(
                        find + "{{ ((heard[0].problems[0].code if heard[0].problems else 'ok') if heard else None) }}"),
                    "json_attributes_topic": .string(topics.bridgeGateways),
                    "json_attributes_template": .string(
                        find
                            + "{{ ({'entry': \(entry), 'state': heard[0].state, 'last_seen': heard[0].last_seen, "
                            + "'advertisements_per_min': heard[0].advertisements_per_min, "
                            + "'with_manufacturer_data': heard[0].with_manufacturer_data, 'attributed': heard[0].attributed, "
                            + "'problems': heard[0].problems, 'area': heard[0].get('area')} if heard else {}) | tojson }}"),
                    "icon": "mdi:access-point",
                    "entity_category": "diagnostic",
                    "availability": availability,
                ]
            )
        }
    }
}
