import Foundation
import HTTPServer
import Synchronization
import TestSupport
import Testing

/// The HTTP server on its own (libmicrohttpd on a free loopback port): its limits.
@Suite("HTTP server")
struct HTTPServerTests {
    static func start(limit: Int = 8, timeout: Int = 30, handler: HTTPServer.Handler? = nil) throws -> HTTPServer {
        try HTTPServer(
            host: "127.0.0.1", port: 0, connectionLimit: limit, timeoutSeconds: timeout,
            handler: handler ?? { _ in .text(200, "ok\n") })
    }

    @Test("More connections than the limit: the one over it is closed without an answer; freed, a new one is served")
    func connectionLimit() throws {
        let server = try Self.start(limit: 3)
        defer { server.stop() }
        // Three clients that connect and send nothing hold the three places.
        var held = try (0..<3).map { _ in try HTTPTestClient(port: server.port, timeout: 5) }
        Thread.sleep(forTimeInterval: 0.3)
        let refused = try HTTPTestClient.request(port: server.port, "GET", "/", timeout: 5)
        #expect(refused.status == 0, "the fourth connection is closed unanswered")
        held.removeAll()
        var served = 0
        for _ in 0..<50 where served == 0 {
            Thread.sleep(forTimeInterval: 0.1)
            served = try HTTPTestClient.request(port: server.port, "GET", "/", timeout: 5).status
        }
        #expect(served == 200, "once the held connections close, a new one is served")
    }

    @Test("A client that connects and sends nothing is closed after the connection timeout")
    func idleTimeout() throws {
        let server = try Self.start(timeout: 1)
        defer { server.stop() }
        let idle = try HTTPTestClient(port: server.port, timeout: 20)
        let start = ContinuousClock.now
        let received = idle.readAll()
        let elapsed = ContinuousClock.now - start
        #expect(received.isEmpty)
        #expect(elapsed < .seconds(5), "closed by the server after about 1 s, not by our 20 s receive timeout: \(elapsed)")
    }

    @Test("A body over the maximum reaches the handler as too large and empty, never kept")
    func bodyTooLarge() throws {
        let seen = Mutex<[(Int, Bool)]>([])
        let server = try Self.start { request in
            seen.withLock { $0.append((request.body.count, request.bodyTooLarge)) }
            return .text(request.bodyTooLarge ? 400 : 200, "")
        }
        defer { server.stop() }
        let large = try HTTPTestClient.request(port: server.port, "POST", "/x", body: Array(repeating: 0x41, count: 70_000))
        let small = try HTTPTestClient.request(port: server.port, "POST", "/x", body: Array(repeating: 0x41, count: 65_536))
        #expect(large.status == 400)
        #expect(small.status == 200)
        let requests = seen.withLock { $0 }
        #expect(requests.map(\.0) == [0, 65_536])
        #expect(requests.map(\.1) == [true, false])
    }

    @Test("Server-sent events arrive as sent; stop() ends an open stream at once")
    func events() throws {
        let stream = EventStream()
        let server = try Self.start { _ in .events(stream) }
        let client = try HTTPTestClient(port: server.port, timeout: 5)
        client.send(Array("GET /events HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        stream.send(event: "state", data: Array(#"{"a":1}"#.utf8))
        let text = String(decoding: client.read { String(decoding: $0, as: UTF8.self).contains("\n\n") && $0.count > 100 }, as: UTF8.self)
        #expect(text.contains("text/event-stream"))
        #expect(text.contains("event: state\ndata: {\"a\":1}\n\n"))
        let start = ContinuousClock.now
        server.stop()
        #expect(ContinuousClock.now - start < .seconds(3), "stop does not wait for the stream's keepalive")
        #expect(stream.isClosed)
    }

    @Test("A client too far behind is dropped: what waits never grows past the limit")
    func slowClientDropped() {
        let stream = EventStream(limit: 1_000)
        var accepted = 0
        while stream.send(event: "state", data: Array(repeating: 0x61, count: 100)) { accepted += 1 }
        #expect(accepted == 8)
        #expect(stream.isClosed)
        #expect(stream.pendingBytes == 0)
        #expect(!stream.send(event: "state", data: []))
    }

    @Test("An address that is not IPv4, or a port in use, is refused with a clear error")
    func refusedAddresses() throws {
        #expect(throws: HTTPServerError.self) {
            try HTTPServer(host: "localhost", port: 0, connectionLimit: 1, timeoutSeconds: 1) { _ in .text(200, "") }
        }
        let first = try Self.start()
        defer { first.stop() }
        #expect(throws: HTTPServerError.self) {
            try HTTPServer(host: "127.0.0.1", port: first.port, connectionLimit: 1, timeoutSeconds: 1) { _ in .text(200, "") }
        }
    }
}
