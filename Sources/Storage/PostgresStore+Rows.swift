import AccessoryKit

/// The writes (``StoredWrites``, the same SQL as ``AccessoryStore``'s) with PostgreSQL's
/// parameter types, and `load`'s reads, decoded by ``StoredRows`` as SQLite's are.
extension PostgresStore {
    static func perform(_ write: StorageWrite, on connection: PostgresConnection, now: Int64) throws(StorageError) {
        let (sql, parameters): (String, [PostgresValue]) = StoredWrites.statement(write, now: now)
        try connection.run(sql, parameters)
    }

    static func replaceSources(
        _ sources: [BluetoothAddress], for accessory: BluetoothAddress, on connection: PostgresConnection
    ) throws(StorageError) {
        try connection.run(StoredWrites.deleteSources, [StoredWrites.value(accessory)])
        for row in StoredWrites.sourceRows(sources, for: accessory) as [[PostgresValue]] {
            try connection.run(StoredWrites.insertSource, row)
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
