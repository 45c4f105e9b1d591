import AccessoryKit

/// The SQL for each storage write, as ``AccessoryStore``'s with PostgreSQL's parameters (`$1`)
/// and types (BYTEA, BOOLEAN); the rows are decoded by ``StoredRows``, as SQLite's are.
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
        var descriptors: [String: DiscoveryDescriptor] = [:]
        try connection.run(StoredRows.accessories) { row throws(StorageError) in
            state.accessories.append(try StoredRows.accessory(row, location: location, descriptors: &descriptors))
        }
        try connection.run(StoredRows.registrations) { row throws(StorageError) in
            let (id, registration) = try StoredRows.registration(row, location: location)
            state.registrations[id] = registration
        }
        try connection.run(StoredRows.identities) { row throws(StorageError) in
            try StoredRows.identity(row, location: location, into: &state)
        }
        try connection.run("SELECT value FROM meta WHERE key = 'migration_complete'") { row throws(StorageError) in
            if row.text(0) == "1" { state.migrationComplete = true }
        }
        return state
    }
}
