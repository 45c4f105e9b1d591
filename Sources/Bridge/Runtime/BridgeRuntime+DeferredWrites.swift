import AccessoryKit
import Storage

extension BridgeRuntime {
    /// Publishes what telemetry (or a tick) caused at once, and keeps its registration writes
    /// for the next ``flushDeferredWrites(context:)`` instead of one transaction each.
    ///
    /// Every committed placement, source or availability change rewrites the accessory's
    /// registration; committed one by one (`synchronous=FULL`, an fsync each) a placement
    /// flood was processed at the disk's fsync rate, about 5,000-10,000 a second here and far
    /// less on a gateway's SD card, which it also wears. Only telemetry goes this way: nothing
    /// here is acknowledged to anyone, and a crash loses at most the changes since the last
    /// tick (50 ms), which the accessory's next report restores. Requests still commit before
    /// they answer (``handleRequest(name:payload:)``), after the deferred writes.
    func deferAndPublish(_ outputs: [EngineOutput], at now: Timestamp, context: String) {
        var immediate = false
        for case .storage(let write) in outputs {
            if case .upsertRegistration = write { continue }
            immediate = true
        }
        guard !immediate else {
            // Not expected from telemetry; keep the order of the writes and commit at once.
            flushDeferredWrites(context: context)
            commitAndPublish(outputs, at: now, context: context)
            return
        }
        for case .storage(.upsertRegistration(let id, let registration)) in outputs {
            deferredRegistrations[id] = registration
        }
        publish(outputs, at: now)
    }

    /// Commits the deferred registration writes in one transaction. On failure they stay
    /// deferred (retried at the next tick) and the error is logged at most once a minute.
    @discardableResult
    func flushDeferredWrites(context: String) -> StorageError? {
        guard !deferredRegistrations.isEmpty else { return nil }
        // Sorted so the same state always writes in the same order.
        let writes = deferredRegistrations.sorted { $0.key < $1.key }.map { StorageWrite.upsertRegistration($0.key, $0.value) }
        do {
            try store.apply(writes)
            deferredRegistrations.removeAll(keepingCapacity: true)
            return nil
        } catch {
            counters.storageFailures += 1
            let admitted = rejectionLog.admit("\u{0}storage-deferred", now: clock().milliseconds)
            if admitted.admitted {
                let also = admitted.suppressed > 0 ? " (failed \(admitted.suppressed) more times since the last line)" : ""
                logger.error("storage (\(context)): \(writes.count) telemetry changes not stored yet, retrying: \(error.message)\(also)")
            }
            return error
        }
    }

    /// A committed request wrote these accessories' registrations (or removed them): their
    /// deferred writes are older and must not be applied after it.
    func dropDeferredWrites(supersededBy outputs: [EngineOutput]) {
        guard !deferredRegistrations.isEmpty else { return }
        for case .storage(let write) in outputs {
            switch write {
            case .upsertRegistration(let id, _), .deleteRegistration(let id), .deleteAccessory(let id):
                deferredRegistrations[id] = nil
            case .upsertAccessory, .migrationComplete:
                break
            }
        }
    }
}
