import Foundation
import TestSupport

@testable import MQTT

/// A client configuration for a test broker, with short reconnect delays so tests are quick.
func testConfiguration(
    _ broker: MosquittoBroker, clientID: String = "test-\(UUID().uuidString.prefix(8))",
    version: MQTTConfiguration.ProtocolVersion = .v5
) -> MQTTConfiguration {
    MQTTConfiguration(
        host: "127.0.0.1", port: broker.port, clientID: clientID, keepalive: 10,
        protocolVersion: version,
        reconnect: ReconnectBackoff(minimum: .milliseconds(50), maximum: .milliseconds(300)))
}

/// A connected client plus collectors for its messages and connection states.
struct ConnectedClient {
    let client: MQTTClient
    let messages: StreamCollector<MQTTMessage>
    let states: StreamCollector<MQTTConnectionState>

    init(_ configuration: MQTTConfiguration, subscribe filters: [String] = [], qos: MQTTQoS = .atLeastOnce) async throws {
        client = try MQTTClient(configuration: configuration)
        messages = StreamCollector(client.messages)
        states = StreamCollector(client.connectionStates)
        try await client.connect()
        for filter in filters { try await client.subscribe(filter, qos: qos) }
    }

    func payloads(on topic: String) -> [String] {
        messages.elements.filter { $0.topic == topic }.map(\.payloadString)
    }
}
