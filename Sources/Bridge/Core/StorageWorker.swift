import AccessoryKit
import Dispatch
import Storage
import Synchronization

/// The store behind a thread of its own.
///
/// A commit waits for the disk (SQLite's `synchronous=FULL`: one fdatasync each; PostgreSQL's
/// `synchronous_commit = on`: a round trip and the server's flush), a locked
/// database for up to the busy timeout; neither may hold a thread of Swift's cooperative
/// pool, which the whole process shares. The runtime awaits each call, which suspends its
/// task without blocking a thread; the serial queue keeps commits in the order they were
/// asked for.
final class StorageWorker: Sendable {
    private let store: any AccessoryStorage
    private let queue = DispatchQueue(label: "aabridge.storage")
    /// How long each commit took (`/metrics`).
    let commitLatency = LatencyHistogram()
    private let lastFailed = Atomic<Bool>(false)
    /// Whether the latest commit failed (`/healthz` says so until one succeeds).
    var lastCommitFailed: Bool { lastFailed.load(ordering: .relaxed) }

    init(store: any AccessoryStorage) { self.store = store }

    /// Commits `writes` in one transaction.
    /// - Returns: the error when nothing was committed.
    func apply(_ writes: [StorageWrite]) async -> StorageError? {
        guard !writes.isEmpty else { return nil }
        return await withCheckedContinuation { (continuation: CheckedContinuation<StorageError?, Never>) in
            queue.async { [self, store] in
                let start = ContinuousClock.now
                do throws(StorageError) {
                    try store.apply(writes)
                    commitLatency.observe(ContinuousClock.now - start)
                    self.lastFailed.store(false, ordering: .relaxed)
                    continuation.resume(returning: nil)
                } catch {
                    self.lastFailed.store(true, ordering: .relaxed)
                    continuation.resume(returning: error)
                }
            }
        }
    }

    /// The whole stored state, read after every commit asked for before (a cluster instance
    /// takes what other instances stored: docs/scaling.md).
    /// With `ids`, only those accessories' state (``AccessoryStorage/load(accessories:)``).
    func load(accessories ids: [BluetoothAddress]? = nil) async -> Result<RestoredState, StorageError> {
        await withCheckedContinuation { (continuation: CheckedContinuation<Result<RestoredState, StorageError>, Never>) in
            queue.async { [store] in
                do throws(StorageError) {
                    let state = if let ids { try store.load(accessories: ids) } else { try store.load() }
                    continuation.resume(returning: .success(state))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
    }

    /// Closes the database after every commit asked for before.
    func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { [store] in
                store.close()
                continuation.resume()
            }
        }
    }
}
