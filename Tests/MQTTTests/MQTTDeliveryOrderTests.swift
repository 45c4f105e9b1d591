import Foundation
import Synchronization
import TestSupport
import Testing

@testable import MQTT

/// What happens to publishes and subscriptions across a reconnect, against a real broker
/// behind a ``TCPProxy`` (the client's bookkeeping, checked against libmosquitto 2.0.11).
@Suite("Order and bookkeeping across reconnects")
struct MQTTDeliveryOrderTests {
    /// A client connected through a proxy in front of `broker`.
    static func throughProxy(_ broker: MosquittoBroker, subscribe filters: [String] = []) async throws -> (TCPProxy, ConnectedClient) {
        let proxy = try TCPProxy(to: broker.port)
        var configuration = testConfiguration(broker)
        configuration.port = proxy.port
        return (proxy, try await ConnectedClient(configuration, subscribe: filters))
    }

    static func isDisconnection(_ state: MQTTConnectionState) -> Bool {
        if case .disconnected = state { true } else { false }
    }

    @Test("a retained state kept while disconnected wins over the older one that was in flight when the link was cut")
    func inFlightBeforeKept() async throws {
        let broker = try MosquittoBroker()
        let (proxy, publisher) = try await Self.throughProxy(broker)
        // "old" reaches the proxy and stays there: sent, never acknowledged (in flight).
        proxy.holdUpstream()
        publisher.client.enqueue(topic: "r/state", payload: Array("old".utf8), qos: .atLeastOnce, retain: true)
        #expect(await eventually { publisher.client.outstandingPublishes == 1 })
        try await Task.sleep(for: .milliseconds(100))
        proxy.refuseConnections(true)
        proxy.cut()
        #expect(await publisher.states.wait { $0.contains(where: Self.isDisconnection) })
        // Published while there is no connection: the client keeps it for the reconnect.
        publisher.client.enqueue(topic: "r/state", payload: Array("new".utf8), qos: .atLeastOnce, retain: true)
        proxy.refuseConnections(false)
        #expect(await publisher.states.wait(timeout: .seconds(15)) { $0.filter { $0 == .connected }.count >= 2 })
        #expect(await eventually(timeout: .seconds(10)) { publisher.client.outstandingPublishes == 0 })

        let watcher = try await ConnectedClient(testConfiguration(broker), subscribe: ["r/#"])
        #expect(await watcher.messages.wait { $0.contains { $0.topic == "r/state" } })
        #expect(watcher.payloads(on: "r/state") == ["new"], "the broker keeps the newest state, not the resent older one")
        await watcher.client.disconnect()
        await publisher.client.disconnect()
        proxy.stop()
    }

    @Test("a publish made as the link drops (MOSQ_ERR_NO_CONN) is sent once after the reconnect, not twice")
    func noConnectionPublishSentOnce() async throws {
        let broker = try MosquittoBroker()
        let watcher = try await ConnectedClient(testConfiguration(broker), subscribe: ["once/#"])
        let publisher = try await ConnectedClient(testConfiguration(broker))
        // Runs on the network thread after libmosquitto closed the socket and before the client
        // has heard of it: the window in which a publisher thread gets MOSQ_ERR_NO_CONN.
        publisher.client.linkLostHookForTesting.withLock { hook in
            hook = { [client = publisher.client] in
                client.enqueue(topic: "once/x", payload: Array("x".utf8), qos: .atLeastOnce)
                client.linkLostHookForTesting.withLock { $0 = nil }
            }
        }
        publisher.client.breakConnectionForTesting()
        #expect(await publisher.states.wait(timeout: .seconds(15)) { $0.filter { $0 == .connected }.count >= 2 })
        #expect(await watcher.messages.wait { $0.contains { $0.topic == "once/x" } }, "delivered after the reconnect")
        #expect(await eventually(timeout: .seconds(10)) { publisher.client.outstandingPublishes == 0 })
        // A second copy would follow the first at once; give it time to show.
        try await Task.sleep(for: .milliseconds(500))
        #expect(watcher.payloads(on: "once/x").count == 1, "sent \(watcher.payloads(on: "once/x").count) times")
        await publisher.client.disconnect()
        await watcher.client.disconnect()
    }

    @Test("more than 65,535 publishes outstanding: no message id is used twice, every awaited publish completes")
    func messageIDsNeverShared() async throws {
        let broker = try MosquittoBroker()
        let watcher = try await ConnectedClient(testConfiguration(broker), subscribe: ["m/#"])
        let publisher = try await ConnectedClient(testConfiguration(broker))
        // Frozen, the broker acknowledges nothing: every id stays in use. libmosquitto hands out
        // ids 1...65535 in turn, so the 65,535th publish after `first` (`last`) would get
        // first's id, and first's acknowledgement would complete it.
        broker.freeze()
        let completed = Completions()
        let first = Task {
            try await publisher.client.publishAcknowledged(topic: "m/first", payload: Array("first".utf8), qos: .atLeastOnce)
            completed.names.withLock { $0.append("first") }
        }
        #expect(await eventually { publisher.client.outstandingPublishes == 1 })
        for index in 0..<65_534 {
            publisher.client.enqueue(topic: "m/bulk", payload: Array("\(index)".utf8), qos: .atLeastOnce)
        }
        let last = Task {
            try await publisher.client.publishAcknowledged(topic: "m/last", payload: Array("last".utf8), qos: .atLeastOnce)
            completed.names.withLock { $0.append("last") }
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(completed.names.withLock { $0 }.isEmpty, "nothing is acknowledged by a frozen broker")
        broker.thaw()
        #expect(
            await eventually(timeout: .seconds(60)) { completed.names.withLock { $0.count } == 2 },
            "completed: \(completed.names.withLock { $0 })")
        #expect(await eventually(timeout: .seconds(30)) { publisher.client.outstandingPublishes == 0 })
        #expect(
            await watcher.messages.wait(timeout: .seconds(60)) { $0.count >= 65_536 },
            "the broker got every message (\(watcher.messages.elements.count))")
        #expect(watcher.payloads(on: "m/last") == ["last"] && watcher.payloads(on: "m/first") == ["first"])
        first.cancel()
        last.cancel()
        await publisher.client.disconnect()
        await watcher.client.disconnect()
    }

    /// Dynamic security for anonymous clients, refusing subscriptions to `denied` (none: nil).
    static func dynamicSecurity(denying denied: String?) -> String {
        let acls = denied.map { #"{"acltype":"subscribePattern","topic":"\#($0)","priority":0,"allow":false}"# } ?? ""
        return #"""
            {"defaultACLAccess":{"publishClientSend":true,"publishClientReceive":true,"subscribe":true,"unsubscribe":true},
             "clients":[],"groups":[{"groupname":"anonymous","roles":[{"rolename":"test"}]}],
             "roles":[{"rolename":"test","acls":[\#(acls)]}],"anonymousGroup":"anonymous"}
            """#
    }

    @Test("a subscription the broker refuses after a reconnect: reported, never 'connected', back once it is granted")
    func refusedResubscription() async throws {
        let broker = try MosquittoBroker(.init(dynamicSecurity: Self.dynamicSecurity(denying: nil)))
        let client = try await ConnectedClient(testConfiguration(broker), subscribe: ["ok/#", "later/#"])

        broker.stop()
        try broker.reconfigure(.init(dynamicSecurity: Self.dynamicSecurity(denying: "later/#")))
        try broker.start()
        let refused = await client.states.wait(timeout: .seconds(15)) {
            $0.contains { if case .disconnected(let error) = $0, case .subscriptionRefused = error.code { true } else { false } }
        }
        #expect(refused, "the refusal is reported: \(client.states.elements)")
        #expect(client.states.elements.filter { $0 == .connected }.count == 1, "never connected without its subscriptions")
        #expect(!client.client.isConnected)

        broker.stop()
        try broker.reconfigure(.init(dynamicSecurity: Self.dynamicSecurity(denying: nil)))
        try broker.start()
        #expect(await client.states.wait(timeout: .seconds(15)) { $0.filter { $0 == .connected }.count >= 2 })
        let publisher = try await ConnectedClient(testConfiguration(broker))
        try await publisher.client.publishAcknowledged(topic: "later/x", payload: Array("back".utf8), qos: .atLeastOnce)
        #expect(await client.messages.wait { $0.contains { $0.topic == "later/x" } }, "the refused filter works again")
        await publisher.client.disconnect()
        await client.client.disconnect()
    }

    @Test("a subscription refused when asked for: that call throws, the connection stays up")
    func refusedSubscribeCall() async throws {
        let broker = try MosquittoBroker(.init(dynamicSecurity: Self.dynamicSecurity(denying: "later/#")))
        let client = try await ConnectedClient(testConfiguration(broker), subscribe: ["ok/#"])
        await #expect(throws: MQTTError.self) { try await client.client.subscribe("later/#", qos: .atLeastOnce) }
        #expect(client.client.isConnected)
        #expect(client.client.subscriptions == ["ok/#"], "the refused filter is not restored after a reconnect")
        await client.client.disconnect()
    }

    @Test("60 reconnects with 20 subscriptions leave nothing behind in the client's bookkeeping")
    func bookkeepingForgets() async throws {
        let broker = try MosquittoBroker()
        // 1,200 restored subscriptions in all: beyond the 1,024 acknowledgements the old
        // client kept for a subscriber that might still register (it never forgot them).
        let client = try await ConnectedClient(testConfiguration(broker), subscribe: (1...20).map { "b/\($0)" })
        for round in 1...60 {
            client.client.breakConnectionForTesting()
            let back = await client.states.wait(timeout: .seconds(10)) { $0.filter { $0 == .connected }.count > round }
            guard back else {
                Issue.record("no reconnect in round \(round)")
                break
            }
        }
        #expect(await eventually { client.client.bookkeepingEntries == 0 }, "still \(client.client.bookkeepingEntries) entries")
        // And a subscription made now is acknowledged like the first ones.
        try await client.client.subscribe("b/21", qos: .atLeastOnce)
        #expect(client.client.bookkeepingEntries == 0)
        await client.client.disconnect()
    }
}

/// Which awaited publishes have completed, in order.
private final class Completions: Sendable {
    let names = Mutex<[String]>([])
}
