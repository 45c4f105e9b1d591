import AccessoryKit

/// The writes (``StoredWrites``, the same SQL as ``PostgresStore``'s) with SQLite's parameter
/// types, and `load`'s reads (the rows are decoded by ``StoredRows``, shared with ``PostgresStore``).
extension AccessoryStore {
    static func perform(_ write: StorageWrite, on connection: SQLiteConnection, now: Int64) throws(StorageError) {
        let (sql, parameters): (String, [SQLiteConnection.Value]) = StoredWrites.statement(write, now: now)
        try connection.run(sql, parameters)
    }

    static func replaceSources(
        _ sources: [BluetoothAddress], for accessory: BluetoothAddress, on connection: SQLiteConnection
    ) throws(StorageError) {
        try connection.run(StoredWrites.deleteSources, [StoredWrites.value(accessory)])
        for row in StoredWrites.sourceRows(sources, for: accessory) as [[SQLiteConnection.Value]] {
            try connection.run(StoredWrites.insertSource, row)
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
