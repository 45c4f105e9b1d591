import Configuration
import Foundation
import JSON
import LocalProcess
import TestSupport
import Testing

@testable import Bridge

/// The bridge's HTTP server: the request API over HTTP, its bad input, the token,
/// `/healthz`, `/events`, the connection limit and the `http` section.
@Suite("HTTP console, API and health")
struct HTTPConsoleTests {
    static func json(_ response: HTTPTestClient.Response) -> JSONValue { (try? JSONParser.parse(response.body)) ?? .null }

    /// `{"status","data"|"error",...}` without its transaction.
    static func withoutTransaction(_ value: JSONValue) -> JSONValue {
        guard case .object(let pairs) = value else { return value }
        return .object(pairs.filter { $0.0 != "transaction" })
    }

    @Test("POST /api/request/<name> answers exactly what bridge/response/<name> answers, and nothing is published for it")
    func sameAnswersAsMQTT() async throws {
        try await withConsole { _, observer, port in
            let rename = #""id":"\#(Fixture.airPods)","name":"Den AirPods""#
            let overMQTT = try await observer.request("accessory/rename", rename)
            let overHTTP = try await HTTPTestClient.fetch(
                port: port, "POST", "/api/request/accessory/rename", headers: ["Content-Type": "application/json"],
                body: Array(#"{\#(rename),"transaction":"http-1"}"#.utf8))
            #expect(overHTTP.status == 200)
            #expect(overHTTP.headers["content-type"] == "application/json")
            #expect(Self.json(overHTTP)["transaction"] == "http-1")
            #expect(Self.withoutTransaction(Self.json(overHTTP)) == Self.withoutTransaction(overMQTT))
            #expect(Self.json(overHTTP)["data"]?["name"] == "Den AirPods")

            // An error: the same error object, and an HTTP status that says it was refused.
            let unknown = #""id":"0A:0B:0C:0D:0E:0F","name":"Nobody""#
            let refusedMQTT = try await observer.request("accessory/rename", unknown)
            let refusedHTTP = try await HTTPTestClient.fetch(
                port: port, "POST", "/api/request/accessory/rename", body: Array(#"{\#(unknown)}"#.utf8))
            #expect(refusedMQTT["status"] == "error")
            #expect(refusedHTTP.status == 409 || refusedHTTP.status == 400)
            #expect(Self.withoutTransaction(Self.json(refusedHTTP)) == Self.withoutTransaction(refusedMQTT))

            // The HTTP request changed the accessory as the MQTT one would: its state says so.
            let renamed = try await HTTPTestClient.fetch(
                port: port, "POST", "/api/request/accessory/rename",
                body: Array(#"{"id":"\#(Fixture.airPods)","name":"Hall AirPods"}"#.utf8))
            #expect(renamed.status == 200)
            await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["name"] == "Hall AirPods" }
            // ...but its answer went to the HTTP caller only (a request after it is answered after
            // anything the rename published).
            _ = try await observer.request("health")
            let published = observer.json(on: "aabridge/bridge/response/accessory/rename")
            #expect(published.count == 2, "only the two MQTT requests were answered on MQTT: \(published)")
            #expect(!published.contains { $0["transaction"] == "http-1" })
        }
    }

    @Test("Bad input: 404 for an unknown path or request, 400 with the request API's error for a body over 64 KiB or not JSON, 405, 403")
    func badInput() async throws {
        try await withConsole { _, _, port in
            let unknownPath = try await HTTPTestClient.fetch(port: port, "GET", "/nope")
            #expect(unknownPath.status == 404)
            let unknownRequest = try await HTTPTestClient.fetch(
                port: port, "POST", "/api/request/accessory/explode", body: Array("{}".utf8))
            #expect(unknownRequest.status == 404)
            #expect(Self.json(unknownRequest)["error"]?["code"] == "invalidRequest")

            let notJSON = try await HTTPTestClient.fetch(port: port, "POST", "/api/request/accessory/remove", body: Array("remove it".utf8))
            #expect(notJSON.status == 400)
            #expect(Self.json(notJSON)["status"] == "error")
            #expect(Self.json(notJSON)["error"]?["code"] == "invalidRequest")
            #expect(Self.json(notJSON)["error"]?["message"]?.stringValue?.contains("not JSON") == true)

            // A valid request padded past 64 KiB: refused whole, the accessory stays.
            let padded = #"{"id":"\#(Fixture.airPods)","padding":""# + String(repeating: "x", count: 70_000) + #""}"#
            let tooLarge = try await HTTPTestClient.fetch(port: port, "POST", "/api/request/accessory/remove", body: Array(padded.utf8))
            #expect(tooLarge.status == 400)
            #expect(Self.json(tooLarge)["error"]?["code"] == "invalidRequest")
            #expect(Self.json(tooLarge)["error"]?["message"]?.stringValue?.contains("64 KiB") == true)

            let wrongMethod = try await HTTPTestClient.fetch(port: port, "GET", "/api/request/health")
            #expect(wrongMethod.status == 405)
            let crossSite = try await HTTPTestClient.fetch(
                port: port, "POST", "/api/request/accessory/remove", headers: ["Origin": "http://evil.example"],
                body: Array(#"{"id":"\#(Fixture.airPods)"}"#.utf8))
            #expect(crossSite.status == 403)

            let health = try await HTTPTestClient.fetch(port: port, "POST", "/api/request/health", body: Array("{}".utf8))
            #expect(health.status == 200)
            #expect(Self.json(health)["data"]?["accessories"] == 3, "nothing was removed")
        }
    }

    @Test("With http.token: a wrong or missing token is 401 and nothing else; the bearer header or the console's cookie is accepted")
    func token() async throws {
        try await withConsole(http: "  token: \"s3cret token\"\n") { _, _, port in
            for headers in [[:], ["Authorization": "Bearer wrong"], ["Authorization": "s3cret token"], ["Cookie": "aabridge_token=nope"]] {
                let metrics = try await HTTPTestClient.fetch(port: port, "GET", "/metrics", headers: headers)
                #expect(metrics.status == 401, "\(headers)")
                #expect(metrics.body.isEmpty, "nothing else said")
                let request = try await HTTPTestClient.fetch(
                    port: port, "POST", "/api/request/picker/show", headers: headers, body: Array("{}".utf8))
                #expect(request.status == 401)
                #expect(request.body.isEmpty)
                #expect(try await HTTPTestClient.fetch(port: port, "GET", "/events", headers: headers).status == 401)
            }
            let bearer = try await HTTPTestClient.fetch(port: port, "GET", "/metrics", headers: ["Authorization": "Bearer s3cret token"])
            #expect(bearer.status == 200)
            let cookie = try await HTTPTestClient.fetch(
                port: port, "GET", "/metrics", headers: ["Cookie": "a=b; aabridge_token=s3cret%20token"])
            #expect(cookie.status == 200)
            // The page asks for the token itself, and a health probe needs none.
            #expect(try await HTTPTestClient.fetch(port: port, "GET", "/").status == 200)
            #expect(try await HTTPTestClient.fetch(port: port, "GET", "/healthz").status == 200)
        }
    }

    @Test("/healthz: 200 while connected, 503 with a one-line reason while the broker is gone, 200 again once it is back")
    func health() async throws {
        try await withConsole { harness, observer, port in
            let healthy = try await HTTPTestClient.fetch(port: port, "GET", "/healthz")
            #expect(healthy.status == 200)
            #expect(healthy.text == "ok\n")
            harness.broker.stop()
            var down = healthy
            for _ in 0..<100 where down.status == 200 {
                try await Task.sleep(for: .milliseconds(100))
                down = try await HTTPTestClient.fetch(port: port, "GET", "/healthz")
            }
            #expect(down.status == 503)
            #expect(down.text == "not connected to the MQTT broker\n")
            try harness.broker.start()
            var back = down
            for _ in 0..<150 where back.status != 200 {
                try await Task.sleep(for: .milliseconds(100))
                back = try await HTTPTestClient.fetch(port: port, "GET", "/healthz")
            }
            #expect(back.status == 200)
            _ = observer
        }
    }

    @Test("/events: the current state first, then each publication; a clean stop ends with a stream open")
    func events() async throws {
        let port = try FreePort.find()
        let harness = try BridgeHarness(mqttExtra: "http:\n  listen: 127.0.0.1:\(port)\n")
        defer { harness.removeDirectory() }
        let observer = try await Observer(broker: harness.broker)
        try await harness.start(observer: observer)
        let client = try HTTPTestClient(port: port, timeout: 15)
        client.send(Array("GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8))
        let snapshot = try await HTTPTestClient.offPool {
            String(decoding: client.read { String(decoding: $0, as: UTF8.self).contains(#""topic":"bridge/accessories""#) }, as: UTF8.self)
        }
        #expect(snapshot.contains("content-type: text/event-stream") || snapshot.contains("Content-Type: text/event-stream"))
        #expect(snapshot.contains(#"event: mqtt"#))
        #expect(snapshot.contains(#""topic":"bridge/state","payload":{"state":"online"}"#))
        #expect(snapshot.contains("Alice's AirPods"))
        #expect(!snapshot.contains("bridge/response"))

        _ = try await observer.request("accessory/rename", #""id":"\#(Fixture.airPods)","name":"Streamed AirPods""#)
        let change = try await HTTPTestClient.offPool {
            String(decoding: client.read { String(decoding: $0, as: UTF8.self).contains("Streamed AirPods") }, as: UTF8.self)
        }
        #expect(change.contains(#""topic":"accessory/\#(Fixture.airPodsTopic)""#))
        #expect(!change.contains("bridge/response"), "responses go to whoever asked")

        let start = ContinuousClock.now
        #expect(await harness.stop() == 0)
        #expect(ContinuousClock.now - start < .seconds(8), "the open stream does not hold the shutdown")
        let rest = try await HTTPTestClient.offPool { client.readAll() }
        _ = rest
        #expect(!FreePort.isListening(port: port), "the server stopped with the bridge")
        await observer.disconnect()
    }

    @Test("http.connection_limit: one connection more than the limit is closed unanswered; the bridge serves again once they close")
    func connectionLimit() async throws {
        try await withConsole(http: "  connection_limit: 3\n") { _, _, port in
            // `/` is answered on the connection's thread: what is measured is the server's
            // limit, not how fast a loaded machine's runtime loop answers.
            var held = try (0..<3).map { _ in try HTTPTestClient(port: port, timeout: 5) }
            try await Task.sleep(for: .milliseconds(300))
            let over = try await HTTPTestClient.fetch(port: port, "GET", "/", timeout: 5)
            #expect(over.status == 0, "the fourth connection is closed without a response")
            held.removeAll()
            var again = over
            for _ in 0..<100 where again.status != 200 {
                try await Task.sleep(for: .milliseconds(100))
                again = try await HTTPTestClient.fetch(port: port, "GET", "/", timeout: 15)
            }
            #expect(again.status == 200)
        }
    }

    @Test("http section: listen, token or token_file (never both), AABRIDGE_HTTP_LISTEN; off by default; the token never printed")
    func configuration() throws {
        let base = SampleConfiguration.validBase
        let off = try ConfigurationLoader.load(yaml: base, environment: [:], hostname: "h").get()
        #expect(off.http.listen == nil)
        let on = try ConfigurationLoader.load(
            yaml: base + "http:\n  listen: 127.0.0.1:8099\n  token: abc\n  connection_limit: 5\n  timeout_s: 7\n", environment: [:],
            hostname: "h"
        ).get()
        #expect(on.http.listen == HTTPConfiguration.Listen(host: "127.0.0.1", port: 8099))
        #expect(on.http.token?.revealed == "abc")
        #expect(on.http.connectionLimit == 5)
        #expect(on.http.timeoutSeconds == 7)
        #expect(!"\(on.http)".contains("abc"))
        #expect(!on.summary.bytes.contains(Array("abc".utf8)))
        let overridden = try ConfigurationLoader.load(
            yaml: base, environment: ["AABRIDGE_HTTP_LISTEN": "0.0.0.0:9000", "AABRIDGE_HTTP_TOKEN": "null"], hostname: "h"
        ).get()
        #expect(overridden.http.listen?.description == "0.0.0.0:9000")
        #expect(overridden.http.token?.revealed == "null", "a secret from the environment is taken literally")

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-http-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("token").path
        try "from-file\n".write(toFile: file, atomically: true, encoding: .utf8)
        let fromFile = try ConfigurationLoader.load(yaml: base + "http:\n  token_file: \(file)\n", environment: [:], hostname: "h").get()
        #expect(fromFile.http.token?.revealed == "from-file")

        for (yaml, path) in [
            ("http:\n  listen: localhost:8099\n", "http.listen"), ("http:\n  listen: 127.0.0.1:99999\n", "http.listen"),
            ("http:\n  token: a\n  token_file: \(file)\n", "http.token"), ("http:\n  connection_limit: 0\n", "http.connection_limit"),
            ("http:\n  lissen: 127.0.0.1:1\n", "http"),
        ] {
            switch ConfigurationLoader.load(yaml: base + yaml, environment: [:], hostname: "h") {
            case .success: Issue.record("accepted: \(yaml)")
            case .failure(let errors):
                #expect(errors.issues.contains { $0.path.hasPrefix(path) }, "\(yaml): \(errors)")
                #expect(!"\(errors)".contains("from-file"))
            }
        }
    }
}
