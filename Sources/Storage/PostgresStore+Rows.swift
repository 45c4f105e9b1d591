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

    /// Every accessory's state, or with `ids` only theirs (one query per table and accessory).
    static func readState(_ connection: PostgresConnection, only ids: [BluetoothAddress]? = nil) throws(StorageError) -> RestoredState {
        var state = RestoredState()
        let location = connection.location
        var descriptors: [String: DiscoveryDescriptor] = [:]
        // Every row, or each accessory's rows.
        let selections: [(all: String, one: String)] = [
            (StoredRows.accessories, StoredRows.accessory), (StoredRows.registrations, StoredRows.registration),
            (StoredRows.identities, StoredRows.identity),
        ]
        for (table, selection) in selections.enumerated() {
            let read = { (row: PostgresRow) throws(StorageError) in
                switch table {
                case 0: state.accessories.append(try StoredRows.accessory(row, location: location, descriptors: &descriptors))
                case 1:
                    let (id, registration) = try StoredRows.registration(row, location: location)
                    state.registrations[id] = registration
                default: try StoredRows.identity(row, location: location, into: &state)
                }
            }
            guard let ids else {
                try connection.run(selection.all, row: read)
                continue
            }
            for id in ids { try connection.run(selection.one, [StoredWrites.value(id)], row: read) }
        }
        try connection.run("SELECT value FROM meta WHERE key = 'migration_complete'") { row throws(StorageError) in
            if row.text(0) == "1" { state.migrationComplete = true }
        }
        return state
    }
}
