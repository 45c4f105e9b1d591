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

/// A real PostgreSQL server of its own, for the tests and the benchmarks: `initdb` into a
/// fresh temporary directory, `postgres` on a free 127.0.0.1 port (and a Unix socket in that
/// directory), one database created. Removed, directory and all, by ``stop()`` or when released.
///
/// `initdb` and `postgres` refuse to run as root, and CI runs as root: then both run as the
/// `postgres` system user (Debian's package creates it) through `setpriv`, which execs the
/// server, so ``kill()`` signals the postmaster itself.
public final class LocalPostgres: Sendable {
    public struct Options: Sendable {
        /// The role the tests connect as (the cluster's superuser).
        public var user: String
        /// When set, TCP connections must give this password (`scram-sha-256`); otherwise
        /// every connection is trusted. The Unix socket is always trusted (to create the database).
        public var password: String?
        /// The database created at start.
        public var database: String
        /// `fsync` for the server. Off by default: the tests kill the server, never the
        /// machine, so what the server wrote is in the page cache either way, and each commit
        /// would otherwise wait for the test machine's disk.
        public var fsync: Bool

        public init(user: String = "aabridge", password: String? = nil, database: String = "aabridge", fsync: Bool = false) {
            self.user = user
            self.password = password
            self.database = database
            self.fsync = fsync
        }
    }

    public let options: Options
    /// The temporary directory: the data directory (`data`), the socket and `postgres.log`.
    public let directory: String
    private let ports = Mutex(0)
    private let process = Mutex<ChildProcess?>(nil)
    private let binaries: String

    /// The port, kept across restarts.
    public var port: Int { ports.withLock { $0 } }

    /// A libpq URL for the database, without the password (give it separately).
    public var url: String { "postgresql://\(options.user)@127.0.0.1:\(port)/\(options.database)" }

    /// The server's log.
    public var log: String { (try? String(contentsOfFile: directory + "/postgres.log", encoding: .utf8)) ?? "" }

    /// Creates the cluster, starts the server and creates the database; returns once it accepts connections.
    public init(_ options: Options = Options()) throws {
        self.options = options
        binaries = try Self.binaryDirectory()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("postgres-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        do {
            try Self.giveToServerUser(directory)
            try initialize()
            var attempt = 0
            while true {
                // A port handed out by the kernel can be taken again before the server binds it.
                let chosen = try FreePort.find()
                ports.withLock { $0 = chosen }
                do {
                    try start()
                    break
                } catch  where attempt < 3 {
                    attempt += 1
                }
            }
            try run("createdb", ["-h", directory, "-p", String(port), "-U", options.user, options.database])
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// Starts the server on the same port and data directory (after ``kill()`` or a restart).
    /// A server killed with SIGKILL leaves backends that exit once they notice; the start is
    /// retried until they have.
    public func start() throws {
        let deadline = Date().addingTimeInterval(30)
        while true {
            // The log is appended to across starts; only this attempt's part tells why it failed.
            let logStart = log.utf8.count
            let server = try ChildProcess(
                path: command(binaries + "/postgres").path,
                arguments: command(binaries + "/postgres").arguments + [
                    "-D", directory + "/data", "-p", String(port), "-k", directory, "-c", "listen_addresses=127.0.0.1",
                    "-c", "fsync=\(options.fsync ? "on" : "off")", "-c", "max_connections=100", "-c", "logging_collector=off",
                ],
                output: directory + "/postgres.log")
            process.withLock { $0 = server }
            while server.isRunning && Date() < deadline {
                if (try? run("pg_isready", ["-q", "-h", "127.0.0.1", "-p", String(port), "-t", "1"])) != nil { return }
                usleep(50_000)
            }
            process.withLock { $0 = nil }
            server.stop(signal: SIGKILL)
            // The port was taken since it was chosen: waiting will not free it (the caller picks another).
            let attemptLog = String(decoding: log.utf8.dropFirst(logStart), as: UTF8.self)
            if attemptLog.contains("could not bind IPv4 address") || attemptLog.contains("Address already in use") {
                throw LocalProcessError("postgres could not listen on 127.0.0.1:\(port); log:\n\(log)")
            }
            guard Date() < deadline else {
                throw LocalProcessError("postgres did not accept connections on 127.0.0.1:\(port); log:\n\(log)")
            }
            usleep(100_000)
        }
    }

    /// Stops the server (fast shutdown: open sessions are ended, everything committed stays)
    /// and starts it again on the same port and data directory.
    public func restart() throws {
        shutDown()
        try start()
    }

    /// Kills the server (SIGKILL), as a crash of its machine would: the postmaster and every
    /// process it started, so no backend keeps serving an open session. The data directory
    /// stays for ``start()``.
    public func kill() {
        let running = process.withLock { process -> ChildProcess? in
            defer { process = nil }
            return process
        }
        guard let running else { return }
        // Frozen first, so it starts no process while its children are collected and killed.
        send(SIGSTOP, to: running.pid)
        for child in Self.children(of: running.pid) { send(SIGKILL, to: child) }
        running.stop(signal: SIGKILL)
    }

    /// The processes whose parent is `pid` (from `/proc`).
    private static func children(of pid: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let child = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            // After "pid (comm) ": the state, then the parent's pid.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == pid ? child : nil
        }
    }

    /// Stops the server (fast shutdown) and removes the directory. Idempotent.
    public func stop() {
        shutDown()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Fast shutdown (SIGINT), waited for.
    private func shutDown() {
        let running = process.withLock { process -> ChildProcess? in
            defer { process = nil }
            return process
        }
        running?.stop(signal: SIGINT, timeout: 30)
    }

    // MARK: Setting up

    private func initialize() throws {
        var arguments = [
            "-D", directory + "/data", "-U", options.user, "-E", "UTF8", "--locale=C.UTF-8", "--no-sync", "--no-instructions",
        ]
        if let password = options.password {
            let file = directory + "/password"
            try password.write(toFile: file, atomically: false, encoding: .utf8)
            try Self.giveToServerUser(file)
            arguments += ["--auth-local=trust", "--auth-host=scram-sha-256", "--pwfile=\(file)"]
        } else {
            arguments += ["--auth=trust"]
        }
        let initdb = command(binaries + "/initdb")
        try Self.runChecked(initdb.path, initdb.arguments + arguments, log: directory + "/initdb.log")
        if options.password != nil { try? FileManager.default.removeItem(atPath: directory + "/password") }
    }

    /// Runs a client tool of the server's (`createdb`, `pg_isready`); throws with its output on failure.
    private func run(_ tool: String, _ arguments: [String]) throws {
        try Self.runChecked(binaries + "/" + tool, arguments, log: directory + "/\(tool).log")
    }

    private static func runChecked(_ path: String, _ arguments: [String], log: String) throws {
        try? FileManager.default.removeItem(atPath: log)
        let child = try ChildProcess(path: path, arguments: arguments, output: log)
        guard child.wait() == 0 else {
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw LocalProcessError("\(path) \(arguments.joined(separator: " ")) failed: \(output)")
        }
    }

    /// The server's programs run as the `postgres` user when this process is root.
    private func command(_ program: String) -> (path: String, arguments: [String]) {
        guard geteuid() == 0 else { return (program, []) }
        return ("/usr/bin/setpriv", ["--reuid=postgres", "--regid=postgres", "--init-groups", program])
    }

    /// Makes `path` the `postgres` user's when this process is root.
    private static func giveToServerUser(_ path: String) throws {
        guard geteuid() == 0 else { return }
        guard let user = getpwnam("postgres") else {
            throw LocalProcessError("running as root, but there is no postgres user to run the server as (apt-get install postgresql)")
        }
        guard chown(path, user.pointee.pw_uid, user.pointee.pw_gid) == 0 else {
            throw LocalProcessError("chown \(path) to postgres: \(String(cString: strerror(errno)))")
        }
    }

    /// Where `initdb` and `postgres` are: Debian's newest `/usr/lib/postgresql/<version>/bin`
    /// (Debian keeps the server's programs off `PATH`), else a conventional bin directory.
    static func binaryDirectory() throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted(by: >)
        for version in versions where FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/postgres") {
            return "\(root)/\(version)/bin"
        }
        for candidate in ["/usr/local/pgsql/bin", "/usr/local/bin", "/usr/bin"]
        where FileManager.default.isExecutableFile(atPath: candidate + "/postgres")
            && FileManager.default.isExecutableFile(atPath: candidate + "/initdb")
        {
            return candidate
        }
        throw LocalProcessError("the PostgreSQL server is not installed (apt-get install postgresql)")
    }
}

/// `kill(2)`, outside ``LocalPostgres`` whose own `kill()` hides it.
private func send(_ signal: Int32, to pid: pid_t) {
    kill(pid, signal)
}
