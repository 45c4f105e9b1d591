import Foundation
import Testing

@testable import Configuration

/// Every file the configuration names (`mqtt.ca`, `cert`, `key`, `password_file`,
/// `storage.path`) is checked by `validate` as `run` will use it: it exists, is a regular
/// file and is readable, reported at its key path; TLS files need an `mqtts://` server.
@Suite("Files named by the configuration")
struct ConfigurationFileTests {
    /// A directory with one readable file, `file.pem`, and one subdirectory, `dir`.
    final class Files {
        let root: String
        var file: String { root + "/file.pem" }
        var directory: String { root + "/dir" }
        var missing: String { root + "/missing.pem" }

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-files-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: root + "/dir", withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: root + "/file.pem", contents: Data("pem\n".utf8)))
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }
    }

    @Test("a TLS file that does not exist or is a directory is refused at its key path")
    func tlsFiles() throws {
        let files = try Files()
        let tls = "mqtt:\n  server: mqtts://broker:8883\n"
        let cases: [(yaml: String, path: String, message: String)] = [
            (tls + "  ca: \(files.missing)\n", "mqtt.ca", "cannot read '\(files.missing)': no such file"),
            (tls + "  ca: \(files.directory)\n", "mqtt.ca", "it is a directory"),
            (tls + "  ca: /dev/null\n", "mqtt.ca", "not a regular file"),
            (tls + "  cert: \(files.missing)\n  key: \(files.file)\n", "mqtt.cert", "no such file"),
            (tls + "  cert: \(files.file)\n  key: \(files.missing)\n", "mqtt.key", "no such file"),
            ("mqtt:\n  password_file: /dev/null\n", "mqtt.password_file", "not a regular file"),
            ("storage:\n  path: \(files.directory)\n", "storage.path", "is a directory"),
        ]
        for testCase in cases {
            let issues = ConfigurationTestSupport.issues(testCase.yaml)
            #expect(issues.map(\.path) == [testCase.path], "\(testCase.yaml): \(issues)")
            #expect(issues.first?.message.contains(testCase.message) == true, "\(issues)")
            #expect(issues.first?.origin != nil, "the line is named")
        }
    }

    @Test("ca, cert and key with a plain mqtt:// server are refused")
    func tlsFilesNeedMqtts() throws {
        let files = try Files()
        for key in ["ca", "cert", "key"] {
            let pair = key == "cert" ? "  key: \(files.file)\n" : key == "key" ? "  cert: \(files.file)\n" : ""
            let issues = ConfigurationTestSupport.issues("mqtt:\n  server: mqtt://broker:1883\n  \(key): \(files.file)\n" + pair)
            #expect(issues.contains { $0.path == "mqtt.\(key)" && $0.message.contains("needs an mqtts:// server") }, "\(key): \(issues)")
        }
        // The default server is mqtt:// too.
        #expect(ConfigurationTestSupport.issues("mqtt:\n  ca: \(files.file)\n").map(\.path) == ["mqtt.ca"])
    }

    @Test("an environment override naming a missing file is refused at the key path")
    func environmentOverride() throws {
        let files = try Files()
        let issues = ConfigurationTestSupport.issues(
            "mqtt:\n  server: mqtts://broker:8883\n", environment: ["AABRIDGE_MQTT_CA": files.missing])
        #expect(issues.map(\.path) == ["mqtt.ca"], "\(issues)")
        #expect(issues.first?.origin == .environment(variable: "AABRIDGE_MQTT_CA"))
    }

    @Test("readable regular files with an mqtts:// server are accepted; a database not yet created is fine")
    func accepted() throws {
        let files = try Files()
        let configuration = try ConfigurationTestSupport.load(
            "mqtt:\n  server: mqtts://broker:8883\n  ca: \(files.file)\n  cert: \(files.file)\n  key: \(files.file)\n"
                + "storage:\n  path: \(files.root)/new/aabridge.sqlite3\n")
        #expect(configuration.mqtt.ca == files.file)
        #expect(configuration.mqtt.usesTLS)
    }
}
