import AccessoryKit
import Configuration
import HomeAssistant
import JSON
import MQTT
import Storage
import Telemetry

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The running bridge's loop: messages, connection changes, wakes, the components' events and
/// the shutdown signal are merged into one stream and handled in order by one task, so nothing
/// needs a lock and the outputs keep the engine's order on the wire.
///
/// The stages and the paths through them are ``RuntimeStages``; the features are components
/// (``RuntimeComponents``), each reaching the rest only through its ``ComponentContext``. The
/// loop owns the event stream, the wake schedule (it wakes only for what is due), the
/// congestion bound, activation and shutdown, and holds no feature's state.
public final class BridgeRuntime {
    public let configuration: BridgeConfiguration
    /// The MQTT connection (the real client, or an in-memory one in tests).
    public let connection: any MQTTConnection
    let stages: RuntimeStages
    private let events: AsyncStream<RuntimeEvent>
    private let eventSink: AsyncStream<RuntimeEvent>.Continuation
    private let wakes: WakeSchedule
    /// Requests overtaking a congested backlog.
    let requestLane = RequestLane()
    /// A test may lower its base before ``run(signals:)``.
    var congestion = PublishCongestion()

    /// At most this many messages wait for the loop; more are dropped (flood protection).
    var backlog: Backlog {
        get { stages.backlog }
        set { stages.backlog = newValue }
    }
    /// Where incoming messages enter the loop.
    var inbox: RuntimeInbox { RuntimeInbox(router: router, requestLane: requestLane, backlog: backlog, sink: eventSink) }
    private let router: TopicRouter
    private var logger: BridgeLogger { stages.logger }
    private var clock: @Sendable () -> Timestamp { stages.clock }

    /// A runtime with its own ``MQTTClient`` for the configured broker.
    ///
    /// Opens nothing itself: the caller loads the configuration and opens the store, so that
    /// each can fail with its own clear message and exit status.
    public convenience init(
        configuration: BridgeConfiguration, store: any AccessoryStorage,
        clock wall: @escaping @Sendable () -> Timestamp = BridgeClock.now
    ) throws {
        var settings = try Self.clientConfiguration(configuration, topics: Topics(base: configuration.mqtt.baseTopic))
        // A flood must not grow memory without bound: beyond this many messages waiting for the
        // loop's reader (which reports what it takes, messagesTaken) new telemetry is dropped and
        // counted. Only here: a client whose reader does not report (the commands') would count
        // up to the bound and then drop everything.
        settings.messageBufferLimit = 100_000
        // Requests, /set and statuses (the one-off claims) are never dropped by that bound.
        let components = RuntimeComponents.make(
            for: configuration, ownership: .solo(), lookalikes: LookalikeBoard(LookalikeTracker(mode: .off, windowSeconds: 0)))
        settings.priorityFilters =
            TopicRouter(topics: Topics(base: configuration.mqtt.baseTopic), claims: components.map(\.claims))
            .oneOffSubscriptions
        try self.init(configuration: configuration, store: store, connection: try MQTTClient(configuration: settings), clock: wall)
    }

    /// A runtime on any connection (see ``MQTTConnection``).
    public init(
        configuration: BridgeConfiguration, store: any AccessoryStorage, connection: any MQTTConnection,
        clock wall: @escaping @Sendable () -> Timestamp = BridgeClock.now
    ) throws {
        // Engine time never goes backwards (see SteadyClock): a wall clock set back must not
        // freeze debounce windows and availability timeouts.
        let steady = SteadyClock(wall)
        let clock: @Sendable () -> Timestamp = { steady.now() }
        self.configuration = configuration
        self.connection = connection
        let topics = Topics(base: configuration.mqtt.baseTopic)
        let diagnostics = Diagnostics(configuration: configuration, connection: connection, topics: topics, clock: clock)
        // A single bridge is the cluster of one; in a cluster nothing is owned until the
        // membership has taken partitions.
        let ownership =
            configuration.cluster.enabled
            ? Ownership(instance: configuration.cluster.instance, partitions: configuration.cluster.partitions) : Ownership.solo()
        let core = RuntimeCore(
            engine: BridgeEngine(configuration: configuration.engine, restored: try store.load()),
            storage: StorageWorker(store: store), diagnostics: diagnostics, ownership: ownership)
        let ingest = Ingest(configuration: configuration, engine: core.view)
        let components = RuntimeComponents.make(for: configuration, ownership: ownership, lookalikes: ingest.lookalikes)
        let discovery: any DeviceDiscovery =
            configuration.homeAssistant.enabled
            ? HomeAssistantDiscoveryTracker(discovery: HomeAssistantDiscovery(configuration: configuration, version: BridgeModule.version))
            : NoDeviceDiscovery()
        let publisher = Publisher(
            connection: connection, configuration: configuration, topics: topics, engine: core.view, ownership: ownership,
            listing: components.lazy.compactMap(\.accessoryListing).first, discovery: discovery, diagnostics: diagnostics,
            startedAt: clock())
        stages = RuntimeStages(
            configuration: configuration, topics: topics, clock: clock, diagnostics: diagnostics, ingest: ingest, core: core,
            publisher: publisher, connection: connection, ownership: ownership)
        router = TopicRouter(topics: topics, claims: components.map(\.claims))
        (events, eventSink) = AsyncStream.makeStream(of: RuntimeEvent.self)
        wakes = WakeSchedule(sink: eventSink)
        stages.attach(components, sink: eventSink)
    }

    /// The component of this type, when the configuration made one (for tests).
    func component<Component: RuntimeComponent>(_ type: Component.Type) -> Component? {
        stages.components.lazy.compactMap { $0.component as? Component }.first
    }

    /// Where a component of this type posts its events (for tests that stand in for its thread).
    func mailbox<Component: RuntimeComponent>(of type: Component.Type) -> ComponentMailbox? {
        stages.components.first { $0.component is Component }?.context.mailbox
    }

    /// Runs until SIGTERM/SIGINT (or ``stop()``), then shuts down cleanly. Returns the exit
    /// status: 0, or ``activationNotStoredExitStatus`` when the session could not start.
    public func run(signals: AsyncStream<Int32>? = nil) async -> Int32 {
        if let error = await activate() { return await stopWithoutSession(error) }
        for (component, context) in stages.components { await component.start(context) }
        let connection = self.connection
        for (filter, qos) in router.subscriptions { try? await connection.subscribe(filter, qos: qos) }
        let forwarders = [
            Task { [inbox] in
                var batch: [MQTTMessage] = []
                while await connection.incoming.next(into: &batch) {
                    inbox.forward(batch)
                    connection.messagesTaken(batch.count)
                }
            },
            Task { [sink = eventSink] in for await state in connection.connectionStates { sink.yield(.connection(state)) } },
            Task { [sink = eventSink, storage = stages.core.storage, logger, abort = abortOnSecondSignal] in
                guard let signals else { return }
                var first = true
                for await signal in signals {
                    guard first else {
                        // Someone means it: end now, but never with the database open mid-commit
                        // (the storage queue closes it after the commit in progress).
                        logger.warning("signal \(signal) again: stopping now, exit status \(128 + signal)")
                        await storage.close()
                        abort(signal)
                    }
                    first = false
                    sink.yield(.shutdown(signal: signal))
                }
            },
        ]
        connection.start()
        logger.info(
            "aabridge \(BridgeModule.version) starting; broker \(configuration.mqtt.host):\(configuration.mqtt.port), base topic '\(stages.topics.base)'"
        )
        scheduleWake(at: clock())
        loop: for await event in events {
            await drainRequests()
            switch event {
            case .messages(let batch):
                var now = clock()
                for (index, routed) in batch.enumerated() {
                    // Requests overtaking a congested backlog do not wait for the batch's end; the
                    // clock is read once per clockReadingInterval messages (in a flood they are a
                    // few microseconds apart, and reading it was a visible share of each).
                    if index > 0, await drainRequests() || index % Self.clockReadingInterval == 0 { now = clock() }
                    backlog.taken()
                    if routed.route.isOneOff { requestLane.backloggedTaken() }
                    await handle(routed.message, route: routed.route, at: now)
                }
            case .connection(let state): connectionChanged(state)
            case .wake:
                wakes.fired()
                await wake()
            case .requests: break
            case .component(let index, let event):
                let (component, context) = stages.components[index]
                await component.handle(event: event, context)
            case .shutdown(let signal):
                stages.shuttingDown = true
                logger.info("signal \(signal): shutting down")
                break loop
            }
            scheduleWake(at: clock())
        }
        wakes.cancel()
        await shutdown()
        forwarders.forEach { $0.cancel() }
        return 0
    }

    /// What a second SIGTERM/SIGINT does once storage is closed: exit at once with status
    /// 128 + the signal's number, as a process ended by it reports (docs/operations.md).
    /// Replaceable for tests that drive ``run(signals:)`` in-process.
    public var abortOnSecondSignal: @Sendable (Int32) -> Never = { signal in exit(128 + signal) }

    /// Asks ``run()`` to shut down cleanly (as SIGTERM would).
    public func stop() { eventSink.yield(.shutdown(signal: SIGTERM)) }

    /// How many messages of a batch share one reading of the clock (at most a millisecond's
    /// worth in a flood; never across a request, which reads it again).
    static let clockReadingInterval = 64

    /// Handles the requests that overtook the backlog; returns whether there were any.
    @discardableResult
    private func drainRequests() async -> Bool {
        let waiting = requestLane.drain()
        for (request, route) in waiting { await handle(request, route: route, at: clock()) }
        return !waiting.isEmpty
    }

    /// One incoming message: a request or `/set` through Ingest, a claimed topic to its component.
    private func handle(_ message: MQTTMessage, route: IngestRoute, at now: Timestamp) async {
        if case .claimed(let claimed) = route {
            if claimed.sheddable,
                congestion.sheds(connection, accessories: stages.engine.accessoryCount, diagnostics: stages.diagnostics, at: now)
            {
                return
            }
            let (component, context) = stages.components[claimed.component]
            return await component.handle(message, tag: claimed.tag, at: now, context)
        }
        await stages.apply(stages.ingest.ingest(message, route: route, at: now), at: now)
    }

    private func connectionChanged(_ state: MQTTConnectionState) {
        guard !stages.shuttingDown else { return }
        switch state {
        case .connected:
            logger.info("connected to \(configuration.mqtt.host):\(configuration.mqtt.port)")
            stages.republishEverything()
        case .disconnected(let error):
            logger.warning("MQTT: \(error.message); reconnecting")
        }
    }

    // MARK: - What is due

    /// How often the loop looks whether a republish has been acknowledged.
    private static let heapReleaseCheckMilliseconds: Int64 = 250

    /// Everything that waits for a time: dropped-message reports, the engine's deadlines,
    /// deferred commits, the accessory list, the freed heap, the components' own.
    private func wake() async {
        let now = clock()
        stages.countDroppedMessages(at: now)
        await stages.perform(.tick, at: now)
        await stages.core.flushDeferredWrites(at: now)
        if stages.publisher.accessoriesDirty { stages.publisher.publishAccessoryList() }
        if stages.heapToRelease && connection.outstandingPublishes == 0 {
            stages.heapToRelease = false
            ResidentMemory.releaseFreedHeap()
        }
        for (component, context) in stages.components { component.wake(at: now, context) }
    }

    /// Arms the next wake for the earliest thing due.
    private func scheduleWake(at now: Timestamp) {
        var due = WakeSchedule.maximumSleepMilliseconds
        if let deadline = stages.core.nextDeadline { due = min(due, deadline.milliseconds(since: now)) }
        if stages.core.hasDeferredWrites || stages.publisher.accessoriesDirty || backlog.hasDropped {
            due = min(due, RuntimeCore.deferredCommitMilliseconds)
        }
        if stages.heapToRelease { due = min(due, Self.heapReleaseCheckMilliseconds) }
        for (component, _) in stages.components {
            if let time = component.nextDue(at: now) { due = min(due, time.milliseconds(since: now)) }
        }
        wakes.arm(inMilliseconds: due)
    }

    // MARK: - Activation and shutdown

    /// Activates the session: migration writes are committed before anything is published.
    /// - Returns: the error when they could not be committed; nothing was published then.
    private func activate() async -> StorageError? {
        if let error = await stages.perform(.activate, at: clock()).notStored { return error }
        let engine = stages.engine.engine
        logger.info("session activated: \(engine.accessories.count) accessories, \(engine.registry.registrations.count) registrations")
        return nil
    }

    /// `aabridge run`'s exit status when the session's first commit could not be stored
    /// (docs/operations.md): a restart retries it.
    public static let activationNotStoredExitStatus: Int32 = 4

    /// The session's first commit failed (disk full, read-only, locked): going on would fail
    /// every later write that refers to its rows, so the bridge stops and a restart retries the
    /// whole activation. Nothing was published or acknowledged, so no `invalidated` and no
    /// `offline` either (docs/reliability.md, "Activation").
    private func stopWithoutSession(_ error: StorageError) async -> Int32 {
        let status = Self.activationNotStoredExitStatus
        logger.error(
            "storage (activation): the session's first commit (the configuration's accessories, migrations) could not be stored: "
                + "\(error.message); stopping with exit status \(status), nothing was published (a restart retries it)")
        await disconnect()
        await stages.core.storage.close()
        return status
    }

    /// How long a clean shutdown waits for the broker to acknowledge `offline` (docs/operations.md).
    static let offlineAcknowledgementLimit: Duration = .seconds(5)
    /// How long it then waits for the MQTT client's network thread to stop.
    static let disconnectLimit: Duration = .seconds(2)

    /// Clean shutdown: the session's `invalidated` event, `offline`, storage closed. Every
    /// wait on the broker is bounded, so it ends even when the broker stopped answering.
    private func shutdown() async {
        for (component, context) in stages.components { component.shutdownBegins(context) }
        await stages.perform(.invalidate, at: clock())
        stages.publisher.publishInfo()
        let othersOnline = stages.components.contains { $0.component.keepsBridgeOnline }
        for (component, context) in stages.components { await component.stop(context) }
        if othersOnline {
            logger.info("cluster: other instances are live, so bridge/state stays online")
        } else if await !stages.publisher.publishOffline(within: Self.offlineAcknowledgementLimit) {
            logger.warning("the broker did not acknowledge offline within 5 s; stopping without it (the will says it)")
        }
        await disconnect()
        await stages.core.storage.close()
        logger.info("stopped")
    }

    private func disconnect() async {
        let connection = self.connection
        if await !Deadline.run(Self.disconnectLimit, { await connection.disconnect() }) {
            logger.warning("the MQTT client did not stop within 2 s; stopping without it")
        }
    }
}
