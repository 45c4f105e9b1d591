import AccessoryKit

/// The writes (``StoredWrites``, the same SQL as ``PostgresStore``'s) with SQLite's parameter
/// types, and `load`'s reads (the rows are decoded by ``StoredRows``, shared with ``PostgresStore``).
extension AccessoryStore {
    static func perform(_ write: StorageWrite, on connection: SQLiteConnection, now: Int64) throws(StorageError) {
        for (sql, parameters) in StoredWrites.statements(write, now: now) as [(String, [SQLiteConnection.Value])] {
            try connection.run(sql, parameters)
        }
    }

    static func replaceSources(
        _ sources: [BluetoothAddress], for accessory: BluetoothAddress, on connection: SQLiteConnection
    ) throws(StorageError) {
        try connection.run(StoredWrites.deleteSources, [StoredWrites.value(accessory)])
        for row in StoredWrites.sourceRows(sources, for: accessory) as [[SQLiteConnection.Value]] {
            try connection.run(StoredWrites.insertSource, row)
        }
    }

    /// Every accessory's state, or with `ids` only theirs (``StoredRows/readState(location:only:run:)``).
    static func readState(_ connection: SQLiteConnection, only ids: [BluetoothAddress]? = nil) throws(StorageError) -> RestoredState {
        try StoredRows.readState(location: connection.path, only: ids) {
            (sql, id, row: (SQLiteConnection.Row) throws(StorageError) -> Void) throws(StorageError) in
            try connection.run(sql, id.map { [StoredWrites.value($0)] } ?? [], row: row)
        }
    }
}
