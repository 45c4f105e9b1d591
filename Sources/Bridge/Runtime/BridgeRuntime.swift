import AccessoryKit
import Configuration
import HomeAssistant
import JSON
import MQTT
import Storage
import Telemetry

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The running bridge: three stages around the engine, and the components beside them,
/// driven by one task.
///
/// - ``Ingest`` turns each incoming message (its route decided once on arrival by
///   ``RuntimeInbox``) into engine input;
/// - ``RuntimeCore`` runs the engine and commits what it must store (``StorageWorker``);
/// - ``Publisher`` turns the engine's outputs into MQTT messages;
/// - each ``RuntimeComponent`` (the pairing form, the HTTP side, cluster mode) owns a feature.
///
/// ``run(signals:)`` owns them all: messages, connection changes, wakes, the components'
/// events and the shutdown signal are merged into one stream and handled in order, so nothing
/// needs a lock and the outputs keep the engine's order on the wire. Every engine step goes
/// through ``perform(_:at:)``, which applies its outputs once. The loop wakes only for events
/// and for what is due (``WakeSchedule``). It holds no feature's state and decides nothing
/// about accessories.
public final class BridgeRuntime {
    public let configuration: BridgeConfiguration
    /// The MQTT connection (the real client, or an in-memory one in tests).
    public let connection: any MQTTConnection
    let topics: Topics
    let clock: @Sendable () -> Timestamp
    let diagnostics: Diagnostics
    var logger: BridgeLogger { diagnostics.logger }

    /// Stage one (the request path prepares requests with it too).
    var ingest: Ingest
    let core: RuntimeCore
    let publisher: Publisher
    /// What this instance owns: everything, alone; in a cluster what ``ClusterComponent`` holds.
    let ownership: Ownership
    /// The optional features, in the order their hooks run.
    let components: [any RuntimeComponent]
    /// The component that claims each claimed topic.
    private let claimants: [TopicClaim: any RuntimeComponent]
    /// The engine as it is now (``RuntimeCore`` changes it).
    var engine: EngineView { core.view }

    private let events: AsyncStream<RuntimeEvent>
    let eventSink: AsyncStream<RuntimeEvent>.Continuation
    private let wakes: WakeSchedule
    /// At most this many messages wait for the loop; more are dropped (flood protection).
    /// A test may replace it before ``run(signals:)``.
    var backlog = Backlog(limit: 50_000)
    /// Requests overtaking a congested backlog.
    let requestLane = RequestLane()
    /// Where incoming messages enter the loop.
    var inbox: RuntimeInbox {
        RuntimeInbox(router: ingest.router, requestLane: requestLane, backlog: backlog, sink: eventSink)
    }
    /// A republish for Home Assistant's birth message is pending: one at a time, since every
    /// republish is about four messages per accessory.
    private var republishScheduled = false
    /// Shutdown began: connection changes (the disconnect itself, a failed reconnect) are
    /// no longer reported or acted on.
    private(set) var shuttingDown = false
    private var lastHealth: Timestamp
    /// A republish of everything went out: once the broker has acknowledged it, the heap it
    /// used is given back (``ResidentMemory/releaseFreedHeap()``).
    private var heapToRelease = false
    /// When `bridge/lookalikes` last went out.
    private var lookalikesPublishedAt: Timestamp
    /// How often the loop looks whether the republish has been acknowledged.
    private static let heapReleaseCheckMilliseconds: Int64 = 250
    /// Telemetry is shed while more of the bridge's publications than this (plus four per
    /// accessory) wait for the broker's acknowledgement: see ``publishCongestionLimit``.
    var publishCongestionBase = 1_000

    /// A runtime with its own ``MQTTClient`` for the configured broker.
    ///
    /// Opens nothing itself: the caller loads the configuration and opens the store, so that
    /// each can fail with its own clear message and exit status.
    public convenience init(
        configuration: BridgeConfiguration, store: any AccessoryStorage,
        clock wall: @escaping @Sendable () -> Timestamp = BridgeClock.now
    ) throws {
        let topics = Topics(base: configuration.mqtt.baseTopic)
        var settings = try Self.clientConfiguration(configuration, topics: topics)
        // A flood must not grow memory without bound: beyond this many messages waiting for the
        // loop's reader (which reports what it takes, messagesTaken) new telemetry is dropped and
        // counted. Only here: a client whose reader does not report (the commands') would count
        // up to the bound and then drop everything.
        settings.messageBufferLimit = 100_000
        // Requests, /set and statuses (the QoS 1 subscriptions) are never dropped by that
        // bound: they are said only once.
        let claims = Self.claims(of: Self.components(for: configuration, ownership: .solo()))
        settings.priorityFilters = TopicRouter(configuration: configuration, topics: topics, claims: claims).oneOffSubscriptions
        let client = try MQTTClient(configuration: settings)
        try self.init(configuration: configuration, store: store, connection: client, clock: wall)
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
        self.clock = clock
        let topics = Topics(base: configuration.mqtt.baseTopic)
        self.topics = topics
        let level = BridgeLogger.Level(name: configuration.log.level.rawValue) ?? .info
        let forwarding = Payloads()
        diagnostics = Diagnostics(
            logger: BridgeLogger(
                minimum: level, json: configuration.log.format.rawValue == "json", clock: clock
            ) { level, message in
                connection.enqueue(
                    topic: topics.bridgeLog, payload: forwarding.log(level: level.name, message: message, at: clock()).bytes,
                    qos: .atMostOnce, retain: false)
            })
        // A single bridge is the cluster of one; in a cluster nothing is owned until the
        // membership has taken partitions.
        let ownership =
            configuration.cluster.enabled
            ? Ownership(instance: configuration.cluster.instance, partitions: configuration.cluster.partitions) : Ownership.solo()
        self.ownership = ownership
        components = Self.components(for: configuration, ownership: ownership)
        var claimants: [TopicClaim: any RuntimeComponent] = [:]
        for component in components {
            for claim in component.claims { claimants[claim] = component }
        }
        self.claimants = claimants
        core = RuntimeCore(
            engine: BridgeEngine(configuration: configuration.engine, restored: try store.load()),
            storage: StorageWorker(store: store), diagnostics: diagnostics, ownership: ownership)
        // One discovery for both stages: Ingest recognises Home Assistant's birth message,
        // Publisher publishes the devices.
        let homeAssistant =
            configuration.homeAssistant.enabled ? HomeAssistantDiscovery(configuration: configuration, version: BridgeModule.version) : nil
        ingest = Ingest(
            configuration: configuration, router: TopicRouter(configuration: configuration, topics: topics, claims: Set(claimants.keys)),
            engine: core.view, homeAssistant: homeAssistant)
        let now = clock()
        let listing = components.lazy.compactMap(\.accessoryListing).first
        publisher = Publisher(
            connection: connection, configuration: configuration, topics: topics, engine: core.view, ownership: ownership,
            listing: listing, homeAssistant: homeAssistant, diagnostics: diagnostics, startedAt: now)
        lastHealth = now
        lookalikesPublishedAt = now
        (events, eventSink) = AsyncStream.makeStream(of: RuntimeEvent.self)
        wakes = WakeSchedule(sink: eventSink)
    }

    /// The components `configuration` asks for: the pairing and re-attach forms always, the HTTP side with
    /// `http.listen`, cluster mode with `cluster.enabled`.
    static func components(for configuration: BridgeConfiguration, ownership: Ownership) -> [any RuntimeComponent] {
        var components: [any RuntimeComponent] = [PairingFormComponent(), ReattachFormComponent()]
        if let listen = configuration.http.listen { components.append(HTTPComponent(listen: listen)) }
        if configuration.cluster.enabled {
            components.append(ClusterComponent(instance: configuration.cluster.instance, ownership: ownership))
        }
        return components
    }

    private static func claims(of components: [any RuntimeComponent]) -> Set<TopicClaim> {
        components.reduce(into: []) { $0.formUnion($1.claims) }
    }

    /// The component of this type, when the configuration made one.
    func component<Component: RuntimeComponent>(_ type: Component.Type) -> Component? {
        components.lazy.compactMap { $0 as? Component }.first
    }

    /// Runs until SIGTERM/SIGINT (or ``stop()``), then shuts down cleanly. Returns the exit
    /// status: 0, or ``activationNotStoredExitStatus`` when the session could not start.
    public func run(signals: AsyncStream<Int32>? = nil) async -> Int32 {
        if let error = await activate() { return await stopWithoutSession(error) }
        for component in components { component.start(self) }
        let connection = self.connection
        let sink = eventSink
        for (filter, qos) in ingest.router.subscriptions {
            try? await connection.subscribe(filter, qos: qos)
        }
        let forwarders = [
            Task { [inbox] in
                var batch: [MQTTMessage] = []
                while await connection.incoming.next(into: &batch) {
                    inbox.forward(batch)
                    connection.messagesTaken(batch.count)
                }
            },
            Task { for await state in connection.connectionStates { sink.yield(.connection(state)) } },
            Task { [storage = core.storage, logger, abort = abortOnSecondSignal] in
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
            "aabridge \(BridgeModule.version) starting; broker \(configuration.mqtt.host):\(configuration.mqtt.port), base topic '\(topics.base)'"
        )
        scheduleWake(at: clock())
        loop: for await event in events {
            for (request, route) in requestLane.drain() { await handle(request, route: route, at: clock()) }
            switch event {
            case .messages(let batch):
                var now = clock()
                for (index, routed) in batch.enumerated() {
                    // Requests overtaking a congested backlog do not wait for the batch's end.
                    var overtaken = false
                    if index > 0 {
                        for (request, route) in requestLane.drain() {
                            await handle(request, route: route, at: clock())
                            overtaken = true
                        }
                    }
                    // The clock is read once per clockReadingInterval messages: in a flood they
                    // are a few microseconds apart, and reading it was a visible share of each.
                    if overtaken || (index > 0 && index % Self.clockReadingInterval == 0) { now = clock() }
                    backlog.taken()
                    if routed.route.isOneOff { requestLane.backloggedTaken() }
                    await handle(routed.message, route: routed.route, at: now)
                }
            case .connection(let state): connectionChanged(state)
            case .wake:
                wakes.fired()
                await wake()
            case .requests: break
            case .republish:
                republishScheduled = false
                republishEverything()
            case .http, .cluster:
                for component in components { await component.handle(event, self) }
            case .shutdown(let signal):
                shuttingDown = true
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

    // MARK: - The output step

    /// Runs engine work (``RuntimeCore/perform(_:at:)``) and applies what it output: Ingest's
    /// own state follows it, the Publisher publishes it, every component reacts to it, and a
    /// request's change to `bridge/accessories` goes out before its answer. Every engine step
    /// of the loop goes through here, so no stage or component misses an output.
    @discardableResult
    @inline(__always)
    func perform(_ work: RuntimeCore.Work, at now: Timestamp) async -> RuntimeCore.Outcome {
        let outcome = await core.perform(work, at: now)
        let outputs = outcome.outputs
        guard !outputs.isEmpty else { return outcome }
        ingest.applied(outputs)
        if !ingest.gatewayProblemsAppeared.isEmpty {
            for appeared in ingest.takeGatewayProblems() { logger.warning("gateway \(appeared.gateway): \(appeared.message)") }
        }
        if ingest.gatewayProblemsChanged { publishGateways(at: now) }
        publisher.publish(outputs, at: now)
        for component in components { component.applied(outputs, self) }
        // Telemetry's list changes wait for the next wake (once for a burst); a request's are
        // on the broker before it is answered.
        if case .request = work, publisher.accessoriesDirty { publisher.publishAccessoryList() }
        return outcome
    }

    // MARK: - Events

    /// Activates the session: migration writes are committed before anything is published.
    /// - Returns: the error when they could not be committed; nothing was published then.
    private func activate() async -> StorageError? {
        if let error = await perform(.activate, at: clock()).notStored { return error }
        let engine = engine.engine
        logger.info("session activated: \(engine.accessories.count) accessories, \(engine.registry.registrations.count) registrations")
        // `validate` lists these too; a bridge started without it says them once, in its log.
        for warning in configuration.warnings { logger.warning("configuration: \(warning)") }
        // The file's keys are applied at every start, but only to accessories that are paired.
        for (index, entry) in configuration.accessories.enumerated()
        where !entry.keys.isEmpty && engine.status(of: entry.migration.id) == nil {
            logger.warning(
                "accessories[\(index)]: \(entry.migration.id) is not paired (removed, or added to the file after the first start), "
                    + "so its keys are not used; pair it from the picker with \(RequestName.selectCandidate.name), then set them with \(RequestName.keys.name)"
            )
        }
        // Only its owner removes it: a single bridge. In a cluster nothing is owned yet at
        // activation, so no instance does (the example predates cluster mode).
        if let phantom = ShippedPhantom.find(in: engine, configuration: configuration), ownership.owns(phantom) {
            await removeShippedPhantom(phantom)
        }
        return nil
    }

    /// Removes the accessory an earlier config/aabridge.yaml planted (``ShippedPhantom``), as
    /// `accessory/remove` would; when it cannot be stored, the next start tries again.
    private func removeShippedPhantom(_ id: BluetoothAddress) async {
        if let error = await perform(.request(.remove(id), name: RequestName.remove.name), at: clock()).notStored {
            logger.warning("could not remove \(ShippedPhantom.name) (\(id)), the example accessory: \(error.message)")
        } else {
            logger.info(
                "removed \(ShippedPhantom.name) (\(id)): the example accessory an earlier config/aabridge.yaml migrated into "
                    + "this database, still as the file planted it (no new name, key, source or followed address); the file no longer lists it"
            )
        }
    }

    /// How many messages of a batch share one reading of the clock (at most a millisecond's
    /// worth in a flood; never across a request, which reads it again).
    static let clockReadingInterval = 64

    /// One incoming message through the three stages, or to the component that claims its topic.
    private func handle(_ message: MQTTMessage, route: IngestRoute, at now: Timestamp) async {
        if let claim = route.claim {
            await claimants[claim]?.handle(message, route: route, self)
            return
        }
        if route.isSheddable && shedWhenBrokerIsBehind() { return }
        if case .gateway(let index, _) = route { diagnostics.countGatewayMessage(index) }
        let outcome = ingest.ingest(message, route: route, at: now)
        for appeared in outcome.gatewayProblems { logger.warning("gateway \(appeared.gateway): \(appeared.message)") }
        if outcome.gatewaysChanged { publishGateways(at: now) }
        if outcome.lookalikeHeard, publisher.publishesBridge { publisher.publish([.event(SetupEvent(.lookalikeHeard))], at: now) }
        if let notice = outcome.notice { logger.log(notice.level, notice.message) }
        if let rejection = outcome.rejection {
            diagnostics.rejectTelemetry(gateway: rejection.gateway, reason: rejection.reason, at: now)
        }
        if let ignored = outcome.fastPairIgnored {
            diagnostics.ignoreFastPair(ignored.accessory, reason: ignored.reason, data: ignored.data, at: now)
        }
        switch outcome.effect {
        case .none:
            break
        case .telemetry(let input, let context, let refresh):
            guard ownership.handles(input, engine: engine) else { break }
            // Said by the instance that takes the sighting (in a cluster, the accessory's owner).
            if let announcement = outcome.announcement { logger.announce(announcement) }
            await perform(.telemetry(input, context: context), at: now)
            if let refresh, publisher.isStateRefreshDue(for: refresh, at: now) { publisher.refreshState(of: refresh, at: now) }
        case .request(let request):
            await handle(request, answer: .mqtt, at: now)
        case .homeAssistantBirth:
            scheduleHomeAssistantRepublish()
        }
    }

    /// Home Assistant restarted: republish discovery and state after a short random delay,
    /// once for a burst of birth messages.
    private func scheduleHomeAssistantRepublish() {
        guard !republishScheduled, let delay = publisher.homeAssistantRepublishDelay() else { return }
        republishScheduled = true
        let sink = eventSink
        Task {
            try? await Task.sleep(for: delay)
            sink.yield(.republish)
        }
    }

    private func connectionChanged(_ state: MQTTConnectionState) {
        guard !shuttingDown else { return }
        switch state {
        case .connected:
            logger.info("connected to \(configuration.mqtt.host):\(configuration.mqtt.port)")
            republishEverything()
        case .disconnected(let error):
            logger.warning("MQTT: \(error.message); reconnecting")
        }
    }

    /// Every retained topic again (after a connection, for Home Assistant's birth message, or
    /// a takeover), the components' too; the heap the burst uses is given back once the broker
    /// has acknowledged it.
    func republishEverything() {
        let now = clock()
        publisher.publishEverything(
            at: now, gateways: ingest.gatewaysPayload(at: now), heardGateways: ingest.heardGateways, lookalikes: ingest.lookalikesPayload)
        ingest.gatewaysPublished()
        ingest.lookalikesPublished()
        lookalikesPublishedAt = now
        for component in components { component.republish(self) }
        heapToRelease = true
    }

    // MARK: - What is due

    /// Everything that waits for a time: dropped-message reports, the engine's deadlines,
    /// deferred commits, the accessory list, the health interval.
    private func wake() async {
        let now = clock()
        countDroppedMessages(at: now)
        await perform(.tick, at: now)
        await core.flushDeferredWrites(at: now)
        if publisher.accessoriesDirty { publisher.publishAccessoryList() }
        publishLookalikesWhenDue(at: now)
        if heapToRelease && connection.outstandingPublishes == 0 {
            heapToRelease = false
            ResidentMemory.releaseFreedHeap()
        }
        if now.milliseconds(since: lastHealth) >= healthIntervalMilliseconds {
            lastHealth = now
            publisher.publishHealth(at: now)
            // The figures are of the last minute: a gateway gone quiet loses its problems too.
            ingest.evaluateGateways(at: now)
            for appeared in ingest.takeGatewayProblems() { logger.warning("gateway \(appeared.gateway): \(appeared.message)") }
            publishGateways(at: now)
        }
    }

    /// `bridge/gateways` (and Home Assistant's per-gateway sensors, when the heard gateways
    /// changed).
    private func publishGateways(at now: Timestamp) {
        publisher.publishGateways(ingest.gatewaysPayload(at: now), heard: ingest.heardGateways)
        ingest.gatewaysPublished()
    }

    /// `bridge/lookalikes` when the list changed (at most every
    /// ``LookalikeTracker/listChangeMilliseconds``) or only what is known of its entries did (at
    /// most every ``LookalikeTracker/refreshMilliseconds``); entries silent for the window leave
    /// it first.
    private func publishLookalikesWhenDue(at now: Timestamp) {
        if let expiry = ingest.lookalikes.nextExpiry, expiry <= now { ingest.expireLookalikes(at: now) }
        guard lookalikesPublishDelay(at: now).map({ $0 <= 0 }) == true else { return }
        publisher.publishLookalikes(ingest.lookalikesPayload)
        publisher.publishLookalikeOptions(ingest.lookalikes.options)
        ingest.lookalikesPublished()
        lookalikesPublishedAt = now
    }

    /// In how long `bridge/lookalikes` is due (nil: it is current).
    private func lookalikesPublishDelay(at now: Timestamp) -> Int64? {
        let interval: Int64
        if ingest.lookalikes.listChanged {
            interval = LookalikeTracker.listChangeMilliseconds
        } else if ingest.lookalikes.refreshed {
            interval = LookalikeTracker.refreshMilliseconds
        } else {
            return nil
        }
        return interval - now.milliseconds(since: lookalikesPublishedAt)
    }

    /// Messages the full backlog dropped since the last look: counted in `telemetry_rejected`
    /// and logged at most once a minute.
    func countDroppedMessages(at now: Timestamp) {
        let dropped = backlog.takeDropped()
        guard dropped > 0 else { return }
        diagnostics.counters.telemetryRejected += dropped
        diagnostics.limited(
            .backlogFull, at: now, .warning,
            "flood: \(dropped) messages dropped because more than \(backlog.limit) were waiting"
        ) { _ in "" }
    }

    private var healthIntervalMilliseconds: Int64 { Int64(configuration.health.intervalSeconds) * 1000 }

    /// Arms the next wake for the earliest thing due.
    private func scheduleWake(at now: Timestamp) {
        var due = WakeSchedule.maximumSleepMilliseconds
        if let deadline = core.nextDeadline { due = min(due, deadline.milliseconds(since: now)) }
        if core.hasDeferredWrites || publisher.accessoriesDirty || backlog.hasDropped {
            due = min(due, RuntimeCore.deferredCommitMilliseconds)
        }
        if heapToRelease { due = min(due, Self.heapReleaseCheckMilliseconds) }
        if let expiry = ingest.lookalikes.nextExpiry { due = min(due, expiry.milliseconds(since: now)) }
        if let delay = lookalikesPublishDelay(at: now) { due = min(due, delay) }
        due = min(due, healthIntervalMilliseconds - now.milliseconds(since: lastHealth))
        wakes.arm(inMilliseconds: due)
    }

    // MARK: - Congestion

    /// QoS 1 publications the broker may owe acknowledgements for before telemetry is shed.
    ///
    /// libmosquitto queues publications without bound. A telemetry flood that changes state
    /// on every message makes the bridge publish faster than a saturated broker acknowledges;
    /// past this bound the bridge drops gateway telemetry and `/set` updates (counted in
    /// `telemetry_rejected`) until the broker has caught up, so a response waits behind at
    /// most about this many messages. Requests and Home Assistant's status are never shed.
    /// The bound grows with the accessory count because every (re)connect republishes about
    /// four retained messages per accessory at once. (docs/reliability.md has the figures.)
    var publishCongestionLimit: Int { publishCongestionBase + 4 * engine.accessoryCount }

    /// Drops one telemetry message, counted and logged, when the broker is behind.
    /// - Returns: whether it was dropped.
    private func shedWhenBrokerIsBehind() -> Bool {
        let outstanding = connection.outstandingPublishes
        guard outstanding > publishCongestionLimit else { return false }
        diagnostics.counters.telemetryRejected += 1
        diagnostics.limited(
            .brokerBehind, at: clock(), .warning,
            "flood: the broker has not acknowledged \(outstanding) publications; telemetry is dropped until it catches up"
        ) {
            " (\($0) more since the last line)"
        }
        return true
    }

    // MARK: - Shutdown

    /// `aabridge run`'s exit status when the session's first commit could not be stored
    /// (docs/operations.md): a restart retries it.
    public static let activationNotStoredExitStatus: Int32 = 4

    /// The session's first commit (the configuration's accessories on a first start, its
    /// keys, the migration flag) failed: disk full, read-only, locked. The engine has activated
    /// a session whose rows are not on disk, so going on would fail every later write that
    /// refers to them (telemetry's registrations, requests), even once space is back, since
    /// nothing would commit the activation again. Stopping lets the service manager restart
    /// the bridge, which retries the whole activation. Nothing is lost: nothing was published
    /// or acknowledged (the MQTT client was never started). For the same reason no
    /// `invalidated` and no `offline` are published: no session was announced, as for the
    /// failures before the runtime runs (`aabridge run`, RunCommand).
    private func stopWithoutSession(_ error: StorageError) async -> Int32 {
        let status = Self.activationNotStoredExitStatus
        logger.error(
            "storage (activation): the session's first commit (the configuration's accessories, migrations) could not be stored: "
                + "\(error.message); stopping with exit status \(status), nothing was published (a restart retries it)")
        let connection = self.connection
        if await !Deadline.run(Self.disconnectLimit, { await connection.disconnect() }) {
            logger.warning("the MQTT client did not stop within 2 s; stopping without it")
        }
        await core.storage.close()
        return status
    }

    /// How long a clean shutdown waits for the broker to acknowledge `offline` (docs/operations.md).
    static let offlineAcknowledgementLimit: Duration = .seconds(5)
    /// How long it then waits for the MQTT client's network thread to stop.
    static let disconnectLimit: Duration = .seconds(2)

    /// Clean shutdown: the session's `invalidated` event, `offline`, storage closed. Every
    /// wait on the broker is bounded, so it ends even when the broker stopped answering.
    private func shutdown() async {
        for component in components { component.shutdownBegins(self) }
        await perform(.invalidate, at: clock())
        publisher.publishInfo()
        let othersOnline = components.contains { $0.keepsBridgeOnline }
        for component in components { await component.stop(self) }
        if othersOnline {
            logger.info("cluster: other instances are live, so bridge/state stays online")
        } else if await !publisher.publishOffline(within: Self.offlineAcknowledgementLimit) {
            logger.warning("the broker did not acknowledge offline within 5 s; stopping without it (the will says it)")
        }
        let connection = self.connection
        if await !Deadline.run(Self.disconnectLimit, { await connection.disconnect() }) {
            logger.warning("the MQTT client did not stop within 2 s; stopping without it")
        }
        await core.storage.close()
        logger.info("stopped")
    }
}
