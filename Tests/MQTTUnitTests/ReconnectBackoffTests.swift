import Testing

@testable import MQTT

@Suite("Reconnect backoff and server URLs (no broker)")
struct ReconnectBackoffTests {
    @Test("delays stay within [min, max] for every attempt and jitter", arguments: [0.0, 0.25, 0.5, 0.999])
    func bounded(random: Double) {
        let backoff = ReconnectBackoff(minimum: .seconds(1), maximum: .seconds(30))
        for attempt in 0..<100 {
            let delay = backoff.delay(attempt: attempt, random: random)
            #expect(delay >= .seconds(1) && delay <= .seconds(30), "attempt \(attempt): \(delay)")
        }
    }

    @Test("the ceiling doubles up to the maximum")
    func exponential() {
        let backoff = ReconnectBackoff(minimum: .seconds(1), maximum: .seconds(30))
        #expect(
            (0..<7).map { backoff.ceilingDelay(attempt: $0) } == [
                .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30), .seconds(30),
            ])
    }

    @Test("jitter spreads the delay between half the ceiling and the ceiling")
    func jitter() {
        let backoff = ReconnectBackoff(minimum: .seconds(1), maximum: .seconds(30))
        #expect(backoff.delay(attempt: 3, random: 0) == .seconds(4))
        #expect(backoff.delay(attempt: 3, random: 1) == .seconds(8))
        #expect(backoff.delay(attempt: 3, random: 0.5) == .seconds(6))
    }

    @Test(
        "server URLs",
        arguments: [
            ("mqtt://localhost:1883", "localhost", 1883, false),
            ("mqtt://broker", "broker", 1883, false),
            ("mqtts://broker", "broker", 8883, true),
            ("mqtts://10.0.0.2:9999/", "10.0.0.2", 9999, true),
            ("127.0.0.1:1884", "127.0.0.1", 1884, false),
            ("mqtt://[::1]:1883", "::1", 1883, false),
        ])
    func serverURL(url: String, host: String, port: Int, tls: Bool) throws {
        let address = try MQTTServerAddress(parsing: url)
        #expect(address.host == host && address.port == port && address.usesTLS == tls)
    }

    @Test(
        "bad server URLs are rejected with a reason",
        arguments: ["http://x", "mqtt://:1883", "mqtt://host:0", "mqtt://host:99999", "mqtt://host:abc"])
    func badServerURL(url: String) {
        #expect(throws: MQTTError.self) { try MQTTServerAddress(parsing: url) }
    }
}
