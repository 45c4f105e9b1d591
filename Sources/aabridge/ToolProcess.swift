import Dispatch
import LocalProcess

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

/// Runs a short-lived tool (`bluetoothctl`) and collects what it prints, standard output and
/// standard error together, with a deadline.
///
/// Written on `posix_spawnp` and a pipe instead of Foundation's `Process`, whose
/// `waitUntilExit` spins a run loop and can hang on a Swift concurrency thread (see
/// LocalProcess.ChildProcess). The blocking part runs on a Dispatch thread of its own, so the
/// caller's task only awaits. The deadline matters: bluetoothctl waits for bluetoothd forever
/// ("Waiting to connect to bluetoothd...") when the daemon is not running.
enum ToolProcess {
    /// How the tool ended and what it printed.
    struct Output: Sendable {
        /// The exit status; a tool killed by a signal has none (nil).
        var status: Int32?
        var text: String
    }

    enum Failure: Error, Sendable {
        /// It could not be started: the reason (`No such file or directory` for a tool not on PATH).
        case cannotStart(String)
        /// It did not finish in time, and was killed.
        case timedOut
    }

    /// At most this much of the output is kept; bluetoothctl prints a few lines per device.
    static let maximumOutput = 1 << 20

    /// Runs `executable` (a path, or a name looked up on PATH) with `arguments`.
    static func run(_ executable: String, _ arguments: [String], timeout: Duration) async -> Result<Output, Failure> {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: runBlocking(executable, arguments, timeout: timeout))
            }
        }
    }

    static func runBlocking(_ executable: String, _ arguments: [String], timeout: Duration) -> Result<Output, Failure> {
        let deadline = ContinuousClock.now + timeout
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { return .failure(.cannotStart("pipe: \(String(cString: strerror(errno)))")) }
        let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
        defer { close(readEnd) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, STDOUT_FILENO)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, STDERR_FILENO)
        posix_spawn_file_actions_addclose(&actions, readEnd)
        posix_spawn_file_actions_addclose(&actions, writeEnd)
        // The command ignores SIGTERM/SIGINT to shut down gracefully; the tool must not inherit
        // that, nor a blocked mask. Its own process group keeps a terminal's Ctrl-C (sent to
        // the foreground group) from killing it in the middle of the last poll.
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = SpawnAttributes.with(newProcessGroup: true) { attributes in
            posix_spawnp(&pid, executable, &actions, &attributes, argv, environ)
        }
        close(writeEnd)
        guard spawned == 0 else { return .failure(.cannotStart(String(cString: strerror(spawned)))) }

        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var reading = true
        while reading {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return killed(pid) }
            var descriptor = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(clamping: max(1, Int64((remaining / .milliseconds(1)).rounded(.up))))
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            let count = read(readEnd, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                reading = false
            } else if output.count < maximumOutput {
                output += buffer.prefix(min(count, maximumOutput - output.count))
            }
        }
        // The tool closed its output; it is about to exit (or has).
        var status: Int32 = 0
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped < 0 && errno != EINTR { return .failure(.cannotStart("waitpid: \(String(cString: strerror(errno)))")) }
            guard ContinuousClock.now < deadline else { return killed(pid) }
            usleep(2_000)
        }
        let exitStatus: Int32? = (status & 0x7f) == 0 ? (status >> 8) & 0xff : nil
        return .success(Output(status: exitStatus, text: String(decoding: output, as: UTF8.self)))
    }

    private static func killed(_ pid: pid_t) -> Result<Output, Failure> {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return .failure(.timedOut)
    }
}
