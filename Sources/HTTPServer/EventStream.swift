import Dispatch
import Synchronization

/// One server-sent events client: what the runtime sends waits here until the connection's
/// thread writes it out.
///
/// Bounded: a client that does not read fast enough (more than ``limit`` bytes waiting) is
/// dropped, so a slow or stalled browser never makes the bridge's memory grow. Idle streams
/// get a comment line every ``keepaliveSeconds``, so proxies keep them open. A client that went
/// away is noticed within ``departureCheckMilliseconds`` (the server looks at its socket while
/// the stream waits), not at the next keepalive: until then its connection held one of its
/// address's places, and under the add-on every browser comes from the one ingress address.
public final class EventStream: Sendable {
    /// Bytes that may wait for the client before it is dropped.
    public let limit: Int
    static let keepaliveSeconds = 10
    static let departureCheckMilliseconds = 200
    private let state = Mutex(State())
    /// Signalled by every send and by close, so the writer wakes at once.
    private let ready = DispatchSemaphore(value: 0)

    private struct State {
        var pending: [UInt8] = []
        var closed = false
    }

    public init(limit: Int = 1 << 20) { self.limit = limit }

    /// Queues one event (`event: name`, `data: ...`).
    /// - Returns: false when the stream is closed, or was closed now because the client is too
    ///   far behind.
    @discardableResult
    public func send(event name: String, data: [UInt8]) -> Bool {
        var message = Array("event: \(name)\ndata: ".utf8)
        // A data line ends at a newline: JSON from the bridge has none, but never let one split the event.
        message.append(contentsOf: data.map { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") ? UInt8(ascii: " ") : $0 })
        message.append(contentsOf: Array("\n\n".utf8))
        let sent = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            guard state.pending.count + message.count <= limit else {
                state.closed = true
                state.pending = []
                return false
            }
            state.pending.append(contentsOf: message)
            return true
        }
        ready.signal()
        return sent
    }

    /// Ends the stream: the client's connection is closed once what waits was written.
    public func close() {
        state.withLock { $0.closed = true }
        ready.signal()
    }

    public var isClosed: Bool { state.withLock { $0.closed } }

    /// Bytes waiting (for tests and the slow-client bound).
    public var pendingBytes: Int { state.withLock { $0.pending.count } }

    /// What the connection thread's read gives.
    enum Chunk: Equatable {
        /// This many bytes were written to the buffer.
        case bytes(Int)
        /// The stream closed and everything waiting was written.
        case end
        /// The client went away: the stream is closed, its connection should be dropped.
        case clientGone
    }

    /// The connection thread's read: blocks until something waits, the stream closes, the
    /// keepalive is due or `clientGone` says the client left (asked every
    /// ``departureCheckMilliseconds`` while waiting).
    func read(into buffer: UnsafeMutableRawBufferPointer, clientGone: () -> Bool = { false }) -> Chunk {
        var idleSince = ContinuousClock.now
        while true {
            let outcome = state.withLock { state -> Int?? in
                if !state.pending.isEmpty {
                    let count = min(buffer.count, state.pending.count)
                    state.pending.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                    state.pending.removeFirst(count)
                    return .some(count)
                }
                return state.closed ? .some(nil) : nil
            }
            if let outcome { return outcome.map { .bytes($0) } ?? .end }
            if ready.wait(timeout: .now() + .milliseconds(Self.departureCheckMilliseconds)) == .timedOut {
                if clientGone() {
                    close()
                    return .clientGone
                }
                guard ContinuousClock.now - idleSince >= .seconds(Self.keepaliveSeconds) else { continue }
                idleSince = .now
                let keepalive = Array(": keepalive\n\n".utf8)
                guard buffer.count >= keepalive.count else { continue }
                keepalive.withUnsafeBytes { buffer.copyMemory(from: $0) }
                return .bytes(keepalive.count)
            }
        }
    }
}
