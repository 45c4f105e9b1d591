import Configuration
import MQTT
import Telemetry

/// Classifies each incoming topic once into an ``IngestRoute``. Sendable and immutable, so
/// the forwarding task can classify before the message enters the loop (the request lane
/// needs to know what is a request) and the loop never classifies again.
struct TopicRouter: Sendable {
    let topics: Topics
    /// The gateway entries' parsers, in configuration order: the first that handles a topic wins.
    let parsers: [TelemetryParser]
    let homeAssistantStatusTopic: String?
    /// What the runtime's components claim (``RuntimeComponent/claims``).
    let claims: Set<TopicClaim>
    /// `<base>/`, which every topic of the bridge's own API starts with: telemetry, which does
    /// not, is told apart by one byte comparison instead of four string searches.
    private let apiPrefix: [UInt8]

    /// The routes of `configuration`: its gateway entries, and Home Assistant's status topic
    /// when the integration is enabled; and the topics the components claim.
    init(configuration: BridgeConfiguration, topics: Topics, claims: Set<TopicClaim>) {
        self.topics = topics
        self.claims = claims
        parsers = configuration.gateways.map { gateway in
            TelemetryParser(
                format: gateway.format,
                // The configuration loader has checked these filters; an invalid one would
                // fall back to the format's default.
                topic: TopicPattern(gateway.topic),
                statusTopic: gateway.statusTopic.flatMap { TopicPattern($0) },
                baseTopic: configuration.mqtt.baseTopic, name: gateway.name)
        }
        homeAssistantStatusTopic = configuration.homeAssistant.enabled ? configuration.homeAssistant.statusTopic : nil
        apiPrefix = Array("\(topics.base)/".utf8)
    }

    func route(_ topic: String) -> IngestRoute {
        if topic.utf8.starts(with: apiPrefix) {
            if let name = topics.requestName(in: topic) { return .request(name: name) }
            if let id = topics.accessoryID(inSetTopic: topic) { return .set(accessory: id) }
            if let claimed = claimed(topic) { return claimed }
        }
        if topic == homeAssistantStatusTopic { return .homeAssistantStatus }
        for (index, parser) in parsers.enumerated() {
            if parser.statusTopic?.matches(topic) == true { return .gateway(index: index, status: true) }
            if parser.topic.matches(topic) { return .gateway(index: index) }
        }
        return .unrouted
    }

    /// A component's route for `topic` (under `<base>/`), when it claims it.
    private func claimed(_ topic: String) -> IngestRoute? {
        guard !claims.isEmpty else { return nil }
        if claims.contains(.pairingForm), topic == topics.bridgePairingSet { return .pairing }
        if claims.contains(.reattachForm), topic == topics.bridgeReattachSet { return .reattach }
        guard claims.contains(.clusterMirrors) else { return nil }
        if topic == topics.bridgeState { return .cluster(.bridgeState) }
        if let id = topics.accessoryID(inStateTopic: topic) { return .cluster(.accessoryState(id)) }
        if let source = topics.sourceID(inRouteTopic: topic) { return .cluster(.sourceRoute(source)) }
        return nil
    }

    /// Every filter the bridge subscribes to, without repeats, with the QoS to ask for.
    ///
    /// Gateway telemetry at QoS 0: it says what is heard *now*, and the bridge's session
    /// outlives its connection (mqtt.session_expiry_s), where the broker would keep QoS 1
    /// telemetry and replay an hour of it, stale, after a restart. Requests, `/set` updates
    /// and statuses at QoS 1: those are kept for the bridge while it is away.
    var subscriptions: [(filter: String, qos: MQTTQoS)] {
        var subscriptions = oneOffSubscriptions.map { (filter: $0, qos: MQTTQoS.atLeastOnce) }
        for parser in parsers { subscriptions.append((parser.topic.filter, .atMostOnce)) }
        if claims.contains(.clusterMirrors) {
            // A peer's will says `offline` there; the states of all instances' accessories make
            // the cluster's `bridge/accessories`; the routes are taken over with the accessories.
            for filter in [topics.bridgeState, topics.accessoryStateFilter, topics.sourceRouteFilter] {
                subscriptions.append((filter, .atLeastOnce))
            }
        }
        var seen = Set<String>()
        return subscriptions.filter { seen.insert($0.filter).inserted }
    }

    /// The filters of what is said once (requests, `/set`, the pairing form, statuses): the
    /// MQTT client never drops those when its buffer is full (`priorityFilters`).
    var oneOffSubscriptions: [String] {
        var filters = [topics.requestFilter, topics.setFilter]
        if claims.contains(.pairingForm) { filters.append(topics.bridgePairingSet) }
        if claims.contains(.reattachForm) { filters.append(topics.bridgeReattachSet) }
        for parser in parsers {
            if let status = parser.statusTopic { filters.append(status.filter) }
        }
        if let homeAssistantStatusTopic { filters.append(homeAssistantStatusTopic) }
        return filters
    }
}
