import CMicroHTTPD
import Dispatch
import Synchronization

/// The total time a connection may take to send its request's headers, from its start (or from
/// the end of its previous request, when kept alive), however it trickles them.
///
/// libmicrohttpd's connection timeout is an inactivity timeout: every byte restarts it, so a
/// client sending one header byte every few seconds held its connection, and with
/// ``HTTPServer``'s per-client limit its address's every place, for as long as it liked. Here
/// each connection waiting for headers has a deadline; a sweep every ``tickMilliseconds`` ends the
/// connections past theirs by shutting their socket down (libmicrohttpd has no call to close
/// a connection from outside its thread; the thread sees the end and closes it, which frees
/// the place).
///
/// The shutdown happens under the lock, and a connection leaves the table under the same lock
/// when libmicrohttpd says it closed, which it says before it closes the socket: a descriptor
/// shut down here is always still the connection's, never one reused by a newer connection.
final class HeaderDeadlines: Sendable {
    /// How often the table is swept: a connection ends at most this much after its deadline.
    static let tickMilliseconds = 250

    private let seconds: Int
    private let waiting = Mutex<[UInt: Waiting]>([:])
    private let stopped = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    private struct Waiting {
        var descriptor: Int32
        var deadline: ContinuousClock.Instant
    }

    init(seconds: Int) {
        self.seconds = seconds
        // A thread of its own, not a timer: the sweep must run even when every worker waits.
        DispatchQueue(label: "aabridge.http.header-deadlines").async { [self] in
            while !stopped.load(ordering: .relaxed) {
                _ = wake.wait(timeout: .now() + .milliseconds(Self.tickMilliseconds))
                sweep(now: .now)
            }
            done.signal()
        }
    }

    /// A connection now waits for a request's headers (it opened, or its request ended and it
    /// is kept alive); `descriptor` is its socket (-1: unknown, no deadline).
    func awaitHeaders(_ connection: OpaquePointer, descriptor: Int32) {
        guard descriptor >= 0 else { return }
        let deadline = ContinuousClock.now + .seconds(seconds)
        waiting.withLock { $0[key(connection)] = Waiting(descriptor: descriptor, deadline: deadline) }
    }

    /// The connection's headers arrived, or it closed: no deadline any more.
    func clear(_ connection: OpaquePointer) {
        _ = waiting.withLock { $0.removeValue(forKey: key(connection)) }
    }

    /// Ends the sweep (the server stopped; every connection is gone).
    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        wake.signal()
        done.wait()
    }

    /// Connections waiting (for tests).
    var count: Int { waiting.withLock { $0.count } }

    private func sweep(now: ContinuousClock.Instant) {
        waiting.withLock { waiting in
            for (connection, entry) in waiting where entry.deadline <= now {
                aabridge_socket_shutdown(entry.descriptor)
                waiting.removeValue(forKey: connection)
            }
        }
    }

    private func key(_ connection: OpaquePointer) -> UInt { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection))) }
}
