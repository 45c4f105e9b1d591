import Foundation
import LocalProcess
import Synchronization

/// A real `mosquitto` broker on a free loopback port, with a generated configuration, for
/// tests that must exercise MQTT for real. Plain, password-file, ACL and TLS listeners are
/// added on demand. The broker is stopped when ``stop()`` is called or the value is released.
public final class MosquittoBroker: Sendable {
    public struct Options: Sendable {
        /// Users for a password file; when set, anonymous clients are refused.
        public var users: [String: String]?
        /// An ACL file's text (mosquitto's `acl_file` syntax).
        public var acl: String?
        /// Adds a TLS listener with certificates from ``TestCertificates``.
        public var tls: TestCertificates?
        /// Require a client certificate on the TLS listener.
        public var requireClientCertificate: Bool
        /// A configuration for mosquitto's dynamic security plugin (its JSON file). Unlike
        /// `acl_file`, which lets every subscription through in mosquitto 2.0, the plugin can
        /// refuse a subscription in the SUBACK.
        public var dynamicSecurity: String?
        /// How often the broker publishes its `$SYS/broker/...` figures (mosquitto's
        /// `sys_interval`; its default is 10 s).
        public var sysIntervalSeconds: Int?

        public init(
            users: [String: String]? = nil, acl: String? = nil, tls: TestCertificates? = nil,
            requireClientCertificate: Bool = false, dynamicSecurity: String? = nil, sysIntervalSeconds: Int? = nil
        ) {
            self.users = users
            self.acl = acl
            self.tls = tls
            self.requireClientCertificate = requireClientCertificate
            self.dynamicSecurity = dynamicSecurity
            self.sysIntervalSeconds = sysIntervalSeconds
        }
    }

    /// Chosen at start-up (and kept across restarts); behind a lock only because a retry may
    /// pick new ones while the broker is being created.
    private let ports = Mutex<(plain: Int, tls: Int?)>((0, nil))
    public var port: Int { ports.withLock { $0.plain } }
    public var tlsPort: Int? { ports.withLock { $0.tls } }
    public let directory: URL
    private let options: Options
    private let process = Mutex<ChildProcess?>(nil)

    /// Writes the configuration and starts the broker; returns once it accepts connections.
    public init(_ options: Options = Options()) throws {
        self.options = options
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("mosquitto-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // A port handed out by the kernel can be taken again (by another test's broker or
        // by any client's ephemeral port) before mosquitto binds it: try a few ports.
        var attempt = 0
        while true {
            let chosen = (plain: try FreePort.find(), tls: options.tls == nil ? nil : try FreePort.find())
            ports.withLock { $0 = chosen }
            try writeConfiguration(options: options)
            do {
                try start()
                return
            } catch  where attempt < 3 {
                attempt += 1
            }
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    public var url: String { "mqtt://127.0.0.1:\(port)" }
    public var logFile: URL { directory.appendingPathComponent("mosquitto.log") }
    public var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// Starts (or restarts) the broker on the same ports.
    public func start() throws {
        let broker = try ChildProcess(
            path: try Self.executable(),
            arguments: ["-c", directory.appendingPathComponent("mosquitto.conf").path])
        process.withLock { $0 = broker }
        for port in [port, tlsPort].compactMap({ $0 }) {
            guard FreePort.waitUntilListening(port: port, timeout: 10) else {
                stop()
                throw BrokerError("mosquitto did not listen on 127.0.0.1:\(port); log:\n\(log)")
            }
        }
        // Something else may be listening on the port (taken since it was chosen): then our
        // mosquitto has exited with "address in use" instead of serving it.
        usleep(30_000)
        guard broker.isRunning else {
            process.withLock { $0 = nil }
            throw BrokerError("mosquitto exited at start (port \(port) taken?); log:\n\(log)")
        }
    }

    /// Stops the broker (SIGTERM) and waits for it to exit.
    public func stop() {
        let running = process.withLock { process -> ChildProcess? in
            defer { process = nil }
            return process
        }
        // A frozen broker would keep SIGTERM pending until it runs again.
        if let running { kill(running.pid, SIGCONT) }
        running?.stop()
    }

    /// Freezes the broker (SIGSTOP): connections stay open and writes to them succeed (into
    /// the kernel's buffers), but nothing is read, forwarded or acknowledged until ``thaw()``.
    /// A broker too busy to keep up, made deterministic.
    public func freeze() {
        if let pid = process.withLock({ $0?.pid }) { kill(pid, SIGSTOP) }
    }

    /// Lets a frozen broker run again (SIGCONT).
    public func thaw() {
        if let pid = process.withLock({ $0?.pid }) { kill(pid, SIGCONT) }
    }

    /// Rewrites the configuration (for example a new password file) to apply on the next start.
    public func reconfigure(_ options: Options) throws {
        try writeConfiguration(options: options)
    }

    private func writeConfiguration(options: Options) throws {
        var lines = [
            "persistence false",
            "log_dest file \(logFile.path)",
            "log_type error",
            "log_type warning",
            "log_type notice",
            "user root",
            "per_listener_settings false",
            "max_queued_messages 100000",
        ]
        if let users = options.users {
            let passwordFile = directory.appendingPathComponent("passwords")
            try? FileManager.default.removeItem(at: passwordFile)
            try Data().write(to: passwordFile)
            for (user, password) in users.sorted(by: { $0.key < $1.key }) {
                try Self.runTool("mosquitto_passwd", ["-b", passwordFile.path, user, password])
            }
            lines += ["allow_anonymous false", "password_file \(passwordFile.path)"]
        } else {
            lines.append("allow_anonymous true")
        }
        if let acl = options.acl {
            let aclFile = directory.appendingPathComponent("acl")
            try acl.write(to: aclFile, atomically: true, encoding: .utf8)
            lines.append("acl_file \(aclFile.path)")
        }
        if let dynamicSecurity = options.dynamicSecurity {
            let file = directory.appendingPathComponent("dynamic-security.json")
            try dynamicSecurity.write(to: file, atomically: true, encoding: .utf8)
            lines += ["plugin \(try Self.dynamicSecurityPlugin())", "plugin_opt_config_file \(file.path)"]
        }
        if let sysIntervalSeconds = options.sysIntervalSeconds { lines.append("sys_interval \(sysIntervalSeconds)") }
        lines.append("listener \(port) 127.0.0.1")
        if let tls = options.tls, let tlsPort {
            lines += [
                "listener \(tlsPort) 127.0.0.1",
                "cafile \(tls.caCertificate.path)",
                "certfile \(tls.serverCertificate.path)",
                "keyfile \(tls.serverKey.path)",
                "require_certificate \(options.requireClientCertificate)",
            ]
        }
        try (lines.joined(separator: "\n") + "\n")
            .write(to: directory.appendingPathComponent("mosquitto.conf"), atomically: true, encoding: .utf8)
    }

    static func dynamicSecurityPlugin() throws -> String {
        for path in ["/usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so", "/usr/lib/aarch64-linux-gnu/mosquitto_dynamic_security.so"]
        where FileManager.default.fileExists(atPath: path) {
            return path
        }
        throw BrokerError("mosquitto's dynamic security plugin is not installed (Debian: mosquitto)")
    }

    static func executable() throws -> String {
        for path in ["/usr/sbin/mosquitto", "/usr/bin/mosquitto", "/usr/local/sbin/mosquitto"]
        where FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        throw BrokerError("the mosquitto broker is not installed (apt-get install mosquitto)")
    }

    /// Runs a helper tool (mosquitto_passwd, openssl) and throws with its output on failure.
    static func runTool(_ name: String, _ arguments: [String]) throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("tool-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: output) }
        let tool = try ChildProcess(path: "/usr/bin/env", arguments: [name] + arguments, output: output.path)
        guard tool.wait() == 0 else {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            throw BrokerError("\(name) \(arguments.joined(separator: " ")) failed: \(text)")
        }
    }
}

public struct BrokerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
