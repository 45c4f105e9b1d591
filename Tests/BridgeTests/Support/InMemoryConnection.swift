import Configuration
import Foundation
import JSON
import MQTT
import Synchronization
import TestSupport
import Testing

@testable import Bridge

/// An MQTT connection without a broker: what the runtime publishes is recorded, what a test
/// "publishes" is delivered to the runtime as if the broker had. For fast flow tests beside
/// the real-broker ones (which stay the reference: this knows nothing of QoS, retain
/// semantics on the broker or reconnects).
final class InMemoryConnection: MQTTConnection {
    let incoming = MessageQueue()
    let connectionStates: AsyncStream<MQTTConnectionState>
    /// Records what the runtime publishes (TestSupport's publisher, starting disconnected).
    let published = InMemoryPublisher(isConnected: false)
    private let states: AsyncStream<MQTTConnectionState>.Continuation
    private let filters = Mutex<[String]>([])
    /// Messages delivered, and messages the runtime's forwarder has handed into its loop.
    private let counts = Mutex((delivered: 0, taken: 0))

    init() {
        (connectionStates, states) = AsyncStream.makeStream(of: MQTTConnectionState.self)
    }

    // MARK: MQTTConnection

    @discardableResult
    func enqueue(topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool) -> Bool {
        published.enqueue(topic: topic, payload: payload, qos: qos, retain: retain)
    }

    func publishAcknowledged(topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool) async throws(MQTTError) {
        try await published.publishAcknowledged(topic: topic, payload: payload, qos: qos, retain: retain)
    }

    var outstandingPublishes: Int { published.outstandingPublishes }
    var isConnected: Bool { published.isConnected }
    var statistics: MQTTStatistics { published.statistics }

    func messagesTaken(_ count: Int) {
        counts.withLock { $0.taken += count }
    }

    func subscribe(_ filter: String, qos: MQTTQoS) async throws(MQTTError) {
        filters.withLock { $0.append(filter) }
    }

    func start() {
        published.isConnected = true
        states.yield(.connected)
    }

    func disconnect() async {
        published.isConnected = false
        incoming.finish()
        states.finish()
    }

    // MARK: The test's side

    /// What the runtime subscribed to.
    var subscriptions: [String] { filters.withLock { $0 } }

    /// Delivers a message to the runtime as the broker would.
    func deliver(_ topic: String, _ payload: String, retain: Bool = false) {
        counts.withLock { $0.delivered += 1 }
        incoming.append(MQTTMessage(topic: topic, payload: Array(payload.utf8), qos: .atLeastOnce, retain: retain))
    }

    /// Waits until every message delivered so far is in the runtime's event stream, so that
    /// an event posted after this (an HTTP call, a cluster event) is handled after them.
    func forwarded() async {
        _ = await eventually(timeout: .seconds(30)) { counts.withLock { $0.taken >= $0.delivered } }
    }

    /// Every message published on `topic` so far, parsed (empty payload: `.null`).
    func json(on topic: String) -> [JSONValue] {
        published.messages(on: topic).map { (try? JSONParser.parse($0.payload)) ?? .null }
    }

    /// Waits for a message on `topic` whose JSON satisfies `condition`.
    @discardableResult
    func waitFor(
        _ topic: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: @escaping (JSONValue) -> Bool = { _ in true }
    ) async -> JSONValue? {
        // As long as the real-broker tests wait: the whole suite runs in parallel on two cores.
        let found = await eventually(timeout: .seconds(30)) { json(on: topic).contains(where: condition) }
        guard found else {
            Issue.record("no matching message on \(topic); got: \(json(on: topic))", sourceLocation: sourceLocation)
            return nil
        }
        return json(on: topic).last(where: condition)
    }

    /// Delivers a request and waits for its response (matched by transaction).
    func request(
        _ name: String, _ members: String = "", transaction: String = UUID().uuidString,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async -> JSONValue? {
        let body = members.isEmpty ? #"{"transaction":"\#(transaction)"}"# : #"{\#(members),"transaction":"\#(transaction)"}"#
        deliver("aabridge/bridge/request/\(name)", body)
        return await waitFor("aabridge/bridge/response/\(name)", sourceLocation: sourceLocation) {
            $0["transaction"]?.stringValue == transaction
        }
    }
}
