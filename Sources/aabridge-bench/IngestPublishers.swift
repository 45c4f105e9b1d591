import Foundation
import MQTT

/// The stream's publishers, the same for both consumers so that their cost (in this process,
/// never in the measured consumer's) does not enter the comparison: P project MQTTClients,
/// each on a thread of its own, sending its share of the OpenMQTTGateway stream
/// (`<prefix>/gw<p>/BTtoMQTT/<MAC>`, payloads as in e2e-throughput) as fast as it can.
final class IngestPublishers: Sendable {
    static let count = 4
    let accessories: Int
    private let clients: [MQTTClient]
    /// Per stream kind, the bridge's stream and the reference's twin: the same topic shapes
    /// and lengths (`home/…` and `prob/…`), so the broker matches and routes both alike.
    private let bridgeStreams: [StreamKind: E2EThroughputBenchmark.Stream]
    private let referenceStreams: [StreamKind: E2EThroughputBenchmark.Stream]

    init(broker: IngestBroker, accessories: Int) async throws {
        self.accessories = accessories
        var clients: [MQTTClient] = []
        for p in 0..<Self.count {
            var configuration = MQTTConfiguration(
                host: "127.0.0.1", port: broker.port, clientID: "bench-gw\(p)-\(UUID().uuidString.prefix(8))")
            configuration.messageBufferLimit = nil
            let client = try MQTTClient(configuration: configuration)
            try await client.connect()
            clients.append(client)
        }
        self.clients = clients
        func streams(_ prefix: String) -> [StreamKind: E2EThroughputBenchmark.Stream] {
            Dictionary(
                uniqueKeysWithValues: StreamKind.allCases.map {
                    ($0, E2EThroughputBenchmark.Stream(prefix: prefix, accessories: accessories, publishers: Self.count, kind: $0))
                })
        }
        bridgeStreams = streams("home")
        referenceStreams = streams("prob")
    }

    /// Which topic tree a run publishes on.
    enum Tree {
        case bridge
        case reference
    }

    /// How many messages a run of `requested` sends (a whole share per publisher).
    static func sent(_ requested: Int) -> Int { (requested / count) * count }

    /// Publishes ``sent(_:)`` messages of stream `kind` on `tree` at `qos`, then, per publisher, its
    /// `last(p)` message (the bridge's completion marker) on the same connection, so that it
    /// comes after all of that publisher's stream. Returns when every message is handed to
    /// the clients.
    func publish(
        _ tree: Tree, _ kind: StreamKind = .known, count requested: Int, qos: MQTTQoS,
        last: (@Sendable (Int) -> (topic: String, payload: [UInt8]))? = nil
    ) async {
        guard let stream = (tree == .bridge ? bridgeStreams : referenceStreams)[kind] else { return }
        let share = requested / Self.count
        await withTaskGroup(of: Void.self) { group in
            for (p, client) in clients.enumerated() {
                group.addTask {
                    await E2E.onThread {
                        for i in 0..<share {
                            let (topic, payload) = stream.message(publisher: p, index: i)
                            client.enqueue(topic: topic, payload: payload, qos: qos)
                        }
                        if let marker = last?(p) { client.enqueue(topic: marker.topic, payload: marker.payload, qos: qos) }
                    }
                }
            }
        }
    }

    func disconnect() async {
        for client in clients { await client.disconnect() }
    }
}
