import AccessoryKit
import Configuration
import Foundation
import HomeAssistant
import JSON
import MQTT
import Storage
import Telemetry

/// The running bridge: one engine fed by the MQTT message stream and a clock, its outputs
/// stored and published as mqtt-api.md says.
///
/// One task owns everything here (``run()``): messages, connection changes, ticks and the
/// shutdown signal are merged into one stream and handled in order, so the engine needs no
/// lock and outputs keep the engine's order on the wire.
public final class BridgeRuntime {
    public let configuration: BridgeConfiguration
    let client: MQTTClient
    let store: AccessoryStore
    let topics: Topics
    var payloads: Payloads
    let logger: BridgeLogger
    let clock: @Sendable () -> Timestamp
    let parsers: [(parser: TelemetryParser, format: String)]
    let resolver: AddressResolver<AccessoryKit.BluetoothAddress>
    /// Resolvable private addresses already resolved (or known not to resolve): an AES
    /// computation per key is too dear to repeat for every advertisement.
    var resolvedAddresses: [UInt64: AccessoryKit.BluetoothAddress?] = [:]
    let decoders: [String: SightingDecoder]
    let hardware: [String: HardwareType]
    /// The product of each known accessory, kept in step with the engine's outputs so the
    /// advertisement path needs no snapshot.
    var productOfAccessory: [AccessoryKit.BluetoothAddress: String] = [:]
    /// When each accessory's retained state was last published. Sightings only refresh
    /// `rssi`/`gateway`/`last_seen` inside the engine; the state is republished for them at
    /// most once per ``stateRefreshMilliseconds``, so `last_seen` stays useful without a
    /// message per advertisement.
    var statePublishedAt: [AccessoryKit.BluetoothAddress: Timestamp] = [:]
    static let stateRefreshMilliseconds: Int64 = 30_000
    /// Each accessory's last serialized state object, reused for `bridge/accessories`.
    var serializedStatuses: [AccessoryKit.BluetoothAddress: (hash: Int, bytes: [UInt8])] = [:]

    var engine: BridgeEngine
    /// Home Assistant discovery, when `homeassistant.enabled`.
    var homeAssistant: HomeAssistantDiscoveryTracker?
    var gateways = GatewayTracker()
    var counters = RuntimeCounters()
    var rejectionLog = RateLimiter()
    var accessoriesDirty = false
    /// A republish for Home Assistant's birth message is pending (see `handle(_:)`).
    var republishScheduled = false
    /// Registration changes caused by telemetry, latest per accessory, committed together at
    /// the next tick (see ``deferAndPublish(_:at:context:)``).
    var deferredRegistrations: [AccessoryKit.BluetoothAddress: Registration] = [:]
    /// The availability last published per accessory: the engine reports only changes, so an
    /// accessory added while the bridge runs would otherwise have no availability topic.
    var publishedAvailability: [AccessoryKit.BluetoothAddress: Bool] = [:]
    /// The route payload last published per source, fallback included, republished after a
    /// reconnect: a broker that lost its retained messages must get every route back.
    var publishedRoutes: [AccessoryKit.BluetoothAddress: JSONValue] = [:]
    let startedAt: Timestamp
    var lastHealth: Timestamp
    var events: AsyncStream<RuntimeEvent>
    let eventSink: AsyncStream<RuntimeEvent>.Continuation
    /// At most this many messages wait for the loop; more are dropped (flood protection).
    let backlog = Backlog(limit: 50_000)
    /// Requests overtaking a congested backlog.
    let requestLane = RequestLane()
    /// Where incoming messages enter the loop.
    var inbox: RuntimeInbox { RuntimeInbox(topics: topics, requestLane: requestLane, backlog: backlog, sink: eventSink) }
    /// Telemetry is shed while more of the bridge's publications than this (plus four per
    /// accessory) wait for the broker's acknowledgement: see ``publishCongestionLimit``.
    var publishCongestionBase = 1_000

    /// Opens nothing itself: the caller loads the configuration and opens the store, so that
    /// each can fail with its own clear message and exit status.
    public init(configuration: BridgeConfiguration, store: AccessoryStore,
                clock wall: @escaping @Sendable () -> Timestamp = BridgeClock.now) throws {
        // Engine time never goes backwards (see SteadyClock): a wall clock set back must not
        // freeze debounce windows and availability timeouts.
        let steady = SteadyClock(wall)
        let clock: @Sendable () -> Timestamp = { steady.now() }
        self.configuration = configuration
        self.store = store
        self.clock = clock
        topics = Topics(base: configuration.mqtt.baseTopic)
        payloads = Payloads(sourceNames: Dictionary(
            configuration.sources.map { ($0.address, $0.name) }, uniquingKeysWith: { first, _ in first }))
        let client = try MQTTClient(configuration: Self.clientConfiguration(configuration, topics: topics))
        self.client = client
        let topics = self.topics
        let payloads = self.payloads
        let level = BridgeLogger.Level(name: configuration.log.level.rawValue) ?? .info
        logger = BridgeLogger(minimum: level, json: configuration.log.format.rawValue == "json", clock: clock) { level, message in
            client.post(topic: topics.bridgeLog, payload: payloads.log(level: level.name, message: message, at: clock()).bytes)
        }
        parsers = configuration.gateways.map { gateway in
            let parser = TelemetryParser(
                format: gateway.format,
                // The configuration loader has checked these filters; an invalid one would
                // fall back to the format's default.
                topic: TopicPattern(gateway.topic),
                statusTopic: gateway.statusTopic.flatMap { TopicPattern($0) },
                baseTopic: configuration.mqtt.baseTopic, name: gateway.name)
            return (parser, gateway.format.rawValue)
        }
        resolver = AddressResolver(keys: configuration.accessories.compactMap { accessory in
            guard let irk = accessory.irk, let key = IdentityResolvingKey(bytes: irk) else { return nil }
            return (accessory.migration.id, key)
        })
        decoders = Dictionary(configuration.products.map {
            ($0.name, SightingDecoder($0.placementDecoder, descriptor: $0.product.descriptor))
        }, uniquingKeysWith: { first, _ in first })
        hardware = Dictionary(configuration.products.map { ($0.name, $0.product.hardware) }, uniquingKeysWith: { first, _ in first })
        homeAssistant = configuration.homeAssistant.enabled
            ? HomeAssistantDiscoveryTracker(discovery: HomeAssistantDiscovery(configuration: configuration, version: BridgeModule.version)) : nil
        let restored = try store.load()
        engine = BridgeEngine(configuration: configuration.engine, restored: restored)
        startedAt = clock()
        lastHealth = startedAt
        (events, eventSink) = AsyncStream.makeStream(of: RuntimeEvent.self)
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
        client.reconnect = ReconnectBackoff(minimum: .seconds(broker.reconnect.minimumSeconds),
                                            maximum: .seconds(broker.reconnect.maximumSeconds))
        client.will = .init(topic: topics.bridgeState, payload: Array(#"{"state":"offline"}"#.utf8), qos: .atLeastOnce, retain: true)
        // A flood must not grow memory without bound: beyond this many waiting messages the
        // oldest are dropped (and counted in the client statistics).
        client.messageBufferLimit = 100_000
        return client
    }

    /// Runs until SIGTERM/SIGINT (or ``stop()``), then shuts down cleanly. Returns the exit status.
    public func run(signals: AsyncStream<Int32>? = nil) async -> Int32 {
        activate()
        let client = self.client
        let sink = eventSink
        for filter in subscriptionFilters {
            try? await client.subscribe(filter, qos: .atLeastOnce)
        }
        let forwarders = [
            Task { [inbox] in
                for await message in client.messages { inbox.forward(message) }
            },
            Task { for await state in client.connectionStates { sink.yield(.connection(state)) } },
            Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(50))
                    sink.yield(.tick)
                }
            },
            Task {
                guard let signals else { return }
                for await signal in signals {
                    sink.yield(.shutdown(signal: signal))
                    break
                }
            },
        ]
        client.start()
        logger.info("aabridge \(BridgeModule.version) starting; broker \(configuration.mqtt.host):\(configuration.mqtt.port), base topic '\(topics.base)'")
        loop: for await event in events {
            for request in requestLane.drain() { handle(request) }
            switch event {
            case .message(let message):
                backlog.taken()
                handle(message)
            case .connection(let state): connectionChanged(state)
            case .tick: tick()
            case .requests: break
            case .republish:
                republishScheduled = false
                publishEverything()
            case .shutdown(let signal):
                logger.info("signal \(signal): shutting down")
                break loop
            }
        }
        await shutdown()
        forwarders.forEach { $0.cancel() }
        return 0
    }

    /// Asks ``run()`` to shut down cleanly (as SIGTERM would).
    public func stop() { eventSink.yield(.shutdown(signal: SIGTERM)) }

    /// Everything the bridge listens to.
    var subscriptionFilters: [String] {
        var filters = [topics.requestFilter, topics.setFilter]
        for (parser, _) in parsers {
            filters.append(parser.topic.filter)
            if let status = parser.statusTopic { filters.append(status.filter) }
        }
        if configuration.homeAssistant.enabled { filters.append(configuration.homeAssistant.statusTopic) }
        var seen = Set<String>()
        return filters.filter { seen.insert($0).inserted }
    }

    /// Activates the session: migration writes are committed before anything is published.
    func activate() {
        let now = clock()
        let step = engine.handle(.activate, at: now)
        commitAndPublish(step.outputs, at: now, context: "activation")
        for status in engine.statuses { productOfAccessory[status.accessory.id] = status.accessory.product }
        logger.info("session activated: \(engine.accessories.count) accessories, \(engine.registry.registrations.count) registrations")
    }

    func connectionChanged(_ state: MQTTConnectionState) {
        switch state {
        case .connected:
            logger.info("connected to \(configuration.mqtt.host):\(configuration.mqtt.port)")
            publishEverything()
        case .disconnected(let error):
            logger.warning("MQTT: \(error.message); reconnecting")
        }
    }

    func tick() {
        let now = clock()
        let dropped = backlog.takeDropped()
        if dropped > 0 {
            counters.telemetryRejected += dropped
            if rejectionLog.admit("flood", now: now.milliseconds).admitted {
                logger.warning("flood: \(dropped) messages dropped because more than \(backlog.limit) were waiting")
            }
        }
        if let deadline = engine.nextDeadline, deadline <= now {
            let step = engine.handle(.tick, at: now)
            deferAndPublish(step.outputs, at: now, context: "tick")
        }
        flushDeferredWrites(context: "telemetry")
        if accessoriesDirty { publishAccessoryList() }
        if now.milliseconds(since: lastHealth) >= Int64(configuration.health.intervalSeconds) * 1000 {
            lastHealth = now
            publishHealth()
            publishRetained(topics.bridgeGateways, gateways.payload)
        }
    }

    /// Clean shutdown: the session's `invalidated` event, `offline`, storage closed.
    func shutdown() async {
        let now = clock()
        flushDeferredWrites(context: "shutdown")
        let step = engine.handle(.invalidate, at: now)
        commitAndPublish(step.outputs, at: now, context: "shutdown")
        publishInfo()
        if client.isConnected {
            try? await client.publish(topic: topics.bridgeState, string: #"{"state":"offline"}"#, qos: .atLeastOnce, retain: true)
        }
        await client.disconnect()
        store.close()
        logger.info("stopped")
    }
}
