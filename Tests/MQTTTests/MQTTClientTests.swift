import Foundation
import LocalProcess
import TestSupport
import Testing

@testable import MQTT

/// The client against a real mosquitto started by each test.
@Suite("MQTT client against a real broker")
struct MQTTClientTests {
    @Test(
        "publish and receive round trip", arguments: [MQTTQoS.atMostOnce, .atLeastOnce],
        [MQTTConfiguration.ProtocolVersion.v311, .v5])
    func roundTrip(qos: MQTTQoS, version: MQTTConfiguration.ProtocolVersion) async throws {
        let broker = try MosquittoBroker()
        let subscriber = try await ConnectedClient(testConfiguration(broker, version: version), subscribe: ["t/#"], qos: qos)
        let publisher = try await ConnectedClient(testConfiguration(broker, version: version))
        try await publisher.client.publishAcknowledged(topic: "t/a", string: "hello", qos: qos)
        try await publisher.client.publishAcknowledged(topic: "t/b", payload: [0, 255, 10], qos: qos)
        #expect(await subscriber.messages.wait(count: 2))
        let received = subscriber.messages.elements
        #expect(received.map(\.topic) == ["t/a", "t/b"])
        #expect(received.first?.payloadString == "hello")
        #expect(received.last?.payload == [0, 255, 10], "binary payload copied byte for byte")
        #expect(received.allSatisfy { $0.qos == qos && !$0.retain })
        await publisher.client.disconnect()
        await subscriber.client.disconnect()
    }

    @Test("Maximum Packet Size in CONNECT (MQTT 5): a larger message is never delivered to the client; without it, it is")
    func maximumPacketSize() async throws {
        let broker = try MosquittoBroker()
        var limited = testConfiguration(broker, version: .v5)
        limited.maximumPacketSize = 64 * 1024
        let guarded = try await ConnectedClient(limited, subscribe: ["big/#"])
        // The same on MQTT 3.1.1, which cannot announce a limit: the control that the broker
        // does send the large message when nothing stops it.
        var classic = testConfiguration(broker, version: .v311)
        classic.maximumPacketSize = 64 * 1024
        let unguarded = try await ConnectedClient(classic, subscribe: ["big/#"])
        let publisher = try await ConnectedClient(testConfiguration(broker))
        try await publisher.client.publishAcknowledged(
            topic: "big/large", payload: [UInt8](repeating: 7, count: 512 * 1024), qos: .atLeastOnce)
        try await publisher.client.publishAcknowledged(topic: "big/small", string: "fits", qos: .atLeastOnce)
        #expect(await guarded.messages.wait { $0.contains { $0.topic == "big/small" } })
        #expect(await unguarded.messages.wait(count: 2))
        #expect(guarded.messages.elements.map(\.topic) == ["big/small"], "the 512 KiB message was dropped by the broker")
        #expect(unguarded.messages.elements.map(\.topic) == ["big/large", "big/small"])
        await publisher.client.disconnect()
        await unguarded.client.disconnect()
        await guarded.client.disconnect()
    }

    @Test("retained message reaches a later subscriber with the retain flag")
    func retained() async throws {
        let broker = try MosquittoBroker()
        let publisher = try await ConnectedClient(testConfiguration(broker))
        try await publisher.client.publishAcknowledged(topic: "r/state", string: "{\"state\":\"online\"}", qos: .atLeastOnce, retain: true)
        let late = try await ConnectedClient(testConfiguration(broker), subscribe: ["r/#"])
        #expect(await late.messages.wait(count: 1))
        #expect(late.messages.elements.first?.retain == true)
        #expect(late.payloads(on: "r/state") == ["{\"state\":\"online\"}"])
        await late.client.disconnect()
        await publisher.client.disconnect()
    }

    @Test("the will is published when the connection dies, and not on a clean disconnect")
    func will() async throws {
        let broker = try MosquittoBroker()
        let watcher = try await ConnectedClient(testConfiguration(broker), subscribe: ["w/#"])
        var configuration = testConfiguration(broker)
        configuration.will = .init(topic: "w/state", payload: Array("{\"state\":\"offline\"}".utf8), qos: .atLeastOnce, retain: true)

        // A clean disconnect sends DISCONNECT: no will.
        let polite = try await ConnectedClient(configuration)
        await polite.client.disconnect()
        try await Task.sleep(for: .milliseconds(300))
        #expect(watcher.payloads(on: "w/state").isEmpty)

        // A killed connection (socket torn down without DISCONNECT): the broker sends the will.
        let victim = try await ConnectedClient(configuration)
        victim.client.breakConnectionForTesting()
        #expect(await watcher.messages.wait { $0.contains { $0.topic == "w/state" } })
        #expect(watcher.payloads(on: "w/state") == ["{\"state\":\"offline\"}"])
        await victim.client.disconnect()
        await watcher.client.disconnect()
    }

    @Test("a wrong password is refused with the broker's reason", arguments: [MQTTConfiguration.ProtocolVersion.v311, .v5])
    func wrongPassword(version: MQTTConfiguration.ProtocolVersion) async throws {
        let broker = try MosquittoBroker(.init(users: ["bridge": "correct horse"]))
        var configuration = testConfiguration(broker, version: version)
        configuration.username = "bridge"
        configuration.password = "wrong"
        let client = try MQTTClient(configuration: configuration)
        let error = await #expect(throws: MQTTError.self) { try await client.connect() }
        guard case .connectionRefused(let code)? = error?.code else {
            Issue.record("expected connectionRefused, got \(String(describing: error))")
            return
        }
        #expect(version == .v5 ? code == 135 || code == 134 : code == 5 || code == 4)
        #expect(error?.message.contains("refused") == true)
        #expect(error?.message.lowercased().contains("authori") == true || error?.message.lowercased().contains("password") == true)
        #expect(error?.message.contains("wrong") == false, "the password never appears in an error")
        await client.disconnect()

        configuration.password = "correct horse"
        let good = try await ConnectedClient(configuration)
        #expect(good.client.isConnected)
        await good.client.disconnect()
    }

    @Test("nothing listening: connect() throws a clear error instead of hanging")
    func unreachable() async throws {
        let port = try FreePort.find()
        let client = try MQTTClient(configuration: .init(host: "127.0.0.1", port: port, clientID: "nobody"))
        let error = await #expect(throws: MQTTError.self) { try await client.connect() }
        #expect(error?.message.contains("127.0.0.1:\(port)") == true)
        await client.disconnect()
    }

    @Test("10,000 QoS 1 messages in a burst: none lost, in order")
    func burst() async throws {
        let broker = try MosquittoBroker()
        let subscriber = try await ConnectedClient(testConfiguration(broker), subscribe: ["burst/#"])
        let publisher = try await ConnectedClient(testConfiguration(broker))
        let count = 10_000
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                group.addTask { try await publisher.client.publishAcknowledged(topic: "burst/x", string: "\(index)", qos: .atLeastOnce) }
                if index % 500 == 499 { try await group.waitForAll() }
            }
            try await group.waitForAll()
        }
        #expect(await subscriber.messages.wait(count: count, timeout: .seconds(60)))
        let received = subscriber.payloads(on: "burst/x").compactMap(Int.init)
        #expect(received.count == count)
        #expect(Set(received) == Set(0..<count), "every acknowledged message arrived")
        #expect(publisher.client.statistics.messagesOut == count)
        await publisher.client.disconnect()
        await subscriber.client.disconnect()
    }

    @Test("enqueue() keeps call order across QoS 0 and 1, mixed with awaited publishes")
    func enqueueOrdered() async throws {
        let broker = try MosquittoBroker()
        let subscriber = try await ConnectedClient(testConfiguration(broker), subscribe: ["o/#"])
        let publisher = try await ConnectedClient(testConfiguration(broker))
        for index in 0..<2_000 {
            if index % 100 == 0 {
                try await publisher.client.publishAcknowledged(topic: "o/x", string: "\(index)", qos: .atLeastOnce)
            } else {
                #expect(publisher.client.enqueue(topic: "o/x", payload: Array("\(index)".utf8), qos: .atLeastOnce))
            }
        }
        #expect(await subscriber.messages.wait(count: 2_000, timeout: .seconds(30)))
        #expect(subscriber.payloads(on: "o/x").compactMap(Int.init) == Array(0..<2_000))
        await publisher.client.disconnect()
        await subscriber.client.disconnect()
    }

    @Test("unsubscribe stops delivery; subscribe reports the SUBACK")
    func unsubscribe() async throws {
        let broker = try MosquittoBroker()
        let subscriber = try await ConnectedClient(testConfiguration(broker), subscribe: ["u/a", "u/b"])
        #expect(subscriber.client.subscriptions == ["u/a", "u/b"])
        try await subscriber.client.unsubscribe("u/a")
        #expect(subscriber.client.subscriptions == ["u/b"])
        // The UNSUBACK came back: the broker no longer routes u/a to it.
        let publisher = try await ConnectedClient(testConfiguration(broker))
        try await publisher.client.publishAcknowledged(topic: "u/a", string: "dropped", qos: .atLeastOnce)
        try await publisher.client.publishAcknowledged(topic: "u/b", string: "kept", qos: .atLeastOnce)
        // "dropped" was published first: delivered, it would have arrived before "kept".
        #expect(await subscriber.messages.wait(count: 1))
        #expect(subscriber.messages.elements.map(\.payloadString) == ["kept"])
        await publisher.client.disconnect()
        await subscriber.client.disconnect()
    }

    @Test("ACLs: denied publishes and reads never reach anyone")
    func aclDenied() async throws {
        let acl = "user gw\ntopic write home/#\ntopic read home/#\n\nuser admin\ntopic readwrite #\n"
        let broker = try MosquittoBroker(.init(users: ["gw": "pw", "admin": "root"], acl: acl))
        var adminConfiguration = testConfiguration(broker)
        adminConfiguration.username = "admin"
        adminConfiguration.password = "root"
        let admin = try await ConnectedClient(adminConfiguration, subscribe: ["#"])
        var configuration = testConfiguration(broker)
        configuration.username = "gw"
        configuration.password = "pw"
        let gateway = try await ConnectedClient(configuration)
        // mosquitto 2.0 acknowledges a denied QoS 1 publish (v5 may carry a reason code >= 0x80,
        // which the client turns into publishRefused) but never delivers it.
        do {
            try await gateway.client.publishAcknowledged(topic: "aabridge/bridge/state", string: "forged", qos: .atLeastOnce)
        } catch {
            guard case .publishRefused = error.code else { throw error }
        }
        try await gateway.client.publishAcknowledged(topic: "home/gw/BTtoMQTT/AA", string: "allowed", qos: .atLeastOnce)
        #expect(await admin.messages.wait { $0.contains { $0.topic == "home/gw/BTtoMQTT/AA" } })
        #expect(admin.payloads(on: "aabridge/bridge/state").isEmpty, "the denied publish was not delivered")
        // Reading is enforced at delivery: the gateway hears nothing outside home/#.
        try await gateway.client.subscribe("#")
        try await admin.client.publishAcknowledged(topic: "aabridge/bridge/info", string: "private", qos: .atLeastOnce)
        try await admin.client.publishAcknowledged(topic: "home/ping", string: "public", qos: .atLeastOnce)
        #expect(await gateway.messages.wait { $0.contains { $0.topic == "home/ping" } })
        #expect(gateway.payloads(on: "aabridge/bridge/info").isEmpty)
        await gateway.client.disconnect()
        await admin.client.disconnect()
    }

    @Test("disconnect fails pending work and finishes the streams")
    func disconnectFinishes() async throws {
        let broker = try MosquittoBroker()
        let client = try MQTTClient(configuration: testConfiguration(broker))
        try await client.connect()
        await client.disconnect()
        var iterator = client.messages.makeAsyncIterator()
        #expect(await iterator.next() == nil)
        await #expect(throws: MQTTError.self) { try await client.publishAcknowledged(topic: "x", string: "y") }
    }

    @Test("beyond messageBufferLimit new messages are dropped, but never those matching priorityFilters; order is kept")
    func priorityMessages() async throws {
        let broker = try MosquittoBroker()
        var configuration = testConfiguration(broker)
        configuration.messageBufferLimit = 10
        configuration.priorityFilters = ["p/request/#"]
        // Nobody takes messages until the flood is over: the buffer fills.
        let client = try MQTTClient(configuration: configuration)
        try await client.connect()
        try await client.subscribe("p/#", qos: .atLeastOnce)
        let publisher = try await ConnectedClient(testConfiguration(broker))
        try await publisher.client.publishAcknowledged(topic: "p/request/first", string: "first", qos: .atLeastOnce)
        for index in 0..<100 { publisher.client.enqueue(topic: "p/telemetry", payload: Array("\(index)".utf8), qos: .atLeastOnce) }
        try await publisher.client.publishAcknowledged(topic: "p/request/last", string: "last", qos: .atLeastOnce)
        #expect(await eventually { client.statistics.messagesIn == 102 })
        #expect(client.statistics.messagesDropped == 91, "the request took one of the 10 places; 9 telemetry messages fit")
        // Taking messages frees places.
        var iterator = client.messages.makeAsyncIterator()
        var received: [String] = []
        for _ in 0..<11 {
            guard let message = await iterator.next() else { break }
            received.append(message.payloadString)
            client.messagesTaken(1)
        }
        #expect(received == ["first"] + (0..<9).map { "\($0)" } + ["last"], "in arrival order, requests included")
        try await publisher.client.publishAcknowledged(topic: "p/telemetry", string: "after", qos: .atLeastOnce)
        #expect(await iterator.next()?.payloadString == "after")
        await client.disconnect()
        await publisher.client.disconnect()
    }
}
