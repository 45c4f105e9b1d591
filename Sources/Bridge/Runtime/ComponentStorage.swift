import AccessoryKit
import Storage

/// The storage hook a component may need (``ComponentContext/storage``): a cluster's
/// takeover reads the store, a hand-over commits what waits, a lost partition's writes are
/// dropped. Everything else reaches storage only through the output step's commit policy.
struct ComponentStorage {
    private let core: RuntimeCore
    private let diagnostics: Diagnostics

    init(core: RuntimeCore, diagnostics: Diagnostics) {
        self.core = core
        self.diagnostics = diagnostics
    }

    /// The stored state of `ids` (all with nil).
    func load(accessories ids: [BluetoothAddress]?) async -> Result<RestoredState, StorageError> {
        await core.storage.load(accessories: ids)
    }

    /// Commits the deferred telemetry writes now (`context` names it in a storage error).
    func flushDeferredWrites(at now: Timestamp, context: String) async { await core.flushDeferredWrites(at: now, context: context) }

    /// Drops the deferred writes of the accessories `lost` says (their partition is gone).
    func dropDeferredWrites(where lost: (BluetoothAddress) -> Bool) { core.dropDeferredWrites(where: lost) }

    /// Counts and logs a failed read or commit.
    func failed(_ error: StorageError, context: String) { diagnostics.storageFailed(error, context: context) }
}
