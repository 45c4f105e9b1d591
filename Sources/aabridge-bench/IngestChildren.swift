import Dispatch
import Foundation
import Synchronization

/// The ingest benchmark's child processes (broker, bridge, mosquitto_sub, valgrind), killed
/// when the benchmark is interrupted (SIGINT, SIGTERM): a failure that throws stops them on
/// its way out (their owners' deinit and defer), but a signal ends the process without
/// unwinding, and a broker or a bridge under valgrind left behind would go on loading the
/// shared machine. Their scratch directories go with them.
enum IngestChildren {
    private static let pids = Mutex<Set<pid_t>>([])
    /// Scratch directories (broker, database, callgrind files), removed on interruption too.
    private static let directories = Mutex<Set<String>>([])
    private static let sources = Mutex<[any DispatchSourceSignal]>([])

    /// Registers a child to kill on interruption (installs the handlers the first time).
    static func add(_ pid: pid_t) {
        pids.withLock { _ = $0.insert(pid) }
        sources.withLock { sources in
            guard sources.isEmpty else { return }
            for signalNumber in [SIGINT, SIGTERM] {
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
                source.setEventHandler {
                    for pid in pids.withLock({ $0 }) { kill(pid, SIGKILL) }
                    for directory in directories.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: directory) }
                    FileHandle.standardError.write(Data("aabridge-bench: interrupted, children stopped\n".utf8))
                    exit(128 + signalNumber)
                }
                source.resume()
                sources.append(source)
            }
        }
    }

    /// Registers a scratch directory to remove on interruption.
    static func add(directory: String) {
        directories.withLock { _ = $0.insert(directory) }
    }

    /// Forgets a child before it is reaped (afterwards its pid may belong to another process).
    static func remove(_ pid: pid_t) {
        pids.withLock { _ = $0.remove(pid) }
    }
}
