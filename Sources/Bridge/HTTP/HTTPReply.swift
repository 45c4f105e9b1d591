import Dispatch
import HTTPServer
import JSON
import Synchronization

/// The answer to one ``HTTPCall``: the loop fills it in, the connection's thread waits for
/// it, for a bounded time.
final class HTTPReply: Sendable {
    private let response = Mutex<HTTPResponse?>(nil)
    private let answered = DispatchSemaphore(value: 0)

    func answer(_ value: HTTPResponse) {
        response.withLock { $0 = value }
        answered.signal()
    }

    /// Waits up to `limit`, giving up early once `stopping` says the server is stopping (so
    /// the daemon's stop, which waits for this thread, is never held for long).
    /// - Returns: the answer, or nil when none came.
    func wait(limit: Duration, stopping: () -> Bool) -> HTTPResponse? {
        let slices = max(1, Int(limit.components.seconds * 10))
        for _ in 0..<slices {
            if answered.wait(timeout: .now() + .milliseconds(100)) == .success { return response.withLock { $0 } }
            if stopping() { return nil }
        }
        return nil
    }
}

extension HTTPReply {
    /// A request's answer as the console's request API gives it: `body` (the response payload
    /// `bridge/response/<name>` would carry) with the status its result says, or `status`
    /// (421 for a request another instance of the cluster answers).
    func answer(_ result: Result<JSONValue, ResponseError>, body: JSONValue, status: Int? = nil) {
        let code =
            switch result {
            case .success: 200
            case .failure(let error): error.kind.httpStatus
            }
        answer(.full(status: status ?? code, contentType: "application/json", body: body.bytes, headers: []))
    }
}
