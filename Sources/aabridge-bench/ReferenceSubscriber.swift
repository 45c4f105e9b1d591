import Foundation
import LocalProcess
import Synchronization

/// One run of the physical reference: `mosquitto_sub` (the C client over libmosquitto) on the
/// benchmark's broker, subscribed to the reference's topic tree, printing to /dev/null and
/// exiting after `-C count` messages. Done is its exit, seen by a thread blocked in
/// `waitid(WNOWAIT)`, which then reads its CPU time from /proc while it is an unreaped zombie
/// (as the bridge's is read while it runs), and only then lets it be reaped.
final class ReferenceSubscriber: Sendable {
    static let executable = "/usr/bin/mosquitto_sub"
    static let filter = "prob/+/BTtoMQTT/#"

    let clientID: String
    /// CPU time (µs) once subscribed: connecting and subscribing are not the stream's cost.
    let cpuAtStart: ProcessClock.Time
    private let child: ChildProcess
    private let exited = E2E.ResultBox<Exit>()

    /// What the watching thread saw: when it exited, and its CPU time then (µs).
    struct Exit: Sendable {
        var at: UInt64
        var cpu: ProcessClock.Time?
    }

    /// Starts mosquitto_sub (behind `wrapper`, e.g. valgrind, when given) and returns once the
    /// broker has logged its subscription.
    init(
        broker: IngestBroker, qos: Int, count: Int, wrapper: [String] = [], output: String = "/dev/null", subscribeTimeout: Double = 30
    )
        throws
    {
        clientID = "bench-sub-\(UUID().uuidString.prefix(8))"
        let arguments = [
            "-h", "127.0.0.1", "-p", "\(broker.port)", "-i", clientID, "-t", Self.filter, "-q", "\(qos)", "-C", "\(count)",
        ]
        child =
            try wrapper.isEmpty
            ? ChildProcess(path: Self.executable, arguments: arguments, output: output)
            : ChildProcess(path: wrapper[0], arguments: Array(wrapper.dropFirst()) + [Self.executable] + arguments, output: output)
        IngestChildren.add(child.pid)
        guard broker.waitForSubscription(clientID: clientID, filter: Self.filter, timeout: subscribeTimeout) else {
            IngestChildren.remove(child.pid)
            child.stop(signal: SIGKILL)
            throw E2E.Failure("mosquitto_sub did not subscribe within \(Int(subscribeTimeout)) s")
        }
        guard let cpu = ProcessClock.cpu(child.pid) else {
            IngestChildren.remove(child.pid)
            child.stop(signal: SIGKILL)
            throw E2E.Failure("mosquitto_sub exited before the stream")
        }
        cpuAtStart = cpu
        let pid = child.pid
        let exited = self.exited
        let thread = Thread {
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
            let at = E2E.nanoseconds()
            let cpu = ProcessClock.cpu(pid)
            exited.value.withLock { $0 = Exit(at: at, cpu: cpu) }
        }
        thread.start()
    }

    var pid: pid_t { child.pid }

    struct Outcome {
        /// Whether it exited by itself with status 0, i.e. after all `count` messages.
        var completed: Bool
        /// When it exited (monotonic ns), or when it was given up on.
        var end: UInt64
        /// CPU time from subscribed to exit, µs.
        var cpu: ProcessClock.Time
    }

    /// Waits up to `timeout` seconds for the exit; a subscriber still running then lost
    /// messages (it never reaches `count`): it is killed and the run reported incomplete.
    func finish(timeout: Double) async -> Outcome {
        let deadline = E2E.nanoseconds() + UInt64(timeout * 1e9)
        var seen = exited.value.withLock { $0 }
        while seen == nil && E2E.nanoseconds() < deadline {
            try? await Task.sleep(for: .milliseconds(1))
            seen = exited.value.withLock { $0 }
        }
        if let exited = seen {
            IngestChildren.remove(child.pid)
            let status = child.wait()
            return Outcome(completed: status == 0, end: exited.at, cpu: (exited.cpu ?? cpuAtStart) - cpuAtStart)
        }
        let end = E2E.nanoseconds()
        let cpu = ProcessClock.cpu(child.pid) ?? cpuAtStart
        stop()
        return Outcome(completed: false, end: end, cpu: cpu - cpuAtStart)
    }

    /// Kills it if it still runs (a failed benchmark must not leave it behind).
    func stop() {
        IngestChildren.remove(child.pid)
        child.stop(signal: SIGKILL)
    }

    deinit { stop() }
}
