import Foundation

/// A plain HTTP/1.1 client over a loopback socket, for the tests of the bridge's HTTP server:
/// it can also hold a connection open without sending anything (the connection-limit and
/// timeout tests), which a URL-loading client cannot.
public final class HTTPTestClient: Sendable {
    public let fd: Int32

    /// What came back: the status (0 when the server closed the connection without a
    /// response), the headers by lower-case name, and the body.
    public struct Response: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: [UInt8]
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Connects to 127.0.0.1:port from `source` (another loopback address such as 127.0.0.2
    /// is another client to the server), receive timeout `timeout` seconds.
    public init(port: Int, timeout: Int = 10, source: String = "127.0.0.1") throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BrokerError("socket(): \(String(cString: strerror(errno)))") }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            close(fd)
            throw BrokerError("bind(\(source)): \(String(cString: strerror(errno)))")
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw BrokerError("connect(127.0.0.1:\(port)): \(String(cString: strerror(errno)))")
        }
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Sends raw bytes; false when the connection is closed.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count <= 0 { return false }
            sent += count
        }
        return true
    }

    /// Reads until the server closes the connection (or the receive timeout).
    public func readAll() -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return received }
            received.append(contentsOf: buffer[0..<count])
        }
    }

    /// Reads what arrives within the receive timeout, up to `limit` bytes, until `done` says so.
    public func read(until done: ([UInt8]) -> Bool, limit: Int = 1 << 20) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !done(received) && received.count < limit {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return received
    }

    /// One request with `Connection: close`, and its response. `host` is the Host header
    /// (nil: none, which only HTTP/1.0 allows).
    public static func request(
        port: Int, _ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8] = [], timeout: Int = 10,
        host: String?? = .some(nil), version: String = "1.1", source: String = "127.0.0.1"
    ) throws -> Response {
        let client = try HTTPTestClient(port: port, timeout: timeout, source: source)
        var head = "\(method) \(path) HTTP/\(version)\r\n"
        switch host {
        case .none: break
        case .some(.none): head += "Host: 127.0.0.1:\(port)\r\n"
        case .some(.some(let value)): head += "Host: \(value)\r\n"
        }
        head += "Connection: close\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        if method == "POST" || !body.isEmpty { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        client.send(Array(head.utf8) + body)
        return parse(client.readAll())
    }

    /// Splits a raw response; a chunked body is joined.
    public static func parse(_ raw: [UInt8]) -> Response {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = raw.firstRange(of: separator) else { return Response(status: 0, headers: [:], body: []) }
        let head = String(decoding: raw[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = head.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Array(raw[end.upperBound...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" { body = dechunk(body) }
        return Response(status: status, headers: headers, body: body)
    }

    static func dechunk(_ data: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        var index = 0
        while index < data.count {
            guard let lineEnd = data[index...].firstRange(of: Array("\r\n".utf8)) else { break }
            let sizeText = String(decoding: data[index..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size > 0 else { break }
            let start = lineEnd.upperBound
            let stop = min(data.count, start + size)
            result.append(contentsOf: data[start..<stop])
            index = stop + 2
        }
        return result
    }
}

extension HTTPTestClient {
    /// ``request(port:_:_:headers:body:timeout:)`` on a dispatch thread: the socket calls block,
    /// and a blocked thread of Swift's small cooperative pool could be the one the bridge's
    /// loop needs to answer.
    public static func fetch(
        port: Int, _ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8] = [], timeout: Int = 15,
        host: String?? = .some(nil), version: String = "1.1", source: String = "127.0.0.1"
    ) async throws -> Response {
        try await offPool {
            try request(
                port: port, method, path, headers: headers, body: body, timeout: timeout, host: host, version: version, source: source)
        }
    }

    /// Runs blocking work on a dispatch thread and awaits it.
    public static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
        }
    }
}
