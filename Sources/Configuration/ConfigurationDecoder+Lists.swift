import AccessoryKit

extension ConfigurationDecoder {
    // MARK: gateways

    func gateways(_ node: YAMLNode?, baseTopic: String) -> [GatewayConfiguration] {
        guard let items = list(node, at: "gateways") else { return [] }
        var gateways: [GatewayConfiguration] = []
        var seen: [String: Int] = [:]
        for (index, item) in items.enumerated() {
            let path = "gateways[\(index)]"
            if item.isNull {
                fail(path, "expected a gateway mapping, found null", at: item)
                continue
            }
            guard let entry = fields(item, at: path, allowed: ["name", "format", "topic", "status_topic", "adapter", "scanning"]) else {
                continue
            }
            let name = requiredString(entry, "name")
            if let name {
                if let first = seen[name] {
                    fail(entry.path("name"), "duplicate gateway name '\(name)' (also gateways[\(first)])", at: entry["name"])
                } else {
                    seen[name] = index
                }
            }
            let format: GatewayConfiguration.Format?
            if let node = entry["format"], !node.isNull {
                format = enumeration(GatewayConfiguration.Format.self, node, at: entry.path("format"))
            } else {
                let allowed = GatewayConfiguration.Format.allCases.map(\.rawValue).joined(separator: " | ")
                fail(entry.path("format"), "is required (\(allowed))", at: entry["format"])
                format = nil
            }
            let topic = topicFilter(entry, "topic")
            // status_topic: missing means the format's default; an explicit null means none.
            var statusTopic: String?? = nil
            if let node = entry["status_topic"] {
                statusTopic = node.isNull ? .some(nil) : topicFilter(entry, "status_topic").map { .some($0) }
            }
            guard let name, let format else { continue }
            var gateway = GatewayConfiguration(name: name, format: format, topic: topic, statusTopic: statusTopic, baseTopic: baseTopic)
            if format == .bluez {
                bluez(entry, name: name, into: &gateway)
            } else {
                for key in ["adapter", "scanning"] where entry[key] != nil {
                    fail(entry.path(key), "only a bluez gateway has \(key)", at: entry[key])
                }
            }
            gateways.append(gateway)
        }
        return gateways
    }

    /// A `bluez` entry's own keys. Its name is the heard gateway's (the node `rooms:` names),
    /// so it is one topic level as every node name is; its adapter becomes part of a D-Bus
    /// object path (`/org/bluez/hci0`), so only BlueZ's own adapter names pass.
    private func bluez(_ entry: Fields, name: String, into gateway: inout GatewayConfiguration) {
        for key in ["topic", "status_topic"] where entry[key] != nil {
            fail(entry.path(key), "a bluez gateway is heard over D-Bus and has no \(key)", at: entry[key])
        }
        if name.isEmpty || name.contains(where: { "/+#".contains($0) }) {
            fail(entry.path("name"), "a bluez gateway's name is its node name for rooms: one topic level, no /, + or #", at: entry["name"])
        }
        if let node = entry["adapter"], !node.isNull, let adapter = string(node, at: entry.path("adapter")) {
            let digits = adapter.dropFirst(3)
            if adapter.hasPrefix("hci"), (1...3).contains(digits.count), digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) {
                gateway.adapter = adapter
            } else {
                fail(
                    entry.path("adapter"), "expected an adapter name such as hci0 (bluetoothctl list, or ls /sys/class/bluetooth)", at: node
                )
            }
        }
        if let node = entry["scanning"], !node.isNull,
            let scanning = enumeration(GatewayConfiguration.Scanning.self, node, at: entry.path("scanning"))
        {
            gateway.scanning = scanning
        }
    }

    /// A topic filter key, checked for wildcard placement.
    private func topicFilter(_ entry: Fields, _ key: String) -> String? {
        guard let topic = requiredOrDefault(entry, key) else { return nil }
        if let problem = Self.topicFilterProblem(topic) {
            fail(entry.path(key), problem, at: entry[key])
            return nil
        }
        return topic
    }

    // MARK: accessories

    func accessories(_ node: YAMLNode?) -> [AccessoryConfiguration] {
        guard let items = list(node, at: "accessories") else { return [] }
        var accessories: [AccessoryConfiguration] = []
        var seen: [BluetoothAddress: Int] = [:]
        for (index, item) in items.enumerated() {
            let path = "accessories[\(index)]"
            if item.isNull {
                fail(path, "expected an accessory mapping, found null", at: item)
                continue
            }
            guard let entry = fields(item, at: path, allowed: ["id", "name", "product", "irk", "encryption_key", "ssid", "ssid_prefix"])
            else { continue }
            var id: BluetoothAddress?
            if let node = entry["id"], !node.isNull {
                id = address(node, at: entry.path("id"))
            } else {
                fail(entry.path("id"), "is required: the accessory's Bluetooth address", at: entry["id"])
            }
            if let address = id {
                if let first = seen[address] {
                    fail(entry.path("id"), "duplicate accessory \(address) (also accessories[\(first)])", at: entry["id"])
                    id = nil
                } else {
                    seen[address] = index
                }
            }
            let name = requiredString(entry, "name")
            // An unknown product is reported by MigrationItem.validate(products:), with the other migration rules.
            let product = requiredString(entry, "product")
            let (irk, irkFailed) = key(entry["irk"], at: entry.path("irk"))
            let (encryptionKey, encryptionKeyFailed) = key(entry["encryption_key"], at: entry.path("encryption_key"))
            let ssid = string(entry["ssid"], at: entry.path("ssid"))
            let ssidPrefix = string(entry["ssid_prefix"], at: entry.path("ssid_prefix"))
            guard let id, let name, let product, !irkFailed, !encryptionKeyFailed else { continue }
            let migration = MigrationItem(id: id, name: name, product: product, ssid: ssid, ssidPrefix: ssidPrefix)
            accessories.append(AccessoryConfiguration(migration: migration, keys: AccessoryKeys(irk: irk, encryptionKey: encryptionKey)))
            accessoryIndices.append(index)
        }
        return accessories
    }

    /// A key in either form of identity.md; the error names the path, never the value.
    /// - Returns: the key (nil when absent or null), and whether a value was given but refused.
    func key(_ node: YAMLNode?, at path: String) -> (AccessoryKey?, failed: Bool) {
        guard let node, !node.isNull else { return (nil, false) }
        guard let text = scalarText(node, at: path, expected: "a key") else { return (nil, true) }
        switch AccessoryKey.parse(text) {
        case .success(let key): return (key, false)
        case .failure(let error):
            fail(path, error.description, at: node)
            return (nil, true)
        }
    }

    // MARK: sources

    func sources(_ node: YAMLNode?) -> [SourceConfiguration] {
        guard let items = list(node, at: "sources") else { return [] }
        var sources: [SourceConfiguration] = []
        var seen: [BluetoothAddress: Int] = [:]
        for (index, item) in items.enumerated() {
            let path = "sources[\(index)]"
            if item.isNull {
                fail(path, "expected a source mapping, found null", at: item)
                continue
            }
            guard let entry = fields(item, at: path, allowed: ["address", "name"]) else { continue }
            var address: BluetoothAddress?
            if let node = entry["address"], !node.isNull {
                address = self.address(node, at: entry.path("address"))
            } else {
                fail(entry.path("address"), "is required: the source device's Bluetooth address", at: entry["address"])
            }
            if let known = address {
                if let first = seen[known] {
                    fail(entry.path("address"), "duplicate source \(known) (also sources[\(first)])", at: entry["address"])
                    address = nil
                } else {
                    seen[known] = index
                }
            }
            let name = requiredString(entry, "name")
            guard let address, let name else { continue }
            sources.append(SourceConfiguration(address: address, name: name))
        }
        return sources
    }
}
