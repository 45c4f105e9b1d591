import AccessoryKit

/// The SQL for each storage write and the decoding of rows, as ``AccessoryStore``'s with
/// PostgreSQL's parameters (`$1`) and types (BYTEA, BOOLEAN).
extension PostgresStore {
    private static func value(_ address: BluetoothAddress) -> PostgresValue { .integer(Int64(bitPattern: address.rawValue)) }

    private static func value(_ address: BluetoothAddress?) -> PostgresValue { address.map { value($0) } ?? .null }

    private static func value(_ text: String?) -> PostgresValue { text.map { .text($0) } ?? .null }

    static func perform(_ write: StorageWrite, on connection: PostgresConnection, now: Int64) throws(StorageError) {
        switch write {
        case .upsertAccessory(let accessory):
            try connection.run(
                """
                INSERT INTO accessories (id, display_name, product, state, bluetooth_identifier, ssid, bridging_identifier, descriptor, updated_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                ON CONFLICT (id) DO UPDATE SET display_name = excluded.display_name, product = excluded.product,
                    state = excluded.state, bluetooth_identifier = excluded.bluetooth_identifier, ssid = excluded.ssid,
                    bridging_identifier = excluded.bridging_identifier, descriptor = excluded.descriptor,
                    updated_at = excluded.updated_at
                """,
                [
                    value(accessory.id), .text(accessory.displayName), .text(accessory.product),
                    .integer(Int64(accessory.state.rawValue)), .text(accessory.bluetoothIdentifier.uuidString),
                    value(accessory.ssid), accessory.bluetoothTransportBridgingIdentifier.map { .bytes($0) } ?? .null,
                    .text(DescriptorRecord.encode(accessory.descriptor)), .integer(now),
                ])
        case .deleteAccessory(let id):
            try connection.run("DELETE FROM accessories WHERE id = $1", [value(id)])
        case .upsertRegistration(let id, let registration):
            let configuration = registration.configuration
            try connection.run(
                """
                INSERT INTO registrations (accessory_id, capabilities, placement, primary_source, secondary_source, invalidated, updated_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7)
                ON CONFLICT (accessory_id) DO UPDATE SET capabilities = excluded.capabilities, placement = excluded.placement,
                    primary_source = excluded.primary_source, secondary_source = excluded.secondary_source,
                    invalidated = excluded.invalidated, updated_at = excluded.updated_at
                """,
                [
                    value(id), .integer(Int64(configuration.deviceCapabilities.rawValue)),
                    value(configuration.devicePlacement?.rawValue),
                    value(configuration.primaryAudioSourceDeviceIdentifier),
                    value(configuration.secondaryAudioSourceDeviceIdentifier),
                    .bool(registration.isInvalidated), .integer(now),
                ])
        case .deleteRegistration(let id):
            try connection.run("DELETE FROM registrations WHERE accessory_id = $1", [value(id)])
        case .saveKeys(let id, let keys):
            try connection.run(
                """
                INSERT INTO identities (accessory_id, irk, encryption_key, updated_at) VALUES ($1, $2, $3, $4)
                ON CONFLICT (accessory_id) DO UPDATE SET irk = excluded.irk, encryption_key = excluded.encryption_key,
                    updated_at = excluded.updated_at
                """,
                [
                    value(id), keys.irk.map { .bytes($0.bytes) } ?? .null, keys.encryptionKey.map { .bytes($0.bytes) } ?? .null,
                    .integer(now),
                ])
        case .saveFollowedAddress(let id, let followed):
            try connection.run(
                """
                INSERT INTO identities (accessory_id, followed_address, updated_at) VALUES ($1, $2, $3)
                ON CONFLICT (accessory_id) DO UPDATE SET followed_address = excluded.followed_address,
                    updated_at = excluded.updated_at
                """,
                [value(id), value(followed), .integer(now)])
        case .migrationComplete:
            try connection.run(
                """
                INSERT INTO meta (key, value) VALUES ('migration_complete', '1')
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """)
        }
    }

    static func replaceSources(
        _ sources: [BluetoothAddress], for accessory: BluetoothAddress, on connection: PostgresConnection
    ) throws(StorageError) {
        try connection.run("DELETE FROM sources WHERE accessory_id = $1", [value(accessory)])
        for (position, source) in sources.enumerated() {
            try connection.run(
                "INSERT INTO sources (accessory_id, position, source) VALUES ($1, $2, $3)",
                [value(accessory), .integer(Int64(position)), value(source)])
        }
    }

    static func readState(_ connection: PostgresConnection) throws(StorageError) -> RestoredState {
        var state = RestoredState()
        let location = connection.location
        func damaged(_ id: BluetoothAddress, _ what: String) -> StorageError {
            StorageError(
                .corrupt,
                message: "\(location): the stored \(what) of accessory \(id) cannot be read; restore a backup or remove the accessory")
        }
        let address = AccessoryStore.address
        var descriptors: [String: DiscoveryDescriptor] = [:]
        try connection.run(
            """
            SELECT id, display_name, product, state, bluetooth_identifier, ssid, bridging_identifier, descriptor
            FROM accessories ORDER BY id
            """
        ) { row throws(StorageError) in
            let id = address(row.integer(0))
            guard let stateValue = Int(exactly: row.integer(3)), let accessoryState = Accessory.State(rawValue: stateValue) else {
                throw damaged(id, "authorization state")
            }
            guard let identifierText = row.text(4), let identifier = BluetoothUUID(identifierText) else {
                throw damaged(id, "bluetooth identifier")
            }
            guard let descriptorText = row.text(7),
                let descriptor = descriptors[descriptorText] ?? DescriptorRecord.decode(descriptorText)
            else {
                throw damaged(id, "discovery descriptor")
            }
            descriptors[descriptorText] = descriptor
            state.accessories.append(
                Accessory(
                    id: id, displayName: row.text(1) ?? "", product: row.text(2) ?? "", descriptor: descriptor,
                    state: accessoryState, bluetoothIdentifier: identifier, ssid: row.text(5),
                    bluetoothTransportBridgingIdentifier: row.bytes(6)))
        }
        try connection.run(
            "SELECT accessory_id, capabilities, placement, primary_source, secondary_source, invalidated FROM registrations"
        ) { row throws(StorageError) in
            let id = address(row.integer(0))
            guard let raw = UInt8(exactly: row.integer(1)) else { throw damaged(id, "registration capabilities") }
            var placement: AccessoryControlDevice.Placement?
            if let text = row.text(2) {
                guard let value = AccessoryControlDevice.Placement(rawValue: text) else { throw damaged(id, "registration placement") }
                placement = value
            }
            let configuration = AccessoryControlDevice.Configuration(
                devicePlacement: placement, deviceCapabilities: .init(rawValue: raw),
                primaryAudioSourceDeviceIdentifier: row.optionalInteger(3).map(address),
                secondaryAudioSourceDeviceIdentifier: row.optionalInteger(4).map(address))
            state.registrations[id] = Registration(configuration: configuration, isInvalidated: row.bool(5))
        }
        try connection.run("SELECT accessory_id, irk, encryption_key, followed_address FROM identities") { row throws(StorageError) in
            let id = address(row.integer(0))
            func key(_ column: Int32) throws(StorageError) -> AccessoryKey? {
                guard let bytes = row.bytes(column) else { return nil }
                guard let key = AccessoryKey(bytes: bytes) else { throw damaged(id, "key") }
                return key
            }
            let keys = AccessoryKeys(irk: try key(1), encryptionKey: try key(2))
            if !keys.isEmpty { state.keys[id] = keys }
            if let followed = row.optionalInteger(3) { state.followedAddresses[id] = address(followed) }
        }
        try connection.run("SELECT value FROM meta WHERE key = 'migration_complete'") { row throws(StorageError) in
            if row.text(0) == "1" { state.migrationComplete = true }
        }
        return state
    }
}
