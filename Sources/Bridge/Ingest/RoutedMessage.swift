import MQTT

/// An incoming message with the route ``TopicRouter`` gave it on arrival.
struct RoutedMessage: Sendable {
    let message: MQTTMessage
    let route: IngestRoute
}
