import AccessoryKit
import Configuration
import JSON
import MQTT

/// The three stages, the components beside them, and the paths through them: the output step
/// (``perform(_:at:)``), the request path (``handle(_:answer:at:)``, in
/// `RuntimeStages+Requests.swift`) and the application of what Ingest decided
/// (``apply(_:at:)``). ``BridgeRuntime``'s loop drives it from its one task; each component
/// reaches it only through its ``ComponentContext``.
///
/// - ``Ingest`` turns what the sources heard, requests and `/set` updates into engine input;
/// - ``RuntimeCore`` runs the engine and commits what it must store (``StorageWorker``);
/// - ``Publisher`` turns the engine's outputs into MQTT messages.
final class RuntimeStages {
    let configuration: BridgeConfiguration
    let topics: Topics
    let clock: @Sendable () -> Timestamp
    let diagnostics: Diagnostics
    var logger: BridgeLogger { diagnostics.logger }
    /// Stage one (the request path prepares requests with it too).
    var ingest: Ingest
    let core: RuntimeCore
    let publisher: Publisher
    let connection: any MQTTConnection
    /// What this instance owns: everything, alone; in a cluster what ``ClusterComponent`` holds.
    let ownership: Ownership
    /// The components, in the order their hooks run, each with its context.
    private(set) var components: [(component: any RuntimeComponent, context: ComponentContext)] = []
    /// Shutdown began: connection changes are no longer acted on, and a cluster peer's will is
    /// no longer answered.
    var shuttingDown = false
    /// A republish of everything went out: once the broker has acknowledged it, the heap it
    /// used is given back (``ResidentMemory/releaseFreedHeap()``).
    var heapToRelease = false
    /// At most this many messages wait for the loop; more are dropped (flood protection).
    /// A test may replace it before the runtime runs.
    var backlog = Backlog(limit: 50_000)

    init(
        configuration: BridgeConfiguration, topics: Topics, clock: @escaping @Sendable () -> Timestamp, diagnostics: Diagnostics,
        ingest: Ingest, core: RuntimeCore, publisher: Publisher, connection: any MQTTConnection, ownership: Ownership
    ) {
        self.configuration = configuration
        self.topics = topics
        self.clock = clock
        self.diagnostics = diagnostics
        self.ingest = ingest
        self.core = core
        self.publisher = publisher
        self.connection = connection
        self.ownership = ownership
    }

    /// Adds the components, each with a context addressed to its place in the list.
    func attach(_ components: [any RuntimeComponent], sink: AsyncStream<RuntimeEvent>.Continuation) {
        self.components = components.enumerated().map { index, component in
            (component, ComponentContext(stages: self, mailbox: ComponentMailbox(index: index, sink: sink)))
        }
    }

    var engine: EngineView { core.view }

    // MARK: - The output step

    /// Runs engine work (``RuntimeCore/perform(_:at:)``) and applies what it output: Ingest's
    /// own state follows it, the Publisher publishes it, every component reacts to it, and a
    /// request's change to `bridge/accessories` goes out before its answer. Every engine step
    /// goes through here, so no stage or component misses an output.
    @discardableResult
    @inline(__always)
    func perform(_ work: RuntimeCore.Work, at now: Timestamp) async -> RuntimeCore.Outcome {
        let outcome = await core.perform(work, at: now)
        let outputs = outcome.outputs
        guard !outputs.isEmpty else { return outcome }
        ingest.applied(outputs)
        publisher.publish(outputs, at: now)
        for (component, context) in components { component.applied(outputs, at: now, context) }
        // Telemetry's list changes wait for the next wake (once for a burst); a request's are
        // on the broker before it is answered.
        if case .request = work, publisher.accessoriesDirty { publisher.publishAccessoryList() }
        return outcome
    }

    /// Carries out what Ingest decided for one message, in order.
    func apply(_ outcome: consuming IngestOutcome, at now: Timestamp) async {
        for action in outcome {
            switch action {
            case .telemetry(let input, let context, let refresh, let announcement):
                guard ownership.handles(input, engine: engine) else { continue }
                // Said by the instance that takes the sighting (in a cluster, the accessory's owner).
                if let announcement { logger.announce(announcement) }
                await perform(.telemetry(input, context: context), at: now)
                if let refresh, publisher.isStateRefreshDue(for: refresh, at: now) { publisher.refreshState(of: refresh, at: now) }
            case .request(let request):
                await handle(request, answer: .mqtt, at: now)
            case .log(let level, let message):
                logger.log(level, message)
            case .refuse(let refusal):
                diagnostics.refuseTelemetry(refusal, at: now)
            case .ignoreFastPair(let accessory, let reason, let data):
                diagnostics.ignoreFastPair(accessory, reason: reason, data: data, at: now)
            case .lookalikeHeard:
                if publisher.publishesBridge { publisher.publish([.event(SetupEvent(.lookalikeHeard))], at: now) }
            }
        }
    }

    // MARK: - Retained topics

    /// Every retained topic again (after a connection, for Home Assistant's birth message, or
    /// a takeover), the components' too; the heap the burst uses is given back once the broker
    /// has acknowledged it.
    func republishEverything() {
        let now = clock()
        publisher.publishEverything(at: now)
        for (component, context) in components { component.republish(at: now, context) }
        heapToRelease = true
    }

    /// What a new console stream is sent first: the retained topics' current state, relative to
    /// the base topic.
    func snapshot(at now: Timestamp) -> [(topic: String, payload: [UInt8])] {
        let state: JSONValue = ["state": .string(connection.isConnected ? "online" : "offline")]
        var snapshot: [(topic: String, payload: [UInt8])] = [
            ("bridge/state", state.bytes), ("bridge/info", publisher.infoPayload().bytes),
            ("bridge/picker", publisher.payloads.picker(engine.picker).bytes), ("bridge/accessories", publisher.accessoryList()),
        ]
        for (component, context) in components { snapshot += component.snapshot(at: now, context) }
        return snapshot
    }

    /// Messages the full backlog dropped since the last look: counted in `telemetry_rejected`
    /// and logged at most once a minute.
    func countDroppedMessages(at now: Timestamp) {
        let dropped = backlog.takeDropped()
        guard dropped > 0 else { return }
        diagnostics.counters.telemetryRejected += dropped
        diagnostics.limited(
            .backlogFull, at: now, .warning, "flood: \(dropped) messages dropped because more than \(backlog.limit) were waiting"
        ) { _ in "" }
    }
}
