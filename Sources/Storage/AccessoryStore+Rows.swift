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

    /// Every accessory's state, or with `ids` only theirs (one query per table and accessory).
    static func readState(_ connection: SQLiteConnection, only ids: [BluetoothAddress]? = nil) throws(StorageError) -> RestoredState {
        var state = RestoredState()
        let path = connection.path
        var descriptors: [String: DiscoveryDescriptor] = [:]
        // Every row, or each accessory's rows.
        let selections: [(all: String, one: String)] = [
            (StoredRows.accessories, StoredRows.accessory), (StoredRows.registrations, StoredRows.registration),
            (StoredRows.identities, StoredRows.identity),
        ]
        for (table, selection) in selections.enumerated() {
            let read = { (row: SQLiteConnection.Row) throws(StorageError) in
                switch table {
                case 0: state.accessories.append(try StoredRows.accessory(row, location: path, descriptors: &descriptors))
                case 1:
                    let (id, registration) = try StoredRows.registration(row, location: path)
                    state.registrations[id] = registration
                default: try StoredRows.identity(row, location: path, into: &state)
                }
            }
            guard let ids else {
                try connection.run(selection.all, row: read)
                continue
            }
            for id in ids { try connection.run(selection.one, [StoredWrites.value(id)], row: read) }
        }
        state.migrationComplete = try connection.scalar("SELECT value FROM meta WHERE key = 'migration_complete'") == "1"
        return state
    }
}
