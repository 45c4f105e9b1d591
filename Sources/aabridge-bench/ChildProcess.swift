import Foundation

/// A child process (mosquitto, the release `aabridge`) started with `posix_spawn` and reaped
/// with `waitpid`: the bench's own copy of the part of TestSupport's ChildProcess it needs,
/// so the shipped executable does not link the test support library.
final class ChildProcess: Sendable {
    let pid: pid_t

    /// Starts `path` with `arguments`; stdin is /dev/null, stdout and stderr go to `output`.
    init(path: String, arguments: [String], output: String = "/dev/null") throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        for fd in [STDOUT_FILENO, STDERR_FILENO] {
            posix_spawn_file_actions_addopen(&actions, fd, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        }
        // The child must not inherit a blocked signal mask from the spawning thread: it would
        // then ignore SIGTERM.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, path, &actions, &attributes, argv, environ)
        guard rc == 0 else { throw E2E.Failure("posix_spawn \(path): \(String(cString: strerror(rc)))") }
        pid = child
    }

    /// Sends SIGTERM and waits for the process to exit (SIGKILL after 10 seconds).
    func stop() {
        kill(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(10)
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            if Date() > deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                return
            }
            usleep(5_000)
        }
    }

    /// Whether the process has not exited yet (it is reaped if it has).
    var isRunning: Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == 0
    }
}

/// Loopback ports for the bench's broker.
enum FreePort {
    /// A port the kernel just handed out for 127.0.0.1 (bound and released at once).
    static func find() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw E2E.Failure("socket(): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw E2E.Failure("bind(): \(String(cString: strerror(errno)))") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Polls until something accepts TCP connections on 127.0.0.1:port or `timeout` seconds pass.
    static func waitUntilListening(port: Int, timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { return false }
            var address = loopback(port: port)
            let connected =
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                } == 0
            close(fd)
            if connected { return true }
            usleep(20_000)
        }
        return false
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
