import Foundation

/// A throw-away certificate authority with a server certificate for 127.0.0.1/localhost and
/// a client certificate, made with the `openssl` command line tool.
public struct TestCertificates: Sendable {
    public let directory: URL
    public var caCertificate: URL { directory.appendingPathComponent("ca.crt") }
    public var serverCertificate: URL { directory.appendingPathComponent("server.crt") }
    public var serverKey: URL { directory.appendingPathComponent("server.key") }
    public var clientCertificate: URL { directory.appendingPathComponent("client.crt") }
    public var clientKey: URL { directory.appendingPathComponent("client.key") }

    /// Generates a CA (`name` in its subject) and certificates signed by it.
    public init(name: String = "aabridge test CA") throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("certs-\(UUID().uuidString)")
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = { (file: String) in directory.appendingPathComponent(file).path }
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try MosquittoBroker.runTool(
            "openssl",
            ["req", "-x509"] + ec + [
                "-keyout", path("ca.key"), "-out", path("ca.crt"), "-days", "2", "-subj", "/CN=\(name)",
            ])
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(toFile: path("san.ext"), atomically: true, encoding: .utf8)
        for (role, subject) in [("server", "/CN=localhost"), ("client", "/CN=aabridge-client")] {
            try MosquittoBroker.runTool(
                "openssl",
                ["req"] + ec + [
                    "-keyout", path("\(role).key"), "-out", path("\(role).csr"), "-subj", subject,
                ])
            try MosquittoBroker.runTool(
                "openssl",
                [
                    "x509", "-req", "-in", path("\(role).csr"), "-CA", path("ca.crt"), "-CAkey", path("ca.key"),
                    "-CAcreateserial", "-out", path("\(role).crt"), "-days", "2", "-extfile", path("san.ext"),
                ])
        }
    }
}
