import AccessoryKit

/// What the runtime needs of a store, so that it runs on SQLite (``AccessoryStore``, the
/// embedded default) or PostgreSQL (``PostgresStore``) alike.
///
/// Both give the same guarantees: `apply` commits everything or nothing and returns only
/// once the commit is durable, so a request is committed before it is answered; `load` reads
/// one consistent snapshot. What only one backend can do (SQLite's online backup and
/// integrity check) stays on the concrete type.
public protocol AccessoryStorage: AnyObject, Sendable {
    /// What the store is, for log lines: the SQLite path, or the PostgreSQL URL without its password.
    var location: String { get }
    /// Transactions `apply` has committed since the store was opened.
    var committedTransactions: Int { get }
    /// Whether every write is bound to fail (a read-only database); reads still work.
    var isReadOnly: Bool { get }
    /// Commits `writes` and the given source lists in one transaction, durable on return;
    /// on any failure nothing is stored.
    func apply(_ writes: [StorageWrite], sources: [BluetoothAddress: [BluetoothAddress]]) throws(StorageError)
    /// The state to start the engine with, read as one consistent snapshot.
    func load() throws(StorageError) -> RestoredState
    /// The stored state of these accessories only (those not stored are absent), read as one
    /// consistent snapshot: what a cluster instance reloads when another changed them, without
    /// reading every accessory of the database for it.
    func load(accessories ids: [BluetoothAddress]) throws(StorageError) -> RestoredState
    /// The ordered connected sources of every accessory that has any.
    func loadSources() throws(StorageError) -> [BluetoothAddress: [BluetoothAddress]]
    /// Closes the store; later calls fail with `.closed`. Idempotent.
    func close()
}

extension AccessoryStorage {
    /// Commits `writes` alone (no source lists).
    public func apply(_ writes: [StorageWrite]) throws(StorageError) {
        try apply(writes, sources: [:])
    }

    /// Replaces the ordered connected sources of one stored accessory, durably.
    ///
    /// - Throws: `.constraint` when the accessory is not stored; the errors of `apply`.
    public func saveSources(_ sources: [BluetoothAddress], for accessory: BluetoothAddress) throws(StorageError) {
        try apply([], sources: [accessory: sources])
    }
}
