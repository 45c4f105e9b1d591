import Foundation
import TestSupport
import Testing

@testable import MQTT

@Suite("Connection supervisor against a real broker")
struct MQTTReconnectTests {
    @Test("broker stopped and started again: reconnects, subscriptions restored, messages flow")
    func brokerRestart() async throws {
        let broker = try MosquittoBroker()
        let subscriber = try await ConnectedClient(testConfiguration(broker), subscribe: ["k/#"])
        broker.stop()
        #expect(await subscriber.states.wait { $0.contains { if case .disconnected = $0 { true } else { false } } })
        #expect(!subscriber.client.isConnected)
        try broker.start()
        #expect(await subscriber.states.wait { $0.filter { $0 == .connected }.count >= 2 }, "a second .connected after the restart")
        let publisher = try await ConnectedClient(testConfiguration(broker))
        // The restored subscription may still be in flight right after CONNACK: retry briefly.
        var delivered = false
        for attempt in 0..<50 where !delivered {
            try await publisher.client.publishAcknowledged(topic: "k/after", string: "\(attempt)", qos: .atLeastOnce)
            delivered = await subscriber.messages.wait(timeout: .milliseconds(100)) { $0.contains { $0.topic == "k/after" } }
        }
        #expect(delivered, "messages flow again on the subscription made before the restart")
        #expect(subscriber.client.statistics.reconnects == 1)
        await publisher.client.disconnect()
        await subscriber.client.disconnect()
    }

    @Test("QoS 1 published while the broker is down is delivered after it returns")
    func queuedWhileDown() async throws {
        let broker = try MosquittoBroker()
        let publisher = try await ConnectedClient(testConfiguration(broker))
        broker.stop()
        #expect(await publisher.states.wait { $0.contains { if case .disconnected = $0 { true } else { false } } })
        // Retained, so the check below does not depend on who reconnects first.
        async let acknowledged: Void = publisher.client.publishAcknowledged(topic: "q/x", string: "kept", qos: .atLeastOnce, retain: true)
        try await Task.sleep(for: .milliseconds(200))
        try broker.start()
        try await acknowledged
        let watcher = try await ConnectedClient(testConfiguration(broker), subscribe: ["q/#"])
        #expect(await watcher.messages.wait(timeout: .seconds(15)) { $0.contains { $0.topic == "q/x" } })
        #expect(watcher.payloads(on: "q/x") == ["kept"])
        await watcher.client.disconnect()
        await publisher.client.disconnect()
    }

    @Test("an authentication failure on reconnect does not stop the supervisor")
    func authFailureIsNotFinal() async throws {
        let broker = try MosquittoBroker()
        let client = try await ConnectedClient(testConfiguration(broker), subscribe: ["a/#"])
        // The broker comes back demanding a password the client does not have.
        broker.stop()
        try broker.reconfigure(.init(users: ["someone": "else"]))
        try broker.start()
        let refused = await client.states.wait {
            $0.contains { if case .disconnected(let error) = $0, case .connectionRefused = error.code { true } else { false } }
        }
        #expect(refused, "the refusal is reported with its reason")
        #expect(
            await client.states.wait { states in
                states.filter { if case .disconnected(let error) = $0, case .connectionRefused = error.code { true } else { false } }.count
                    >= 2
            }, "and the supervisor keeps trying")
        // Fixed by the operator: anonymous access again. The client comes back on its own.
        broker.stop()
        try broker.reconfigure(.init())
        try broker.start()
        #expect(await client.states.wait(timeout: .seconds(15)) { $0.filter { $0 == .connected }.count >= 2 })
        await client.client.disconnect()
    }

    @Test("start() keeps trying until a broker appears")
    func startBeforeBroker() async throws {
        let broker = try MosquittoBroker()
        broker.stop()
        let client = try MQTTClient(configuration: testConfiguration(broker))
        let states = StreamCollector(client.connectionStates)
        client.start()
        #expect(await states.wait { $0.count >= 2 }, "failed attempts are reported")
        #expect(states.elements.allSatisfy { $0 != .connected })
        try broker.start()
        #expect(await states.wait(timeout: .seconds(15)) { $0.contains(.connected) })
        #expect(client.isConnected)
        await client.disconnect()
    }
}

@Suite("Publications the broker has not acknowledged yet")
struct MQTTOutstandingPublishesTests {
    @Test("outstandingPublishes counts QoS 1 messages until the broker acknowledges them; QoS 0 never counts")
    func countsUntilAcknowledged() async throws {
        let broker = try MosquittoBroker()
        let watcher = try await ConnectedClient(testConfiguration(broker), subscribe: ["o/#"])
        let publisher = try await ConnectedClient(testConfiguration(broker))
        #expect(publisher.client.outstandingPublishes == 0)
        // Frozen, the broker acknowledges nothing: every QoS 1 message enqueued stays outstanding.
        broker.freeze()
        for index in 0..<30 { publisher.client.enqueue(topic: "o/\(index)", payload: Array("\(index)".utf8), qos: .atLeastOnce) }
        for index in 0..<5 { publisher.client.enqueue(topic: "o/zero\(index)", payload: [], qos: .atMostOnce) }
        try await Task.sleep(for: .milliseconds(200))
        #expect(publisher.client.outstandingPublishes == 30)
        broker.thaw()
        let drained = await eventually(timeout: .seconds(15)) { publisher.client.outstandingPublishes == 0 }
        #expect(drained, "back to 0 once acknowledged (still \(publisher.client.outstandingPublishes))")
        #expect(
            await watcher.messages.wait(timeout: .seconds(15)) { messages in
                (0..<30).allSatisfy { index in messages.contains { $0.topic == "o/\(index)" } }
            }, "every counted message was delivered")
        await publisher.client.disconnect()
        await watcher.client.disconnect()
    }

    @Test("messages kept while disconnected count until the broker has acknowledged them after the reconnect")
    func outboxCounts() async throws {
        let broker = try MosquittoBroker()
        let publisher = try await ConnectedClient(testConfiguration(broker))
        broker.stop()
        #expect(await publisher.states.wait { $0.contains { if case .disconnected = $0 { true } else { false } } })
        for index in 0..<7 { publisher.client.enqueue(topic: "d/\(index)", payload: [], qos: .atLeastOnce) }
        #expect(publisher.client.outstandingPublishes == 7)
        try broker.start()
        let drained = await eventually(timeout: .seconds(15)) { publisher.client.outstandingPublishes == 0 }
        #expect(drained, "still \(publisher.client.outstandingPublishes) outstanding after the reconnect")
        await publisher.client.disconnect()
    }
}
