import Configuration
import Telemetry

/// Classifies each incoming topic once into an ``IngestRoute``.
///
/// In two steps, so that each check is made once and in the right place: ``requestRoute(_:)``
/// on the forwarding side (the request lane must know a request before it joins the
/// backlog), a prefix comparison and nothing more, since it runs for every message before
/// the backlog bounds anything; ``otherRoute(_:)`` in the loop for everything else (the
/// gateway patterns are the dearer part). Sendable and immutable for that reason.
struct TopicRouter: Sendable {
    let topics: Topics
    /// The gateway entries' parsers, in configuration order: the first that handles a topic wins.
    let parsers: [TelemetryParser]
    let homeAssistantStatusTopic: String?

    func route(_ topic: String) -> IngestRoute {
        requestRoute(topic) ?? otherRoute(topic)
    }

    /// `.request(name:)` when the topic is `<base>/bridge/request/<name>`, else nil.
    func requestRoute(_ topic: String) -> IngestRoute? {
        topics.requestName(in: topic).map { .request(name: $0) }
    }

    /// The route of a topic that is not a request.
    func otherRoute(_ topic: String) -> IngestRoute {
        if let id = topics.accessoryID(inSetTopic: topic) { return .set(accessory: id) }
        if topic == homeAssistantStatusTopic { return .homeAssistantStatus }
        for (index, parser) in parsers.enumerated() where parser.handles(topic: topic) {
            return .gateway(index: index)
        }
        return .unrouted
    }

    /// Every filter the bridge subscribes to, without repeats.
    var subscriptionFilters: [String] {
        var filters = [topics.requestFilter, topics.setFilter]
        for parser in parsers {
            filters.append(parser.topic.filter)
            if let status = parser.statusTopic { filters.append(status.filter) }
        }
        if let homeAssistantStatusTopic { filters.append(homeAssistantStatusTopic) }
        var seen = Set<String>()
        return filters.filter { seen.insert($0).inserted }
    }
}
