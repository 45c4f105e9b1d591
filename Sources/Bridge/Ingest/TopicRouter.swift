import Configuration
import Telemetry

/// Classifies each incoming topic once into an ``IngestRoute``. Sendable and immutable, so
/// the forwarding task can classify before the message enters the loop (the request lane
/// needs to know what is a request) and the loop never classifies again.
struct TopicRouter: Sendable {
    let topics: Topics
    /// The gateway entries' parsers, in configuration order: the first that handles a topic wins.
    let parsers: [TelemetryParser]
    let homeAssistantStatusTopic: String?

    func route(_ topic: String) -> IngestRoute {
        if let name = topics.requestName(in: topic) { return .request(name: name) }
        if let id = topics.accessoryID(inSetTopic: topic) { return .set(accessory: id) }
        if topic == homeAssistantStatusTopic { return .homeAssistantStatus }
        for (index, parser) in parsers.enumerated() {
            if parser.statusTopic?.match(topic) != nil { return .gateway(index: index, status: true) }
            if parser.topic.match(topic) != nil { return .gateway(index: index) }
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
