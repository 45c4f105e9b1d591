import AccessoryKit

/// The SQL for each storage write, and `load`'s reads (the rows are decoded by ``StoredRows``,
/// shared with ``PostgresStore``).
extension AccessoryStore {
    static func perform(_ write: StorageWrite, on connection: SQLiteConnection, now: Int64) throws(StorageError) {
        switch write {
        case .upsertAccessory(let accessory):
            // An upsert, not INSERT OR REPLACE: REPLACE deletes the row first, which would
            // cascade to the accessory's registration and sources.
            try connection.run(
                """
                INSERT INTO accessories (id, display_name, product, state, bluetooth_identifier, ssid, bridging_identifier, descriptor, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET display_name = excluded.display_name, product = excluded.product,
                    state = excluded.state, bluetooth_identifier = excluded.bluetooth_identifier, ssid = excluded.ssid,
                    bridging_identifier = excluded.bridging_identifier, descriptor = excluded.descriptor,
                    updated_at = excluded.updated_at
                """,
                [
                    value(accessory.id), .text(accessory.displayName), .text(accessory.product),
                    .integer(Int64(accessory.state.rawValue)), .text(accessory.bluetoothIdentifier.uuidString),
                    value(accessory.ssid), accessory.bluetoothTransportBridgingIdentifier.map { .blob($0) } ?? .null,
                    .text(DescriptorRecord.encode(accessory.descriptor)), .integer(now),
                ])
        case .deleteAccessory(let id):
            // The registration and sources go with it (ON DELETE CASCADE).
            try connection.run("DELETE FROM accessories WHERE id = ?", [value(id)])
        case .upsertRegistration(let id, let registration):
            let configuration = registration.configuration
            try connection.run(
                """
                INSERT INTO registrations (accessory_id, capabilities, placement, primary_source, secondary_source, invalidated, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (accessory_id) DO UPDATE SET capabilities = excluded.capabilities, placement = excluded.placement,
                    primary_source = excluded.primary_source, secondary_source = excluded.secondary_source,
                    invalidated = excluded.invalidated, updated_at = excluded.updated_at
                """,
                [
                    value(id), .integer(Int64(configuration.deviceCapabilities.rawValue)),
                    value(configuration.devicePlacement?.rawValue),
                    value(configuration.primaryAudioSourceDeviceIdentifier),
                    value(configuration.secondaryAudioSourceDeviceIdentifier),
                    .integer(registration.isInvalidated ? 1 : 0), .integer(now),
                ])
        case .deleteRegistration(let id):
            try connection.run("DELETE FROM registrations WHERE accessory_id = ?", [value(id)])
        case .saveKeys(let id, let keys):
            try connection.run(
                """
                INSERT INTO identities (accessory_id, irk, encryption_key, updated_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (accessory_id) DO UPDATE SET irk = excluded.irk, encryption_key = excluded.encryption_key,
                    updated_at = excluded.updated_at
                """,
                [value(id), keys.irk.map { .blob($0.bytes) } ?? .null, keys.encryptionKey.map { .blob($0.bytes) } ?? .null, .integer(now)])
        case .saveFollowedAddress(let id, let followed):
            try connection.run(
                """
                INSERT INTO identities (accessory_id, followed_address, updated_at) VALUES (?, ?, ?)
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
        _ sources: [BluetoothAddress], for accessory: BluetoothAddress, on connection: SQLiteConnection
    ) throws(StorageError) {
        try connection.run("DELETE FROM sources WHERE accessory_id = ?", [value(accessory)])
        for (position, source) in sources.enumerated() {
            try connection.run(
                "INSERT INTO sources (accessory_id, position, source) VALUES (?, ?, ?)",
                [value(accessory), .integer(Int64(position)), value(source)])
        }
    }

    static func readState(_ connection: SQLiteConnection) throws(StorageError) -> RestoredState {
        var state = RestoredState()
        let path = connection.path
        var descriptors: [String: DiscoveryDescriptor] = [:]
        try connection.run(StoredRows.accessories) { row throws(StorageError) in
            state.accessories.append(try StoredRows.accessory(row, location: path, descriptors: &descriptors))
        }
        try connection.run(StoredRows.registrations) { row throws(StorageError) in
            let (id, registration) = try StoredRows.registration(row, location: path)
            state.registrations[id] = registration
        }
        try connection.run(StoredRows.identities) { row throws(StorageError) in
            try StoredRows.identity(row, location: path, into: &state)
        }
        state.migrationComplete = try connection.scalar("SELECT value FROM meta WHERE key = 'migration_complete'") == "1"
        return state
    }
}
