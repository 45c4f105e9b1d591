import Bridge
import Foundation
import MQTT
import Synchronization

/// The runtime's MQTT connection for `ingest-path`: no broker and no network thread. The
/// benchmark appends the stream to ``incoming`` itself; what the runtime publishes is counted
/// and the responses on one topic are kept, so the benchmark can wait for them.
final class IngestPathConnection: MQTTConnection {
    let incoming = MessageQueue()
    let connectionStates: AsyncStream<MQTTConnectionState>
    private let states: AsyncStream<MQTTConnectionState>.Continuation
    private let responseTopic: String
    private let listTopic = "aabridge/bridge/accessories"
    private let recorded = Mutex<(count: Int, responses: [[UInt8]], lists: Int)>((0, [], 0))

    init(responseTopic: String) {
        self.responseTopic = responseTopic
        (connectionStates, states) = AsyncStream.makeStream(of: MQTTConnectionState.self)
    }

    /// Responses published on the response topic so far.
    var responses: Int { recorded.withLock { $0.responses.count } }
    /// Publications of `bridge/accessories` so far.
    var accessoryLists: Int { recorded.withLock { $0.lists } }

    @discardableResult
    func enqueue(topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool) -> Bool {
        recorded.withLock { recorded in
            recorded.count += 1
            if topic == responseTopic { recorded.responses.append(payload) }
            if topic == listTopic { recorded.lists += 1 }
        }
        return true
    }

    func publishAcknowledged(topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool) async throws(MQTTError) {
        enqueue(topic: topic, payload: payload, qos: qos, retain: retain)
    }

    var outstandingPublishes: Int { 0 }
    var isConnected: Bool { true }
    var statistics: MQTTStatistics { MQTTStatistics(messagesOut: recorded.withLock { $0.count }) }

    func subscribe(_ filter: String, qos: MQTTQoS) async throws(MQTTError) {}
    func start() { states.yield(.connected) }

    func disconnect() async {
        incoming.finish()
        states.finish()
    }
}
