import Synchronization

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

/// A child process started with `posix_spawn` and reaped with `waitpid`.
///
/// Foundation's `Process.waitUntilExit` spins a run loop and can hang when called from a
/// Swift concurrency thread (as test deinits are), so brokers and bridges are managed this
/// way instead, by the tests (TestSupport) and the benchmarks alike.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    /// Set once the process has been reaped: its pid may then belong to another process (the
    /// pid space here is 32,768 and a test run starts thousands), which must never be signalled.
    private let reaped = Mutex(false)

    /// Starts `path` with `arguments`; stdin is /dev/null, stdout and stderr go to `output`.
    public init(path: String, arguments: [String], output: String = "/dev/null") throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] {
            if fd == STDIN_FILENO {
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDONLY, 0)
            } else {
                posix_spawn_file_actions_addopen(&actions, fd, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            }
        }
        // The child must not inherit a blocked signal mask from whatever thread spawns it (test
        // runners block signals on their threads): mosquitto would then ignore SIGTERM.
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let rc = SpawnAttributes.with { attributes in posix_spawn(&child, path, &actions, &attributes, argv, environ) }
        guard rc == 0 else { throw LocalProcessError("posix_spawn \(path): \(String(cString: strerror(rc)))") }
        pid = child
    }

    /// `waitpid`, remembering when the process was reaped.
    private func reap(_ status: inout Int32, _ options: Int32) -> pid_t {
        let result = waitpid(pid, &status, options)
        if result == pid { reaped.withLock { $0 = true } }
        return result
    }

    /// Sends `signal` and waits for the process to exit (SIGKILL after `timeout` seconds);
    /// nothing when it was already reaped.
    public func stop(signal: Int32 = SIGTERM, timeout: TimeInterval = 10) {
        guard !reaped.withLock({ $0 }) else { return }
        kill(pid, signal)
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        while reap(&status, WNOHANG) == 0 {
            if Date() > deadline {
                kill(pid, SIGKILL)
                _ = reap(&status, 0)
                return
            }
            usleep(5_000)
        }
    }

    /// Waits for the process to exit and returns its exit status (-1 when killed by a signal).
    public func wait() -> Int32 {
        var status: Int32 = 0
        while reap(&status, 0) < 0 && errno == EINTR {}
        return Self.exitStatus(status)
    }

    /// Waits up to `timeout` seconds for the process to exit and returns its exit status
    /// (-1 when killed by a signal); nil when it was still running, after it is killed
    /// (SIGKILL) and reaped. For a process that should exit on its own: a test fails instead
    /// of hanging when it does not.
    public func wait(timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        while reap(&status, WNOHANG) == 0 {
            guard Date() < deadline else { return killed() }
            usleep(10_000)
        }
        return Self.exitStatus(status)
    }

    /// ``wait(timeout:)`` for async code: polls without holding a thread of the cooperative
    /// pool, which has one per core; a test blocking one there for seconds stalls the others
    /// (a 500 ms sleep took over 5 s in a full test run on two cores).
    public func wait(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        while reap(&status, WNOHANG) == 0 {
            guard ContinuousClock.now < deadline else { return killed() }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return Self.exitStatus(status)
    }

    /// Kills (SIGKILL) and reaps a process that outlived its wait: nil, as the waits report it.
    private func killed() -> Int32? {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        _ = reap(&status, 0)
        return nil
    }

    /// A `waitpid` status as the exit status, -1 for a process ended by a signal.
    private static func exitStatus(_ status: Int32) -> Int32 {
        (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
    }

    /// Whether the process has not exited yet (it is reaped if it has).
    public var isRunning: Bool {
        guard !reaped.withLock({ $0 }) else { return false }
        var status: Int32 = 0
        return reap(&status, WNOHANG) == 0
    }
}
