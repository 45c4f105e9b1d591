import AccessoryKit
import Configuration
import HomeAssistant
import JSON
import MQTT

/// The third stage: turns engine outputs into the MQTT messages of mqtt-api.md.
///
/// It owns everything about what it published: each accessory's last state (and when),
/// availability and routes, the serialized state objects reused for `bridge/accessories`,
/// and the device discovery (``DeviceDiscovery``: Home Assistant's, or none). It reads the
/// engine (names, statuses) through ``EngineView`` but never changes it, and publishes through
/// ``MQTTPublishing``, so it runs the same against the real client and an in-memory one. The
/// components publish their own topics through it (``publish(_:_:retain:)``), so that every
/// publication is held until the first connection and mirrored to the console alike.
final class Publisher {
    let connection: any MQTTPublishing
    let topics: Topics
    /// The payloads, with the names of the source devices as the engine has them.
    private(set) var payloads: Payloads
    private let diagnostics: Diagnostics
    private let engine: EngineView
    /// Home Assistant discovery, or ``NoDeviceDiscovery``.
    private var discovery: any DeviceDiscovery
    /// The accessory count of the last `bridge/info`; nil before the first.
    private var infoAccessoryCount: Int?
    let info: BridgeInfo
    /// Sees every publication (the HTTP console's event streams), when set.
    var mirror: ((String, [UInt8]) -> Void)?
    let startedAt: Timestamp
    /// What this instance owns: only the owner of an accessory publishes its topics, only the
    /// holder of partition 0 the bridge's; in a cluster every accessory's state, decision and
    /// response carries the instance and its partition's epoch (docs/scaling.md). A single
    /// bridge owns everything and stamps nothing.
    private let ownership: Ownership
    /// The states this bridge published, for `bridge/accessories` (unless ``listing`` is
    /// another's) and for reusing a state's text.
    private let published = PublishedStates()
    /// What `bridge/accessories` lists: ``published``, or in a cluster every instance's states.
    private let listing: any AccessoryListing

    /// When each accessory's retained state was last published. Sightings only refresh
    /// `rssi`/`gateway`/`last_seen` inside the engine; the state is republished for them at
    /// most once per ``stateRefreshMilliseconds``, so `last_seen` stays useful without a
    /// message per advertisement.
    private var statePublishedAt: [BluetoothAddress: Timestamp] = [:]
    static let stateRefreshMilliseconds: Int64 = 30_000
    /// The availability last published per accessory: the engine reports only changes, so an
    /// accessory added while the bridge runs would otherwise have no availability topic.
    private var publishedAvailability: [BluetoothAddress: Bool] = [:]
    /// The route payload last published per source, fallback included, republished after a
    /// reconnect: a broker that lost its retained messages must get every route back.
    private var publishedRoutes: [BluetoothAddress: JSONValue] = [:]
    /// `bridge/accessories` is out of date; it is republished when next due (once for a
    /// burst of changes, not once per change).
    var accessoriesDirty: Bool { listing.changed }
    /// Until the first connection (nil after): what was published before it, held. The first
    /// ``publishEverything(at:gateways:lookalikes:)`` publishes every retained topic's current
    /// state, so a retained message before it would go out twice (and ahead of `bridge/state`
    /// `online`): those are dropped, and the rest (events, decisions, errors, cleared topics)
    /// go out right after `online`, in their order.
    private var heldUntilConnected: [(topic: String, payload: [UInt8], retain: Bool)]? = []

    /// - Parameter listing: what `bridge/accessories` lists when it is not the states this
    ///   bridge published (a cluster's, ``MirroredStates``).
    init(
        connection: any MQTTPublishing, configuration: BridgeConfiguration, topics: Topics, engine: EngineView,
        ownership: Ownership, listing: (any AccessoryListing)? = nil, discovery: any DeviceDiscovery,
        diagnostics: Diagnostics, startedAt: Timestamp
    ) {
        self.connection = connection
        self.topics = topics
        self.engine = engine
        self.ownership = ownership
        self.listing = listing ?? published
        self.diagnostics = diagnostics
        self.startedAt = startedAt
        payloads = Payloads(sourceNames: engine.engine.sourceNames)
        self.discovery = discovery
        info = BridgeInfo(configuration: configuration, baseTopic: topics.base)
    }

    // MARK: - Engine outputs

    func publish(_ outputs: [EngineOutput], at now: Timestamp) {
        for output in outputs { publish(output, at: now) }
    }

    private func publish(_ output: EngineOutput, at now: Timestamp) {
        guard ownership.publishes(output) else { return }
        switch output {
        case .event(let event):
            enqueue(topics.bridgeEvent, payloads.event(event, at: now).bytes)
            if event.type == .activated || event.type == .invalidated { publishInfo() }
        case .pickerChanged(let picker):
            publishRetained(topics.bridgePicker, payloads.picker(picker))
            // The "Candidate" select offers only what its discovery lists.
            if let device = discovery.candidatesChanged(Self.candidates(picker)) { publishRetained(device.topic, device.payload) }
        case .accessoryChanged(let status):
            statePublishedAt[status.accessory.id] = now
            enqueue(topics.accessory(status.accessory.id), statusBytes(status), retain: true)
            if publishedAvailability[status.accessory.id] == nil {
                publishAvailability(status.accessory.id, status.available)
            }
            published.markChanged()
            // Discovery only when what Home Assistant shows changed (name, capabilities,
            // battery parts), not on every RSSI or placement change.
            if let device = discovery.accessoryChanged(status) { publishRetained(device.topic, device.payload) }
            republishInfoIfCountChanged()
        case .accessoryRemoved(let id):
            statePublishedAt[id] = nil
            published.removed(id)
            publishedAvailability[id] = nil
            // An empty retained payload clears the topic on the broker. Discovery first: Home
            // Assistant then removes the entities before their state topics turn empty.
            if let discoveryTopic = discovery.accessoryRemoved(id) { enqueue(discoveryTopic, [], retain: true) }
            enqueue(topics.accessory(id), [], retain: true)
            enqueue(topics.availability(id), [], retain: true)
            republishInfoIfCountChanged()
        case .availabilityChanged(let id, let available):
            publishAvailability(id, available)
        case .registrationChanged:
            // The accessory's state object (accessoryChanged) carries the registration.
            published.markChanged()
        case .routeChanged(let change):
            let name = change.target.accessory.flatMap { engine.status(of: $0)?.accessory.displayName }
            let payload = payloads.route(change, accessoryName: name, at: now)
            publishedRoutes[change.source] = payload
            guard !ownership.leavesRoute(change) else { break }
            publishRetained(topics.sourceRoute(change.source), stamped(payload, for: change.target.accessory ?? change.previous.accessory))
        case .decision(let decision):
            diagnostics.counters.decisions += 1
            enqueue(topics.decision(decision.accessory), stamped(payloads.decision(decision, at: now), for: decision.accessory).bytes)
        case .accessoryError(let id, let error):
            diagnostics.countError(error.code.rawValue)
            enqueue(topics.error(id), payloads.accessoryError(error, at: now).bytes)
        case .registrationReevaluated(let id, let reason, let error):
            // The state and the route decisions show the outcome; the log says why it happened.
            let why =
                switch reason {
                case .invalidated: "its registration was invalidated"
                case .noWearSensor(let model):
                    "it is a \(model ?? "model") without a wear sensor, so with placement it would never be routed"
                }
            if let error {
                diagnostics.logger.warning(
                    "accessory \(id): \(why); registering it again failed (\(error.code.rawValue): \(error.message)); "
                        + "send \(RequestName.register.name)")
            } else {
                let what = reason == .invalidated ? "with its last configuration" : "without placement (routed while available)"
                diagnostics.logger.info("accessory \(id): \(why); registered it again \(what) (auto_register)")
            }
        case .sourceNamed(let source, let name):
            payloads.sourceNames[source] = name
            // The "Home source" selects offer named sources by name.
            let owned = engine.engine.statuses.filter { ownership.owns($0.accessory.id) }
            for device in discovery.sourceNamesChanged(payloads.sourceNames, statuses: owned) {
                publishRetained(device.topic, device.payload)
            }
            // The retained route carries the name: it goes out again with the new one.
            guard case .object(var pairs) = publishedRoutes[source] else { break }
            if let index = pairs.firstIndex(where: { $0.0 == "name" }) { pairs[index].1 = .string(name) }
            publishedRoutes[source] = .object(pairs)
            let target = engine.engine.route(for: source).accessory
            guard ownership.republishes(routeTo: target) else { break }
            publishRetained(topics.sourceRoute(source), stamped(.object(pairs), for: target))
        case .storage, .keysChanged:
            break
        case .sensorFrame, .sensorFrameRefused:
            // HeadTrackingComponent forwards them, within its caps.
            break
        }
    }

    /// Republishes a known accessory's state when telemetry refreshed it without a change
    /// and the last publication is older than ``stateRefreshMilliseconds``.
    func refreshState(of id: BluetoothAddress, at now: Timestamp) {
        guard isStateRefreshDue(for: id, at: now), let status = engine.status(of: id) else { return }
        statePublishedAt[id] = now
        enqueue(topics.accessory(id), statusBytes(status), retain: true)
    }

    /// Whether ``refreshState(of:at:)`` would publish: asked first for every sighting, since
    /// building the state costs more than this look.
    func isStateRefreshDue(for id: BluetoothAddress, at now: Timestamp) -> Bool {
        guard let last = statePublishedAt[id] else { return false }
        return now.milliseconds(since: last) >= Self.stateRefreshMilliseconds
    }

    // MARK: - Bridge topics

    /// Every retained topic of the engine's, after each (re)connect: a broker restart loses
    /// nothing a subscriber relies on, and no state stays stuck `offline`. (The components
    /// republish theirs next: health, gateways, look-alikes, the forms.)
    func publishEverything(at now: Timestamp) {
        let held = heldUntilConnected ?? []
        heldUntilConnected = nil
        publishRetained(topics.bridgeState, Self.onlinePayload)
        for message in held { enqueue(message.topic, message.payload, retain: message.retain) }
        let engine = self.engine.engine
        if publishesBridge {
            publishInfo()
            publishRetained(topics.bridgePicker, payloads.picker(engine.picker))
        }
        let statuses = engine.statuses.filter { ownership.owns($0.accessory.id) }
        for status in statuses {
            statePublishedAt[status.accessory.id] = now
            enqueue(topics.accessory(status.accessory.id), statusBytes(status), retain: true)
            publishAvailability(status.accessory.id, status.available)
        }
        published.keep { statePublishedAt[$0] == now }
        if publishesBridge { publishAccessoryList() }
        _ = discovery.candidatesChanged(Self.candidates(engine.picker))
        // The first device is the bridge's (with a sensor for each gateway heard so far: the
        // sources tell the discovery as they hear them, ``discover(gateways:)``).
        for device in discovery.everything(statuses).dropFirst(publishesBridge ? 0 : 1) {
            publishRetained(device.topic, device.payload)
        }
        // Every source a registration lists has a route this process has not published yet:
        // `startup`, with the current target (`fallback` until an accessory is heard), which
        // also replaces a route the broker kept from before the restart.
        for source in engine.listedSourceAddresses where publishedRoutes[source] == nil {
            let target = engine.route(for: source)
            let change = RouteChange(source: source, previous: .fallback, target: target, reason: .startup)
            let name = target.accessory.flatMap { engine.status(of: $0)?.accessory.displayName }
            publishedRoutes[source] = payloads.route(change, accessoryName: name, at: now)
        }
        for (source, payload) in publishedRoutes.sorted(by: { $0.key < $1.key }) {
            // In a cluster, a route is the business of the instance that owns its target:
            // another instance's engine never hears that accessory and would say `fallback`.
            let target = engine.route(for: source).accessory
            guard ownership.republishes(routeTo: target) else { continue }
            publishRetained(topics.sourceRoute(source), stamped(payload, for: target))
        }
    }

    /// `bridge/accessories`, from ``listing``.
    func publishAccessoryList() {
        defer { listing.listIsCurrent() }
        guard publishesBridge else { return }
        enqueue(topics.bridgeAccessories, listing.list(), retain: true)
    }

    /// The payload of `bridge/accessories` now (the console's snapshot).
    func accessoryList() -> [UInt8] { listing.list() }

    /// The heard gateways changed: the bridge device's discovery (each has its sensor there).
    func discover(gateways heard: [HomeAssistantGateway]) {
        guard let device = discovery.gatewaysChanged(heard), publishesBridge else { return }
        publishRetained(device.topic, device.payload)
    }

    /// The look-alikes each away accessory could be changed: Home Assistant's "Look-alike"
    /// selects offer only what their discovery lists.
    func discover(lookalikes: [BluetoothAddress: [BluetoothAddress]]) {
        let owned = engine.engine.statuses.filter { ownership.owns($0.accessory.id) }
        for device in discovery.lookalikesChanged(lookalikes, statuses: owned) {
            publishRetained(device.topic, device.payload)
        }
    }

    func publishInfo() {
        guard publishesBridge else { return }
        infoAccessoryCount = engine.engine.accessories.count
        publishRetained(topics.bridgeInfo, infoPayload())
    }

    /// `bridge/info` again when the number of accessories it states changed: Home Assistant's
    /// Accessories sensor reads it there, and would otherwise show the count of the last start.
    private func republishInfoIfCountChanged() {
        guard publishesBridge, let published = infoAccessoryCount, published != engine.engine.accessories.count else { return }
        publishInfo()
    }

    /// `bridge/info` now.
    func infoPayload() -> JSONValue {
        let engine = self.engine.engine
        return info.payload(engine: engine, registered: Self.registeredCount(engine))
    }

    /// `bridge/health`, published and answered to the `health` request.
    func health(at now: Timestamp) -> JSONValue {
        let engine = self.engine.engine
        let statistics = connection.statistics
        let counters = diagnostics.counters
        return [
            "uptime_s": .int(Int(now.milliseconds(since: startedAt) / 1000)),
            "rss_bytes": .int(ResidentMemory.bytes()),
            "messages_in": .int(statistics.messagesIn),
            "messages_out": .int(statistics.messagesOut),
            // Dropped by the backlog or the congestion bound, refused by a parser, or dropped
            // by the MQTT client's full message stream (messageBufferLimit).
            "telemetry_rejected": .int(counters.telemetryRejected + statistics.messagesDropped),
            "decisions": .int(counters.decisions),
            "errors": .int(counters.errors),
            "mqtt_reconnects": .int(statistics.reconnects),
            "accessories": .int(engine.accessories.count),
            "registered": .int(Self.registeredCount(engine)),
            // An aabridge addition to the contract's keys (mqtt-api.md): Fast Pair service data
            // of known accessories ignored for an unknown layout. Not in telemetry_rejected:
            // the message was fine, only its Fast Pair part was not read.
            "fast_pair_ignored": .int(counters.fastPairIgnored),
            "at": .string(ISO8601.string(now)),
        ]
    }

    /// Registrations of accessories the session still knows. The engine keeps a removed
    /// accessory's registration (invalidated) in memory, but it is gone from storage, so it
    /// must not be counted: the number would change across a restart.
    static func registeredCount(_ engine: BridgeEngine) -> Int {
        engine.registeredAccessoryCount
    }

    // MARK: - Responses and logs

    /// A request's response on `bridge/response/<name>`, and its outcome on the retained
    /// `bridge/last_response`: Home Assistant's controls cannot subscribe to a response, so
    /// the bridge device's "Last request" sensor reads this to show a refused press.
    /// A request made over HTTP is answered there (`publishResponse` false).
    /// In a cluster the response carries the instance and the epoch of the partition it was
    /// answered for: the accessory's, or partition 0's for a bridge-wide request.
    func respond(
        _ name: String, _ result: Result<JSONValue, ResponseError>, transaction: JSONValue?, at now: Timestamp,
        publishResponse: Bool = true,
        accessory: BluetoothAddress? = nil
    ) {
        if publishResponse {
            let body = stamped(payloads.response(result, transaction: transaction), for: accessory)
            enqueue(topics.response(name), body.bytes, retain: false)
        }
        publishRetained(topics.bridgeLastResponse, payloads.lastResponse(name, result, transaction: transaction, at: now))
    }

    /// The picker's candidates as Home Assistant's "Candidate" select offers them (unnamed: by product).
    static func candidates(_ picker: Picker?) -> [HomeAssistantCandidate] {
        (picker?.candidates ?? []).map { HomeAssistantCandidate(id: $0.id, name: $0.name ?? $0.product) }
    }

    /// The engine's result of a request as a response body.
    func responseBody(_ result: RequestResult?) -> Result<JSONValue, ResponseError> {
        switch result {
        case nil, .success(.empty)?: return .success(.object([]))
        case .success(.accessory(let accessory))?: return .success(payloads.accessory(accessory))
        case .success(.configuration(let configuration))?: return .success(payloads.configuration(configuration))
        case .success(.device(let device))?:
            return .success([
                "accessory": payloads.accessory(device.accessory), "configuration": payloads.configuration(device.configuration),
            ])
        case .success(.picker(let picker))?: return .success(payloads.picker(picker))
        case .success(.keys(let id, let presence, let match))?:
            return .success(["id": .string(id.description), "keys": payloads.keys(presence), "irk_match": .string(match?.rawValue)])
        case .success(.state(let id))?: return .success(engine.status(of: id).map(payloads.status) ?? .object([]))
        case .success(.sourceName(let source, let name))?:
            return .success(["address": .string(source.description), "name": .string(name)])
        case .failure(let error)?: return .failure(ResponseError(error))
        }
    }

    /// `offline` on `bridge/state`, waiting for the broker's acknowledgement (shutdown).
    /// - Returns: whether the broker acknowledged it within `limit` (or nothing was owed:
    ///   not connected). A broker that stops answering must not hold the shutdown: after the
    ///   limit the bridge goes on and its will says `offline` once the broker notices.
    func publishOffline(within limit: Duration) async -> Bool {
        guard connection.isConnected else { return true }
        let (connection, topic) = (self.connection, topics.bridgeState)
        return await Deadline.run(limit) {
            try? await connection.publishAcknowledged(
                topic: topic, payload: Self.offlinePayload, qos: .atLeastOnce, retain: true)
        }
    }

    // MARK: - Helpers

    private func publishAvailability(_ id: BluetoothAddress, _ available: Bool) {
        publishedAvailability[id] = available
        publishRetained(topics.availability(id), payloads.availability(available))
    }

    private func publishRetained(_ topic: String, _ payload: JSONValue) {
        enqueue(topic, payload.bytes, retain: true)
    }

    /// A component's publication (an empty retained payload clears the topic).
    func publish(_ topic: String, _ payload: [UInt8], retain: Bool) { enqueue(topic, payload, retain: retain) }

    /// A stream whose late copies are worthless (head-tracking frames): QoS 0, never retained,
    /// never held until the connection nor kept while disconnected (the client drops it).
    func publishTransient(_ topic: String, _ payload: [UInt8]) {
        mirror?(topic, payload)
        guard heldUntilConnected == nil else { return }
        connection.enqueue(topic: topic, payload: payload, qos: .atMostOnce, retain: false)
    }

    /// Every message of the contract is QoS 1 (but ``publishTransient(_:_:)``'s), in the engine's order.
    private func enqueue(_ topic: String, _ payload: [UInt8], retain: Bool = false) {
        mirror?(topic, payload)
        if heldUntilConnected != nil {
            // A retained state is published anyway at the first connection; a cleared topic
            // (empty payload) is not, so it is held like the rest.
            if !retain || payload.isEmpty { heldUntilConnected!.append((topic, payload, retain)) }
            return
        }
        connection.enqueue(topic: topic, payload: payload, qos: .atLeastOnce, retain: retain)
    }

    /// An accessory's state object as JSON, from the cache when its state is unchanged.
    private func statusBytes(_ status: AccessoryStatus) -> [UInt8] {
        let id = status.accessory.id
        // The epoch is part of the text in a cluster: a state published again after a takeover
        // must say the new one.
        var hasher = Hasher()
        hasher.combine(status)
        hasher.combine(ownership.epoch(of: id))
        let hash = hasher.finalize()
        if let cached = published.text(of: id, hash: hash) { return cached }
        let bytes = stamped(payloads.status(status), for: id).bytes
        published.store(id, hash: hash, bytes: bytes)
        return bytes
    }

    /// `bridge/state` as the will and a clean shutdown say it.
    static let offlinePayload = Array(#"{"state":"offline"}"#.utf8)

    /// `bridge/state` as a connection says it.
    static let onlinePayload: JSONValue = ["state": "online"]

    /// Whether this instance publishes the bridge's own topics: while it holds partition 0
    /// (a single bridge always does).
    var publishesBridge: Bool { ownership.ownsBridge }

    /// `payload` with the instance and epoch its ``Ownership`` stamps (nothing for a single
    /// bridge).
    func stamped(_ payload: JSONValue, for accessory: BluetoothAddress?) -> JSONValue {
        ownership.stamped(payload, for: accessory)
    }
}
