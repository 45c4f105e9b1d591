import Foundation
import HTTPServer
import Synchronization
import TestSupport
import Testing

/// The server's defences against one client holding every connection: the per-client
/// limit, the short header timeout, and the accept-time client policy (127.0.0.2 is another
/// client on Linux's loopback).
@Suite("HTTP server: per-client limits")
struct HTTPServerClientLimitTests {
    @Test("One address holding its per-client limit is refused more; another address is still served")
    func perClientLimit() throws {
        let server = try HTTPServer(
            host: "127.0.0.1", port: 0, connectionLimit: 32, perClientLimit: 2, headerTimeoutSeconds: 30, timeoutSeconds: 30
        ) { _ in .text(200, "ok\n") }
        defer { server.stop() }
        let held = try (0..<2).map { _ in try HTTPTestClient(port: server.port, timeout: 5) }
        Thread.sleep(forTimeInterval: 0.3)
        let third = try HTTPTestClient.request(port: server.port, "GET", "/", timeout: 5)
        #expect(third.status == 0, "a third connection from 127.0.0.1 is closed unanswered")
        let other = try HTTPTestClient.request(port: server.port, "GET", "/", timeout: 5, source: "127.0.0.2")
        #expect(other.status == 200, "127.0.0.2 is another client with places of its own")
        _ = held
    }

    @Test("A connection without a request is closed after the header timeout; one whose headers arrived gets the longer timeout")
    func headerTimeout() throws {
        let server = try HTTPServer(host: "127.0.0.1", port: 0, connectionLimit: 8, headerTimeoutSeconds: 1, timeoutSeconds: 30) {
            request in .text(200, "\(request.body.count)\n")
        }
        defer { server.stop() }
        let idle = try HTTPTestClient(port: server.port, timeout: 20)
        let start = ContinuousClock.now
        #expect(idle.readAll().isEmpty)
        #expect(ContinuousClock.now - start < .seconds(8), "closed by the 1-s header timeout, not the 30-s one")

        // Headers first, the body 2.5 s later: past the header timeout, within the request's.
        let slow = try HTTPTestClient(port: server.port, timeout: 20)
        slow.send(Array("POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 3\r\n\r\n".utf8))
        Thread.sleep(forTimeInterval: 2.5)
        #expect(slow.send(Array("abc".utf8)))
        let answer = HTTPTestClient.parse(slow.readAll())
        #expect(answer.status == 200)
        #expect(answer.text == "3\n")
    }

    @Test("The client policy refuses at accept; the handler sees the client's address")
    func clientPolicy() throws {
        let seen = Mutex<[UInt32]>([])
        let server = try HTTPServer(
            host: "127.0.0.1", port: 0, connectionLimit: 8, timeoutSeconds: 30, clientPolicy: { $0 != 0x7F00_0002 }
        ) { request in
            seen.withLock { $0.append(request.client) }
            return .text(200, "ok\n")
        }
        defer { server.stop() }
        #expect(try HTTPTestClient.request(port: server.port, "GET", "/", timeout: 5, source: "127.0.0.2").status == 0)
        #expect(try HTTPTestClient.request(port: server.port, "GET", "/", timeout: 5, source: "127.0.0.3").status == 200)
        #expect(seen.withLock { $0 } == [0x7F00_0003])
    }
}
