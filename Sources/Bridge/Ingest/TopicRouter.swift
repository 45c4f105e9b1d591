import Configuration
import MQTT
import Telemetry

/// Classifies each incoming topic once into an ``IngestRoute``. Sendable and immutable, so
/// the forwarding task can classify before the message enters the loop (the request lane
/// needs to know what is a request) and the loop never classifies again.
///
/// The bridge's own API (requests, `/set`) is routed here; every other topic is a component's
/// claim (``TopicClaim``), tried in the components' order and, within one, in its claims' order.
struct TopicRouter: Sendable {
    let topics: Topics
    /// Each component's claims, by its place in the runtime's list.
    /// Each component's claims, by its place in the runtime's list; `underBase`: the filter
    /// starts with `<base>/`, so no other topic can match it.
    private let claims: [(pattern: TopicPattern, underBase: Bool, route: ClaimedTopic)]
    /// `<base>/`, which every topic of the bridge's own API starts with: telemetry, which does
    /// not, is told apart by one byte comparison and never compared with the API's claims.
    private let apiPrefix: [UInt8]

    /// - Parameter claims: each component's claims, in the components' order.
    init(topics: Topics, claims: [[TopicClaim]]) {
        self.topics = topics
        let apiPrefix = Array("\(topics.base)/".utf8)
        self.apiPrefix = apiPrefix
        self.claims = claims.enumerated().flatMap { component, claims in
            claims.compactMap { claim in
                // The claims come from the checked configuration and the bridge's own topics.
                TopicPattern(claim.filter).map { pattern in
                    let route = ClaimedTopic(component: component, tag: claim.tag, oneOff: claim.oneOff, sheddable: claim.sheddable)
                    return (pattern, claim.filter.utf8.starts(with: apiPrefix), route)
                }
            }
        }
        let all = claims.flatMap { $0 }
        subscriptions = Self.subscriptions(topics: topics, claims: all)
        var seen = Set<String>()
        oneOffSubscriptions = ([topics.requestFilter, topics.setFilter] + all.filter(\.oneOff).map(\.filter)).filter {
            seen.insert($0).inserted
        }
    }

    func route(_ topic: String) -> IngestRoute {
        let underBase = topic.utf8.starts(with: apiPrefix)
        if underBase {
            if let name = topics.requestName(in: topic) { return .request(name: name) }
            if let id = topics.accessoryID(inSetTopic: topic) { return .set(accessory: id) }
        }
        for claim in claims where (underBase || !claim.underBase) && claim.pattern.matches(topic) {
            return .claimed(claim.route)
        }
        return .unrouted
    }

    /// Every filter the bridge subscribes to, without repeats, with the QoS to ask for:
    /// requests and `/set` at QoS 1 (kept for the bridge while it is away), then each claim's.
    let subscriptions: [(filter: String, qos: MQTTQoS)]

    private static func subscriptions(topics: Topics, claims: [TopicClaim]) -> [(filter: String, qos: MQTTQoS)] {
        var subscriptions = [(topics.requestFilter, MQTTQoS.atLeastOnce), (topics.setFilter, .atLeastOnce)]
        // One-off filters first, as the MQTT client's priority list has them.
        for claim in claims where claim.oneOff { subscriptions.append((claim.filter, claim.qos)) }
        for claim in claims where !claim.oneOff { subscriptions.append((claim.filter, claim.qos)) }
        var seen = Set<String>()
        return subscriptions.filter { seen.insert($0.0).inserted }.map { (filter: $0.0, qos: $0.1) }
    }

    /// The filters of what is said once (requests, `/set`, the forms, statuses): the MQTT
    /// client never drops those when its buffer is full (`priorityFilters`).
    let oneOffSubscriptions: [String]
}
