import AccessoryKit

/// The writes (``StoredWrites``, the same SQL as ``AccessoryStore``'s) with PostgreSQL's
/// parameter types, and `load`'s reads, decoded by ``StoredRows`` as SQLite's are.
extension PostgresStore {
    static func perform(_ write: StorageWrite, on connection: PostgresConnection, now: Int64) throws(StorageError) {
        for (sql, parameters) in StoredWrites.statements(write, now: now) as [(String, [PostgresValue])] {
            try connection.run(sql, parameters)
        }
    }

    static func replaceSources(
        _ sources: [BluetoothAddress], for accessory: BluetoothAddress, on connection: PostgresConnection
    ) throws(StorageError) {
        try connection.run(StoredWrites.deleteSources, [StoredWrites.value(accessory)])
        for row in StoredWrites.sourceRows(sources, for: accessory) as [[PostgresValue]] {
            try connection.run(StoredWrites.insertSource, row)
        }
    }

    /// Every accessory's state, or with `ids` only theirs (``StoredRows/readState(location:only:run:)``).
    static func readState(_ connection: PostgresConnection, only ids: [BluetoothAddress]? = nil) throws(StorageError) -> RestoredState {
        try StoredRows.readState(location: connection.location, only: ids) {
            (sql, id, row: (PostgresRow) throws(StorageError) -> Void) throws(StorageError) in
            try connection.run(sql, id.map { [StoredWrites.value($0)] } ?? [], row: row)
        }
    }
}
