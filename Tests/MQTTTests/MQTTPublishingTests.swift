import MQTT
import TestSupport
import Testing

/// ``MQTTPublishing``: the in-memory implementation components are tested with, and the
/// client behind the same protocol.
@Suite("MQTTPublishing")
struct MQTTPublishingTests {
    @Test("InMemoryPublisher records every message in order and counts it")
    func recordsInOrder() async throws {
        let memory = InMemoryPublisher()
        let publisher: any MQTTPublishing = memory
        #expect(publisher.enqueue(topic: "a", payload: [1], qos: .atMostOnce, retain: false))
        try await publisher.publishAcknowledged(topic: "b", payload: [2], qos: .atLeastOnce, retain: true)
        #expect(publisher.enqueue(topic: "a", payload: [3], qos: .atLeastOnce, retain: false))
        #expect(
            memory.messages == [
                MQTTMessage(topic: "a", payload: [1]),
                MQTTMessage(topic: "b", payload: [2], qos: .atLeastOnce, retain: true),
                MQTTMessage(topic: "a", payload: [3], qos: .atLeastOnce),
            ])
        #expect(memory.messages(on: "a").map(\.payload) == [[1], [3]])
        #expect(publisher.statistics.messagesOut == 3)
        memory.removeAllMessages()
        #expect(memory.messages.isEmpty)
        #expect(publisher.statistics.messagesOut == 3, "statistics keep counting")
    }

    @Test("InMemoryPublisher while disconnected drops QoS 0 and keeps QoS 1; outstanding count is settable")
    func disconnectedAndCongested() async throws {
        let memory = InMemoryPublisher(isConnected: false)
        #expect(!memory.isConnected)
        #expect(!memory.enqueue(topic: "zero", payload: []))
        await #expect(throws: InMemoryPublisher.notConnected) {
            try await memory.publishAcknowledged(topic: "zero", string: "x")
        }
        #expect(memory.enqueue(topic: "one", payload: [], qos: .atLeastOnce))
        #expect(memory.messages.map(\.topic) == ["one"])
        memory.isConnected = true
        #expect(memory.enqueue(topic: "zero", payload: []))
        #expect(memory.outstandingPublishes == 0)
        memory.outstandingPublishes = 5_000
        #expect(memory.outstandingPublishes == 5_000)
        #expect(memory.statistics.messagesOut == 2)
    }

    @Test("MQTTClient behind MQTTPublishing delivers enqueued and acknowledged messages")
    func clientThroughProtocol() async throws {
        let broker = try MosquittoBroker()
        let subscriber = try await ConnectedClient(testConfiguration(broker), subscribe: ["p/#"])
        let client = try MQTTClient(configuration: testConfiguration(broker))
        try await client.connect()
        let publisher: any MQTTPublishing = client
        #expect(publisher.isConnected)
        #expect(publisher.enqueue(topic: "p/a", payload: Array("1".utf8), qos: .atLeastOnce, retain: false))
        try await publisher.publishAcknowledged(topic: "p/b", payload: Array("2".utf8), qos: .atLeastOnce, retain: false)
        #expect(await subscriber.messages.wait(count: 2))
        #expect(subscriber.messages.elements.map(\.payloadString) == ["1", "2"])
        #expect(publisher.statistics.messagesOut == 2)
        #expect(await eventually { publisher.outstandingPublishes == 0 })
        await client.disconnect()
        await subscriber.client.disconnect()
    }
}
