import AccessoryKit
import Foundation

extension BridgeConfiguration {
    /// The configuration for `bridge/info`'s `config` object, JSON-ready
    /// (`JSONSerialization` types only) and without any secret: the password
    /// shows only as whether one is set, irks only as whether one is set.
    public var summary: [String: Any] {
        var mqtt: [String: Any] = [
            "server": self.mqtt.server,
            "base_topic": self.mqtt.baseTopic,
            "client_id": self.mqtt.clientID,
            "user": self.mqtt.user ?? NSNull(),
            "password_set": self.mqtt.password != nil,
            "keepalive": self.mqtt.keepalive,
            "version": self.mqtt.version.rawValue,
            "reconnect": ["min_s": self.mqtt.reconnect.minimumSeconds, "max_s": self.mqtt.reconnect.maximumSeconds],
        ]
        // File paths are not secrets; their contents are never read into the summary.
        mqtt["password_file"] = self.mqtt.passwordFile ?? NSNull()
        mqtt["ca"] = self.mqtt.ca ?? NSNull()
        mqtt["cert"] = self.mqtt.cert ?? NSNull()
        mqtt["key"] = self.mqtt.key ?? NSNull()
        return [
            "mqtt": mqtt,
            "homeassistant": [
                "enabled": homeAssistant.enabled, "discovery_prefix": homeAssistant.discoveryPrefix,
                "status_topic": homeAssistant.statusTopic,
            ],
            "storage": ["path": storage.path],
            "health": ["interval_s": health.intervalSeconds],
            "log": ["level": log.level.rawValue, "format": log.format.rawValue],
            "setup": [
                "supports": setup.supports.map(\.rawValue).sorted(),
                "bluetooth": [
                    "company_identifiers": setup.bluetoothCompanyIdentifiers.sorted().map(Self.hex16),
                    "services": setup.bluetoothServices.map(\.description).sorted(),
                    "names": setup.bluetoothNames.sorted(),
                ],
            ],
            "products": products.map { entry -> [String: Any] in
                [
                    "name": entry.name, "hardware": entry.product.hardware.rawValue,
                    "capabilities": entry.product.capabilities.names, "auto_register": entry.product.autoRegister,
                    "placement_decoder": entry.placementDecoder.name,
                ]
            },
            "gateways": gateways.map { gateway -> [String: Any] in
                ["name": gateway.name, "format": gateway.format.rawValue, "topic": gateway.topic, "status_topic": gateway.statusTopic ?? NSNull()]
            },
            "accessories": accessories.map { entry -> [String: Any] in
                [
                    "id": entry.migration.id.description, "name": entry.migration.name, "product": entry.migration.product,
                    "irk_set": entry.irk != nil,
                ]
            },
            "sources": sources.map { ["address": $0.address.description, "name": $0.name] },
            "switching": [
                "placement_debounce_ms": Int(switching.placementDebounceMilliseconds),
                "availability_timeout_s": Int(switching.availabilityTimeoutSeconds),
                "immediate_rssi": switching.immediateRSSI,
            ],
        ]
    }

    /// `summary` as compact JSON with sorted keys.
    public var summaryJSON: String {
        guard let data = try? JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    private static func hex16(_ value: UInt16) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: 4 - digits.count) + digits
    }
}
