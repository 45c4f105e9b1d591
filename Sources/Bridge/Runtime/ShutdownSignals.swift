import Dispatch

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// SIGTERM and SIGINT as an async sequence, the way swift-service-lifecycle delivers them:
/// the default handlers are replaced so the process can shut down gracefully (publish
/// `offline`, emit `invalidated`, close storage) instead of dying mid-write.
public enum ShutdownSignals {
    /// A stream that yields the signal number each time SIGTERM or SIGINT arrives.
    public static func stream(_ signals: [Int32] = [SIGTERM, SIGINT]) -> AsyncStream<Int32> {
        AsyncStream { continuation in
            let sources = SignalSources(
                signals.map { number in
                    signal(number, SIG_IGN)
                    let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                    source.setEventHandler { continuation.yield(number) }
                    source.resume()
                    return source
                })
            continuation.onTermination = { _ in sources.cancel() }
        }
    }
}

/// Keeps the dispatch sources alive for as long as the stream is.
///
/// `@unchecked Sendable`: the array is written once in `init` and only read (to cancel,
/// which Dispatch allows from any thread) afterwards.
private final class SignalSources: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    init(_ sources: [any DispatchSourceSignal]) { self.sources = sources }

    func cancel() { sources.forEach { $0.cancel() } }
}
