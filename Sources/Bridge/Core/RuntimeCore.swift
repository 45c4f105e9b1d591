import AccessoryKit
import Storage

/// The second stage: the engine and the commit policy.
///
/// - A request's storage writes are committed before it is answered; when they cannot be,
///   the engine keeps its previous state (the request ran on a copy) and the answer is
///   `unknown`: nothing is acknowledged that is not on disk.
/// - Telemetry (and ticks) change registrations many times a second in a flood; those writes
///   are kept, latest per accessory, and committed together by ``flushDeferredWrites()``
///   (the runtime calls it within ``deferredCommitMilliseconds``). Nothing about them is acknowledged to
///   anyone, and the accessory's next report restores what a crash loses.
/// Storage is reached through ``StorageWorker``, never on the cooperative pool.
final class RuntimeCore {
    /// The engine, which only this stage changes; ``view`` is how the others read it.
    private let holder: EngineHolder
    let view: EngineView
    let storage: StorageWorker
    private let diagnostics: Diagnostics
    /// Registration changes caused by telemetry, latest per accessory.
    private var deferredRegistrations: [BluetoothAddress: Registration] = [:]
    /// Traces (profile, last room) waiting the same way: a room change is no reason for a
    /// commit of its own.
    private var deferredTraces: [BluetoothAddress: AccessoryTrace] = [:]

    /// What this instance owns: it writes only its own accessories' rows (a single bridge owns
    /// them all). In a cluster the engine holds every accessory (to recognise them), and its
    /// ticks change accessories other instances own (their availability expires here, unheard);
    /// those changes stay in this engine's memory and are never stored. Requests are not
    /// filtered: the runtime hands this instance only the requests it answers.
    private let ownership: Ownership

    /// How long deferred telemetry writes wait to be committed together.
    static let deferredCommitMilliseconds: Int64 = 50

    init(engine: BridgeEngine, storage: StorageWorker, diagnostics: Diagnostics, ownership: Ownership) {
        holder = EngineHolder(engine)
        view = EngineView(holder)
        self.storage = storage
        self.diagnostics = diagnostics
        self.ownership = ownership
    }

    /// Engine work, as ``perform(_:at:)`` takes it.
    enum Work {
        /// Start the session (its writes committed before anything is published).
        case activate
        /// A sighting, a report or a `/set` update (`context` names it in a storage error).
        case telemetry(EngineInput, context: StaticString)
        /// Whatever is due now.
        case tick
        /// A request, committed before it is answered.
        case request(Request, name: String)
        /// State another cluster instance stored (``reload(_:from:routes:at:)``).
        case reload([BluetoothAddress], from: RestoredState, routes: [BluetoothAddress: BluetoothAddress])
        /// End the session (shutdown).
        case invalidate
    }

    /// What one piece of work came to: the outputs to carry out (none when what they say
    /// could not be stored), a request's result, and the storage error when the work's own
    /// commit failed (a request is then answered `unknown`; an activation stops the bridge).
    struct Outcome {
        var outputs: [EngineOutput] = []
        var result: RequestResult?
        var notStored: StorageError?
    }

    /// Runs `work` on the engine with its commit policy.
    @inline(__always)
    func perform(_ work: Work, at now: Timestamp) async -> Outcome {
        switch work {
        case .activate:
            switch await activate(at: now) {
            case .success(let outputs): return Outcome(outputs: outputs)
            case .failure(let error): return Outcome(notStored: error)
            }
        case .telemetry(let input, let context):
            return Outcome(outputs: await handleTelemetry(input, at: now, context: context))
        case .tick:
            return Outcome(outputs: await tick(at: now))
        case .request(let request, let name):
            switch await handleRequest(request, name: name, at: now) {
            case .committed(let step): return Outcome(outputs: step.outputs, result: step.result)
            case .notStored(let error): return Outcome(notStored: error)
            }
        case .reload(let ids, let stored, let routes):
            return Outcome(outputs: reload(ids, from: stored, routes: routes, at: now))
        case .invalidate:
            return Outcome(outputs: await invalidate(at: now) ?? [])
        }
    }

    /// Whether telemetry writes wait for ``flushDeferredWrites()``.
    var hasDeferredWrites: Bool { !deferredRegistrations.isEmpty || !deferredTraces.isEmpty }

    /// The next time the engine has something due (debounce, availability, picker timeout).
    var nextDeadline: Timestamp? { holder.engine.nextDeadline }

    /// Starts the session; the migration's writes are committed before anything is published.
    /// - Returns: the outputs to publish, or the error when they could not be stored. The
    ///   engine is activated either way (its state is not rolled back), so after a failure
    ///   the session must not go on: its accessories would not be on disk, and every later
    ///   write that refers to them would fail (the runtime stops, ``BridgeRuntime/run(signals:)``).
    func activate(at now: Timestamp) async -> Result<[EngineOutput], StorageError> {
        let step = holder.engine.handle(.activate, at: now)
        if let error = await storage.apply(Self.writes(in: step.outputs)) { return .failure(error) }
        return .success(step.outputs)
    }

    /// Ends the session (`invalidated`) after committing what telemetry left deferred.
    func invalidate(at now: Timestamp) async -> [EngineOutput]? {
        await flushDeferredWrites(at: now, context: "shutdown")
        let step = holder.engine.handle(.invalidate, at: now)
        return await commit(step.outputs, context: "shutdown") ? step.outputs : nil
    }

    /// Telemetry (a sighting, a report, a `/set` update): its outputs are published at once,
    /// its registration writes deferred.
    func handleTelemetry(_ input: EngineInput, at now: Timestamp, context: StaticString) async -> [EngineOutput] {
        let start = ContinuousClock.now
        let step = holder.engine.handle(input, at: now)
        let stored = await deferWrites(step.outputs, at: now, context: context)
        if step.outputs.contains(where: { if case .decision = $0 { true } else { false } }) {
            diagnostics.decisionLatency.observe(ContinuousClock.now - start)
        }
        return stored ? step.outputs : []
    }

    /// Whatever is due in the engine at `now` (nothing when nothing is).
    func tick(at now: Timestamp) async -> [EngineOutput] {
        guard let deadline = holder.engine.nextDeadline, deadline <= now else { return [] }
        let step = holder.engine.handle(.tick, at: now)
        return await deferWrites(step.outputs, at: now, context: "tick") ? step.outputs : []
    }

    /// The outcome of a request for the engine: committed (publish the outputs, answer with
    /// the result) or not stored (answer `unknown`, nothing changed).
    enum RequestOutcome {
        case committed(EngineStep)
        case notStored(StorageError)
    }

    func handleRequest(_ request: Request, name: String, at now: Timestamp) async -> RequestOutcome {
        var candidate = holder.engine
        let step = candidate.handle(.request(request, role: .container), at: now)
        // Telemetry's deferred writes first, so the request's come after them on disk. If
        // they fail, the request is still tried on its own (its writes supersede them).
        await flushDeferredWrites(at: now, context: "before request \(name)")
        if let error = await storage.apply(Self.writes(in: step.outputs)) {
            diagnostics.storageFailed(error, context: "request \(name)")
            return .notStored(error)
        }
        dropDeferredWrites(supersededBy: step.outputs)
        holder.engine = candidate
        return .committed(step)
    }

    /// Commits the deferred registration and trace writes in one transaction. On failure they
    /// stay deferred (tried again when next due) and the error is logged at most once a minute.
    @discardableResult
    func flushDeferredWrites(at now: Timestamp, context: String = "telemetry") async -> Bool {
        guard hasDeferredWrites else { return true }
        // Sorted so the same state always writes in the same order.
        let writes =
            deferredRegistrations.sorted { $0.key < $1.key }.map { StorageWrite.upsertRegistration($0.key, $0.value) }
            + deferredTraces.sorted { $0.key < $1.key }.map { StorageWrite.saveTrace($0.key, $0.value) }
        guard let error = await storage.apply(writes) else {
            // Nothing else ran meanwhile: the loop's one task was awaiting this commit.
            deferredRegistrations.removeAll(keepingCapacity: true)
            deferredTraces.removeAll(keepingCapacity: true)
            return true
        }
        diagnostics.counters.storageFailures += 1
        diagnostics.limited(
            .deferredStorage, at: now, .error,
            "storage (\(context)): \(writes.count) telemetry changes not stored yet, retrying: \(error.message)"
        ) {
            " (failed \($0) more times since the last line)"
        }
        return false
    }

    // MARK: - Helpers

    /// Keeps the registration writes among `outputs` for the next flush. Anything else to
    /// store (not expected from telemetry) is committed at once, after the deferred writes,
    /// so the order on disk is the order of the changes.
    /// - Returns: false when that immediate commit failed (nothing is published then).
    private func deferWrites(_ outputs: [EngineOutput], at now: Timestamp, context: StaticString) async -> Bool {
        let outputs = ownership.ownsEverything ? outputs : outputs.filter { Self.accessory(writtenBy: $0).map(ownership.owns) ?? true }
        var immediate = false
        for case .storage(let write) in outputs {
            switch write {
            case .upsertRegistration, .saveTrace: continue
            default: immediate = true
            }
        }
        guard !immediate else {
            await flushDeferredWrites(at: now, context: "\(context)")
            return await commit(outputs, context: "\(context)")
        }
        for case .storage(let write) in outputs {
            switch write {
            case .upsertRegistration(let id, let registration): deferredRegistrations[id] = registration
            case .saveTrace(let id, let trace): deferredTraces[id] = trace
            default: break
            }
        }
        return true
    }

    /// Commits the storage writes among `outputs` in one transaction.
    private func commit(_ outputs: [EngineOutput], context: String) async -> Bool {
        guard let error = await storage.apply(Self.writes(in: outputs)) else { return true }
        diagnostics.storageFailed(error, context: context)
        return false
    }

    private static func writes(in outputs: [EngineOutput]) -> [StorageWrite] {
        outputs.compactMap { output -> StorageWrite? in
            if case .storage(let write) = output { return write }
            return nil
        }
    }

    /// The accessory whose rows a storage output writes (nil: not a storage output, or the
    /// bridge's own `meta`).
    private static func accessory(writtenBy output: EngineOutput) -> BluetoothAddress? {
        guard case .storage(let write) = output else { return nil }
        return write.accessory
    }

    // MARK: - Cluster

    /// Takes the stored state of `ids` (another instance changed them, or this one took
    /// over their partition). Nothing is written: the state came from storage.
    /// `routes` are the previous owner's, on a takeover (``EngineInput/reload(_:ids:routes:)``).
    func reload(
        _ ids: [BluetoothAddress], from stored: RestoredState, routes: [BluetoothAddress: BluetoothAddress] = [:], at now: Timestamp
    ) -> [EngineOutput] {
        guard !ids.isEmpty else { return [] }
        return holder.engine.handle(.reload(stored, ids: ids, routes: routes), at: now).outputs
    }

    /// Forgets the deferred writes of accessories this instance no longer owns: their new
    /// owner took them over from storage, and a late write here would undo its changes.
    func dropDeferredWrites(where lost: (BluetoothAddress) -> Bool) {
        deferredRegistrations = deferredRegistrations.filter { !lost($0.key) }
        deferredTraces = deferredTraces.filter { !lost($0.key) }
    }

    /// A committed request wrote these accessories' registrations (or removed them): their
    /// deferred writes are older and must not be applied after it.
    private func dropDeferredWrites(supersededBy outputs: [EngineOutput]) {
        guard hasDeferredWrites else { return }
        for case .storage(let write) in outputs {
            switch write {
            case .upsertRegistration(let id, _), .deleteRegistration(let id):
                deferredRegistrations[id] = nil
            case .deleteAccessory(let id):
                // Its rows are gone: a late write would fail on them (or bring one back).
                deferredRegistrations[id] = nil
                deferredTraces[id] = nil
            case .saveTrace(let id, _):
                deferredTraces[id] = nil
            case .upsertAccessory, .migrationComplete, .saveKeys, .saveFollowedAddress, .saveHomeSources, .saveAlias, .saveSourceName:
                break
            }
        }
    }
}
