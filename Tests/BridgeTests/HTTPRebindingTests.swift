import Configuration
import Foundation
import HTTPServer
import JSON
import LocalProcess
import TestSupport
import Testing

@testable import Bridge

/// DNS rebinding against a console without a token: a page on the attacker's name that
/// resolves to 127.0.0.1 sends its own name as Host (and a matching Origin). Against the
/// real bridge on a loopback port.
@Suite("HTTP console: Host rule, bearer scheme, allowed clients")
struct HTTPRebindingTests {
    static let remove = Array(#"{"id":"\#(Fixture.airPods)"}"#.utf8)

    static func accessories(_ port: Int) async throws -> JSONValue? {
        let health = try await HTTPTestClient.fetch(port: port, "POST", "/api/request/health", body: Array("{}".utf8))
        return ((try? JSONParser.parse(health.body)) ?? .null)["data"]?["accessories"]
    }

    @Test("Without a token: a foreign Host is refused on every path, a missing Host and a foreign Origin too; the accessory stays")
    func rebinding() async throws {
        try await withConsole(http: "  allowed_hosts: [bridge.example, \"other.example:9\"]\n") { _, _, port in
            let evil = "evil.example:\(port)"
            for name in ["accessory/remove", "accessory/rename"] {
                let body = name == "accessory/remove" ? Self.remove : Array(#"{"id":"\#(Fixture.airPods)","name":"pwned"}"#.utf8)
                let rebound = try await HTTPTestClient.fetch(
                    port: port, "POST", "/api/request/\(name)", headers: ["Origin": "http://\(evil)"], body: body, host: evil)
                #expect(rebound.status == 403, "\(name)")
            }
            for path in ["/", "/healthz", "/metrics", "/events"] {
                #expect(try await HTTPTestClient.fetch(port: port, "GET", path, host: evil).status == 403, "\(path)")
            }
            let noHost = try await HTTPTestClient.fetch(
                port: port, "POST", "/api/request/accessory/remove", headers: ["Origin": "http://evil.example"], body: Self.remove,
                host: .none, version: "1.0")
            #expect(noHost.status == 400)
            let foreignOrigin = try await HTTPTestClient.fetch(
                port: port, "POST", "/api/request/accessory/remove", headers: ["Origin": "http://evil.example"], body: Self.remove)
            #expect(foreignOrigin.status == 403)
            #expect(try await Self.accessories(port) == 3, "nothing was removed")

            // The listen address's own names, and allowed_hosts (a name without a port: any port).
            for host in [
                "127.0.0.1:\(port)", "localhost:\(port)", "LOCALHOST:\(port)", "[::1]:\(port)", "bridge.example:8443", "bridge.example",
                "other.example:9",
            ] {
                #expect(try await HTTPTestClient.fetch(port: port, "GET", "/healthz", host: host).status == 200, "\(host)")
            }
            #expect(try await HTTPTestClient.fetch(port: port, "GET", "/healthz", host: "other.example:10").status == 403)
            #expect(try await HTTPTestClient.fetch(port: port, "GET", "/healthz", host: "localhost:\(port + 1)").status == 403)
        }
    }

    @Test("With a token the token decides, whatever the Host; the bearer scheme in any case")
    func tokenDecides() async throws {
        try await withConsole(http: "  token: s3cret\n") { _, _, port in
            for scheme in ["Bearer", "bearer", "BEARER"] {
                let metrics = try await HTTPTestClient.fetch(
                    port: port, "GET", "/metrics", headers: ["Authorization": "\(scheme) s3cret"], host: "evil.example")
                #expect(metrics.status == 200, "\(scheme)")
            }
            #expect(try await HTTPTestClient.fetch(port: port, "GET", "/metrics", host: "evil.example").status == 401)
        }
    }

    @Test("A listed proxy (not loopback) is not held to the Host rule; a loopback client always is")
    func trustedProxy() {
        let rule = HostRule(
            listen: .init(host: "0.0.0.0", port: 8099), allowedHosts: [],
            allowedClients: [HTTPConfiguration.ClientRange("172.30.32.2")!, HTTPConfiguration.ClientRange("127.0.0.1")!])
        // Home Assistant's ingress forwards the browser's own Host (homeassistant.local:8123).
        let ingress = HTTPRequest(method: "GET", path: "/", headers: ["host": "homeassistant.local:8123"], client: 0xAC1E_2002)
        #expect(rule.refusal(for: ingress) == nil)
        let local = HTTPRequest(method: "GET", path: "/", headers: ["host": "evil.example:8099"], client: 0x7F00_0001)
        #expect(rule.refusal(for: local)?.status == 403)
        let other = HTTPRequest(method: "GET", path: "/", headers: ["host": "homeassistant.local:8123"], client: 0xAC1E_2003)
        #expect(rule.refusal(for: other)?.status == 403)
    }

    @Test(
        "http section: allowed_hosts, allowed_clients (list or comma-separated variable), limits; non-loopback without a token is an error")
    func configuration() throws {
        let base = SampleConfiguration.validBase
        let loaded = try ConfigurationLoader.load(
            yaml: base
                + "http:\n  listen: 0.0.0.0:8099\n  allowed_hosts: [Bridge.Example]\n  connections_per_client: 4\n  header_timeout_s: 3\n",
            environment: ["AABRIDGE_HTTP_ALLOWED_CLIENTS": "172.30.32.2, 192.168.1.0/24"], hostname: "h"
        ).get()
        #expect(loaded.http.allowedHosts == ["bridge.example"])
        #expect(loaded.http.allowedClients.map(\.description) == ["172.30.32.2", "192.168.1.0/24"])
        #expect(loaded.http.connectionsPerClient == 4)
        #expect(loaded.http.headerTimeoutSeconds == 3)
        #expect(loaded.http.admitsClient(0xC0A8_0107))
        #expect(loaded.http.admitsClient(0x7F00_0001), "this machine's loopback always")
        #expect(!loaded.http.admitsClient(0xC0A8_0207))
        #expect(
            try ConfigurationLoader.load(yaml: base + "http:\n  listen: 0.0.0.0:8099\n  token: t\n", environment: [:], hostname: "h").get()
                .http.token != nil)

        for (yaml, path) in [
            ("http:\n  listen: 0.0.0.0:8099\n", "http.listen"), ("http:\n  listen: 192.168.1.5:8099\n", "http.listen"),
            ("http:\n  allowed_clients: [10.0.0.1, 10.0.0.1/33]\n", "http.allowed_clients[1]"),
            ("http:\n  allowed_clients: [\"::1\"]\n", "http.allowed_clients[0]"),
            ("http:\n  allowed_clients: [192.168.1.7/24]\n", "http.allowed_clients[0]"),
            ("http:\n  allowed_hosts: [\"http://evil.example\"]\n", "http.allowed_hosts[0]"),
            ("http:\n  connections_per_client: 0\n", "http.connections_per_client"),
            ("http:\n  header_timeout_s: 0\n", "http.header_timeout_s"),
        ] {
            switch ConfigurationLoader.load(yaml: base + yaml, environment: [:], hostname: "h") {
            case .success: Issue.record("accepted: \(yaml)")
            case .failure(let errors): #expect(errors.issues.contains { $0.path == path }, "\(yaml): \(errors)")
            }
        }
    }
}
