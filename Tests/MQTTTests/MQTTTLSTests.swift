import Foundation
import TestSupport
import Testing

@testable import MQTT

@Suite("TLS against a real broker with a CA made by the test")
struct MQTTTLSTests {
    @Test("server verified with the test CA; client certificate accepted when required")
    func verifiedConnection() async throws {
        let certificates = try TestCertificates()
        let broker = try MosquittoBroker(.init(tls: certificates, requireClientCertificate: true))
        var configuration = testConfiguration(broker)
        configuration.port = try #require(broker.tlsPort)
        configuration.tls = .init(
            caFile: certificates.caCertificate.path,
            certificateFile: certificates.clientCertificate.path,
            keyFile: certificates.clientKey.path)
        let subscriber = try await ConnectedClient(configuration, subscribe: ["tls/#"])
        try await subscriber.client.publishAcknowledged(topic: "tls/x", string: "secret channel", qos: .atLeastOnce)
        #expect(await subscriber.messages.wait(count: 1))
        #expect(subscriber.payloads(on: "tls/x") == ["secret channel"])
        await subscriber.client.disconnect()
    }

    @Test("a server signed by another CA is rejected (verification is on by default)")
    func wrongCA() async throws {
        let certificates = try TestCertificates()
        let stranger = try TestCertificates(name: "someone else's CA")
        let broker = try MosquittoBroker(.init(tls: certificates))
        var configuration = testConfiguration(broker)
        configuration.port = try #require(broker.tlsPort)
        configuration.tls = .init(caFile: stranger.caCertificate.path)
        let client = try MQTTClient(configuration: configuration)
        await #expect(throws: MQTTError.self) { try await client.connect() }
        await client.disconnect()
    }

    @Test("an unreadable CA file is a configuration error naming the file")
    func unreadableCA() throws {
        var configuration = MQTTConfiguration(clientID: "x")
        configuration.tls = .init(caFile: "/nonexistent/ca.crt")
        let error = #expect(throws: MQTTError.self) { try MQTTClient(configuration: configuration) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains("/nonexistent/ca.crt") == true)
    }
}
