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

/// The running bridge: three stages around the engine, driven by one task.
///
/// - ``Ingest`` turns each incoming message (its route decided once on arrival by
///   ``RuntimeInbox``) into engine input;
/// - ``RuntimeCore`` runs the engine and commits what it must store (``StorageWorker``);
/// - ``Publisher`` turns the engine's outputs into MQTT messages.
///
/// ``run(signals:)`` owns all three: messages, connection changes, wakes and the shutdown
/// signal are merged into one stream and handled in order, so nothing needs a lock and the
/// outputs keep the engine's order on the wire. The loop wakes only for events and for what
/// is due (``WakeSchedule``).
public final class BridgeRuntime {
    public let configuration: BridgeConfiguration
    /// The MQTT connection (the real client, or an in-memory one in tests).
    public let connection: any MQTTConnection
    let topics: Topics
    let clock: @Sendable () -> Timestamp
    let diagnostics: Diagnostics
    var logger: BridgeLogger { diagnostics.logger }

    var ingest: Ingest
    let core: RuntimeCore
    let publisher: Publisher

    private let events: AsyncStream<RuntimeEvent>
    let eventSink: AsyncStream<RuntimeEvent>.Continuation
    /// The HTTP console, metrics and health check, while `http.listen` is set (BridgeRuntime+HTTP).
    var http: HTTPConsole?
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
    /// The pairing form behind Home Assistant's Pair button (``PairingForm``). Not stored: a
    /// restart ends the picker, and with it any choice of candidate.
    private var pairing = PairingForm()
    /// Shutdown began: connection changes (the disconnect itself, a failed reconnect) are
    /// no longer reported or acted on.
    private(set) var shuttingDown = false
    /// In a cluster (`cluster.enabled`): the membership and what this instance owns
    /// (BridgeRuntime+Cluster, docs/scaling.md).
    var cluster: ClusterState?
    /// Whether ``run(signals:)`` starts the ``ClusterMembership`` thread in a cluster; tests
    /// that post ``ClusterEvent``s themselves turn it off.
    var joinsCluster = true
    private var lastHealth: Timestamp
    /// A republish of everything went out: once the broker has acknowledged it, the heap it
    /// used is given back (``ResidentMemory/releaseFreedHeap()``).
    private var heapToRelease = false
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
        settings.priorityFilters = TopicRouter(configuration: configuration, topics: topics).subscriptions
            .filter { $0.qos == .atLeastOnce }.map(\.filter)
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
        // One discovery for both stages: Ingest recognises Home Assistant's birth message,
        // Publisher publishes the devices.
        let homeAssistant =
            configuration.homeAssistant.enabled ? HomeAssistantDiscovery(configuration: configuration, version: BridgeModule.version) : nil
        ingest = Ingest(configuration: configuration, topics: topics, homeAssistant: homeAssistant)
        let restored = try store.load()
        core = RuntimeCore(
            engine: BridgeEngine(configuration: configuration.engine, restored: restored),
            storage: StorageWorker(store: store), diagnostics: diagnostics)
        let now = clock()
        publisher = Publisher(
            connection: connection, configuration: configuration, topics: topics, homeAssistant: homeAssistant,
            diagnostics: diagnostics, startedAt: now)
        lastHealth = now
        (events, eventSink) = AsyncStream.makeStream(of: RuntimeEvent.self)
        wakes = WakeSchedule(sink: eventSink)
        if configuration.cluster.enabled {
            // Nothing is owned until the membership has taken partitions: until then nothing
            // about an accessory is published, stored or answered.
            let ownership = ClusterOwnership(instance: configuration.cluster.instance, partitions: configuration.cluster.partitions)
            cluster = ClusterState(membership: nil, ownership: ownership)
            core.ownership = ownership
            publisher.ownership = ownership
        }
    }

    /// The MQTT client's settings: server, credentials, TLS, and the retained `offline` will.
    public static func clientConfiguration(_ configuration: BridgeConfiguration, topics: Topics) throws -> MQTT.MQTTConfiguration {
        let broker = configuration.mqtt
        var client = MQTT.MQTTConfiguration(clientID: broker.clientID, keepalive: broker.keepalive)
        try client.setServer(broker.server)
        client.username = broker.user
        client.password = broker.password?.revealed
        if client.tls != nil || broker.ca != nil || broker.cert != nil {
            client.tls = .init(caFile: broker.ca, certificateFile: broker.cert, keyFile: broker.key)
        }
        client.protocolVersion = broker.version == .v5 ? .v5 : .v311
        client.reconnect = ReconnectBackoff(
            minimum: .seconds(broker.reconnect.minimumSeconds),
            maximum: .seconds(broker.reconnect.maximumSeconds))
        client.will = .init(topic: topics.bridgeState, payload: Array(#"{"state":"offline"}"#.utf8), qos: .atLeastOnce, retain: true)
        // An oversized message (48 MiB on a gateway topic) is dropped by the broker instead of
        // being read whole and copied here (MQTT 5; docs/configuration.md for 3.1.1).
        client.maximumPacketSize = broker.maxPacketSize
        // A persistent session: the broker keeps QoS 1 requests and `/set` updates sent while
        // the bridge reconnects or restarts, instead of dropping them (mqtt.session_expiry_s).
        client.cleanSession = broker.sessionExpirySeconds == 0
        client.sessionExpiryInterval = UInt32(broker.sessionExpirySeconds)
        return client
    }

    /// Runs until SIGTERM/SIGINT (or ``stop()``), then shuts down cleanly. Returns the exit
    /// status: 0, or ``activationNotStoredExitStatus`` when the session could not start.
    public func run(signals: AsyncStream<Int32>? = nil) async -> Int32 {
        if let error = await activate() { return await stopWithoutSession(error) }
        startHTTP()
        let connection = self.connection
        let sink = eventSink
        for (filter, qos) in ingest.router.subscriptions {
            try? await connection.subscribe(filter, qos: qos)
        }
        if cluster != nil {
            // A peer's will says `offline` there; a live instance sets it back. The states of
            // all instances' accessories make the cluster's `bridge/accessories`; the routes
            // are taken over with the accessories they go to.
            try? await connection.subscribe(topics.bridgeState, qos: .atLeastOnce)
            try? await connection.subscribe(topics.accessoryStateFilter, qos: .atLeastOnce)
            try? await connection.subscribe(topics.sourceRouteFilter, qos: .atLeastOnce)
            if joinsCluster { joinCluster() }
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
            case .http(let call): await handle(call)
            case .cluster(let clusterEvent): await handle(clusterEvent)
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

    // MARK: - Events

    /// Activates the session: migration writes are committed before anything is published.
    /// - Returns: the error when they could not be committed; nothing was published then.
    private func activate() async -> StorageError? {
        let now = clock()
        switch await core.activate(at: now) {
        case .success(let outputs): publisher.publish(outputs, at: now, engine: core.engine)
        case .failure(let error): return error
        }
        ingest.know(core.engine.statuses, keys: core.engine.keys, followed: core.engine.followedAddresses)
        logger.info(
            "session activated: \(core.engine.accessories.count) accessories, \(core.engine.registry.registrations.count) registrations")
        // `validate` lists these too; a bridge started without it says them once, in its log.
        for warning in configuration.warnings { logger.warning("configuration: \(warning)") }
        // The file's keys are applied at every start, but only to accessories that are paired.
        for (index, entry) in configuration.accessories.enumerated()
        where !entry.keys.isEmpty && core.engine.status(of: entry.migration.id) == nil {
            logger.warning(
                "accessories[\(index)]: \(entry.migration.id) is not paired (removed, or added to the file after the first start), "
                    + "so its keys are not used; pair it from the picker with picker/select, then set them with accessory/keys")
        }
        if cluster == nil, let phantom = ShippedPhantom.find(in: core.engine, configuration: configuration) {
            await removeShippedPhantom(phantom, at: now)
        }
        return nil
    }

    /// Removes the accessory an earlier config/aabridge.yaml planted (``ShippedPhantom``), as
    /// `accessory/remove` would; when it cannot be stored, the next start tries again.
    private func removeShippedPhantom(_ id: BluetoothAddress, at now: Timestamp) async {
        switch await core.handleRequest(.remove(id), name: "accessory/remove", at: now) {
        case .notStored(let error):
            logger.warning("could not remove \(ShippedPhantom.name) (\(id)), the example accessory: \(error.message)")
        case .committed(let step):
            ingest.track(step.outputs)
            publisher.publish(step.outputs, at: now, engine: core.engine)
            if publisher.accessoriesDirty { publisher.publishAccessoryList() }
            logger.info(
                "removed \(ShippedPhantom.name) (\(id)): the example accessory an earlier config/aabridge.yaml migrated into "
                    + "this database, still as the file planted it (no new name, key, source or followed address); the file no longer lists it"
            )
        }
    }

    /// How many messages of a batch share one reading of the clock (at most a millisecond's
    /// worth in a flood; never across a request, which reads it again).
    static let clockReadingInterval = 64

    /// One incoming message through the three stages.
    private func handle(_ message: MQTTMessage, route: IngestRoute, at now: Timestamp) async {
        if route == .unrouted, cluster != nil { return clusterMessage(message) }
        if route.isSheddable && shedWhenBrokerIsBehind() { return }
        if case .gateway(let index, _) = route { diagnostics.countGatewayMessage(index) }
        let outcome = ingest.ingest(message, route: route, at: now)
        if outcome.gatewaysChanged { publisher.publishGateways(ingest.gateways.payload) }
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
            guard handles(input) else { break }
            let outputs = await core.handleTelemetry(input, at: now, context: context)
            if !outputs.isEmpty {
                ingest.track(outputs)
                publisher.publish(outputs, at: now, engine: core.engine)
            }
            if let refresh, publisher.isStateRefreshDue(for: refresh, at: now) {
                publisher.refreshState(of: refresh, at: now, engine: core.engine)
            }
        case .request(let request):
            await handle(request, at: now)
        case .homeAssistantBirth:
            scheduleHomeAssistantRepublish()
        case .pairing(let command):
            if doesBridgeWork { await handle(command, at: now) }
        }
        syncPairingForm()
    }

    /// `bridge/pairing/set`: fills in the form (answered on `bridge/response/pairing/set`), or
    /// sends its `picker/select` for "Pair" (answered on `bridge/response/picker/select`).
    private func handle(_ command: PairingForm.Command, at now: Timestamp) async {
        let refuse = { (message: String) in
            self.respond(
                PairingForm.requestName, .failure(.invalidRequest(message, accessoryControl: false)), transaction: command.transaction)
        }
        switch command.decoded {
        case .failure(let error):
            respond(PairingForm.requestName, .failure(error), transaction: command.transaction)
        case .success(.pair):
            let chosen = pairing.candidate
            await handle(pairing.selectRequest(transaction: command.transaction), at: now)
            // Set up: the candidate has left the picker (syncPairingForm clears it) and the name
            // was given; a refused select leaves the form as it was, for another try.
            if let chosen, core.engine.picker?.candidate(chosen) == nil, core.engine.status(of: chosen) != nil {
                pairing.name = nil
                publisher.publishPairing(pairing)
            }
        case .success(.fill(let candidate, let name)):
            var form = pairing
            switch candidate {
            case .keep: break
            case .clear: form.candidate = nil
            case .set(let id):
                guard core.engine.picker?.candidate(id) != nil else {
                    return refuse("'candidate' \(id) is not a candidate of the picker")
                }
                form.candidate = id
            }
            switch name {
            case .keep: break
            case .clear: form.name = nil
            case .set(let text): form.name = text
            }
            pairing = form
            publisher.publishPairing(form)
            respond(PairingForm.requestName, .success(form.payload), transaction: command.transaction)
        }
    }

    /// A chosen candidate that left the picker (chosen, dismissed, timed out) is no longer
    /// chosen: the form never offers Pair for something the picker cannot select.
    func syncPairingForm() {
        guard let candidate = pairing.candidate, core.engine.picker?.candidate(candidate) == nil else { return }
        pairing.candidate = nil
        publisher.publishPairing(pairing)
    }

    /// `bridge/request/<name>`: exactly one response, published only after the change is
    /// committed to storage (``RuntimeCore/handleRequest(_:name:at:)``).
    func handle(_ request: IncomingRequest, at now: Timestamp) async {
        guard answers(request) else {
            // Another instance answers it on MQTT; over HTTP this one must say something:
            // 421 Misdirected Request, with why.
            _ = answerOverHTTP(.failure(.misdirected(request, cluster: cluster)), transaction: request.transaction, status: 421)
            return
        }
        switch request.decoded {
        case .failure(let error):
            respond(request, .failure(error))
        case .success(.health):
            countDroppedMessages(at: now)
            respond(request, .success(publisher.health(at: now, engine: core.engine)))
        case .success(.engine(let engineRequest)):
            switch await core.handleRequest(engineRequest, name: request.name, at: now) {
            case .notStored(let error):
                respond(request, .failure(.unknown("not stored: \(error.message)", accessoryControl: request.isAccessoryControl)))
            case .committed(let step):
                ingest.track(step.outputs)
                publisher.publish(step.outputs, at: now, engine: core.engine)
                if publisher.accessoriesDirty { publisher.publishAccessoryList() }
                // An AccessoryControlDevice failure is also among the outputs (accessory/<ID>/error),
                // where publishing it counted it already: one error, counted once.
                let counted = step.outputs.contains { if case .accessoryError = $0 { true } else { false } }
                respond(request, publisher.responseBody(step.result), countError: !counted)
            }
        }
    }

    private func respond(_ request: IncomingRequest, _ result: Result<JSONValue, ResponseError>, countError: Bool = true) {
        respond(request.name, result, transaction: request.transaction, countError: countError, accessory: request.accessory)
    }

    private func respond(
        _ name: String, _ result: Result<JSONValue, ResponseError>, transaction: JSONValue?, countError: Bool = true,
        accessory: BluetoothAddress? = nil
    ) {
        if case .failure(let error) = result {
            if countError { diagnostics.countError(error.code) }
            logger.debug("request \(name) failed: \(error.code): \(error.message)")
        }
        let overHTTP = answerOverHTTP(result, transaction: transaction, accessory: accessory)
        diagnostics.countRequest(name, result, overHTTP: overHTTP)
        publisher.respond(name, result, transaction: transaction, at: clock(), publishResponse: !overHTTP, accessory: accessory)
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

    /// Every retained topic again (after a connection, or for Home Assistant's birth message);
    /// the heap the burst uses is given back once the broker has acknowledged it.
    func republishEverything() {
        publisher.publishEverything(at: clock(), engine: core.engine, gateways: ingest.gateways.payload, pairing: pairing)
        publishInstanceState()
        heapToRelease = true
    }

    // MARK: - What is due

    /// Everything that waits for a time: dropped-message reports, the engine's deadlines,
    /// deferred commits, the accessory list, the health interval.
    private func wake() async {
        let now = clock()
        countDroppedMessages(at: now)
        let outputs = await core.tick(at: now)
        if !outputs.isEmpty {
            ingest.track(outputs)
            publisher.publish(outputs, at: now, engine: core.engine)
        }
        // A picker that timed out takes its candidates, and the form's choice, with it.
        syncPairingForm()
        await core.flushDeferredWrites(at: now)
        if publisher.accessoriesDirty { publisher.publishAccessoryList() }
        if heapToRelease && connection.outstandingPublishes == 0 {
            heapToRelease = false
            ResidentMemory.releaseFreedHeap()
        }
        if now.milliseconds(since: lastHealth) >= healthIntervalMilliseconds {
            lastHealth = now
            publisher.publishHealth(at: now, engine: core.engine)
            publisher.publishGateways(ingest.gateways.payload)
        }
    }

    /// Messages the full backlog dropped since the last look: counted in `telemetry_rejected`
    /// and logged at most once a minute.
    private func countDroppedMessages(at now: Timestamp) {
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
    var publishCongestionLimit: Int { publishCongestionBase + 4 * ingest.products.count }

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
        stopHTTP()
        let now = clock()
        if let outputs = await core.invalidate(at: now) {
            publisher.publish(outputs, at: now, engine: core.engine)
        }
        publisher.publishInfo(engine: core.engine)
        if await !leaveCluster() {
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
