import Foundation
import Testing

@testable import Configuration

/// `storage.backend`, `storage.url` and the PostgreSQL password: each rule with its key path,
/// and the password never shown.
@Suite("storage: the SQLite default and the PostgreSQL backend")
struct StorageConfigurationTests {
    static let secret = "Pg-Secret-7!q"
    static let url = "postgresql://aabridge@db.example:5432/aabridge"

    @Test("SQLite stays the default; backend postgresql takes a url and a password")
    func postgresql() throws {
        let defaults = try ConfigurationTestSupport.load("")
        #expect(defaults.storage.backend == .sqlite)
        #expect(defaults.storage.url == nil)
        #expect(defaults.storage.location == "data/aabridge.sqlite3")
        let configuration = try ConfigurationTestSupport.load(
            "storage:\n  backend: postgresql\n  url: \(Self.url)\n  password: \"\(Self.secret)\"\n")
        #expect(configuration.storage.backend == .postgresql)
        #expect(configuration.storage.url == Self.url)
        #expect(configuration.storage.password?.revealed == Self.secret)
        #expect(configuration.storage.location == Self.url)
        let keywords = try ConfigurationTestSupport.load("storage:\n  backend: postgresql\n  url: host=127.0.0.1 port=5433 dbname=x\n")
        #expect(keywords.storage.url == "host=127.0.0.1 port=5433 dbname=x")
    }

    @Test("password_file and the environment's variables set the same keys")
    func passwordFileAndEnvironment() throws {
        let file = try ConfigurationTestSupport.temporaryFile(Array("\(Self.secret)\n".utf8), name: "pg-secret")
        defer { ConfigurationTestSupport.remove(file) }
        let fromFile = try ConfigurationTestSupport.load("storage:\n  backend: postgresql\n  url: \(Self.url)\n  password_file: \(file)\n")
        #expect(fromFile.storage.password?.revealed == Self.secret)
        #expect(fromFile.storage.passwordFile == file)
        let fromEnvironment = try ConfigurationTestSupport.load(
            "",
            environment: [
                "AABRIDGE_STORAGE_BACKEND": "postgresql", "AABRIDGE_STORAGE_URL": Self.url, "AABRIDGE_STORAGE_PASSWORD": "null",
            ])
        #expect(fromEnvironment.storage.backend == .postgresql)
        #expect(fromEnvironment.storage.url == Self.url)
        // A secret from the environment is taken literally.
        #expect(fromEnvironment.storage.password?.revealed == "null")
        let fileFromEnvironment = try ConfigurationTestSupport.load(
            "storage:\n  backend: postgresql\n  url: \(Self.url)\n", environment: ["AABRIDGE_STORAGE_PASSWORD_FILE": file])
        #expect(fileFromEnvironment.storage.password?.revealed == Self.secret)
        // The Docker image's AABRIDGE_STORAGE_PATH does not stand in the way of PostgreSQL.
        let withPath = try ConfigurationTestSupport.load(
            "storage:\n  backend: postgresql\n  url: \(Self.url)\n", environment: ["AABRIDGE_STORAGE_PATH": "/data/aabridge.sqlite3"])
        #expect(withPath.storage.backend == .postgresql)
    }

    @Test(
        "each mistake is reported at its key path",
        arguments: [
            ("storage:\n  backend: postgresql\n", "storage.url", "is required with backend postgresql"),
            ("storage:\n  url: postgresql://h/db\n", "storage.url", "storage.url is only for backend postgresql"),
            ("storage:\n  password: x\n", "storage.password", "storage.password is only for backend postgresql"),
            ("storage:\n  backend: postgresql\n  url: \"\"\n", "storage.url", "must not be empty"),
            (
                "storage:\n  backend: postgresql\n  url: postgresql://h/db?bogus=1\n", "storage.url",
                "is not a valid PostgreSQL connection string"
            ),
            ("storage:\n  backend: postgresql\n  url: host=h 'oops\n", "storage.url", "is not a valid PostgreSQL connection string"),
            ("storage:\n  backend: postgres\n", "storage.backend", "unknown value 'postgres'; allowed: sqlite, postgresql"),
            (
                "storage:\n  backend: postgresql\n  url: postgresql://h/db\n  password: a\n  password_file: /b\n", "storage.password",
                "give password or password_file, not both"
            ),
            ("storage:\n  hostname: db\n", "storage.hostname", "unknown key"),
        ])
    func mistakes(yaml: String, path: String, message: String) {
        let issues = ConfigurationTestSupport.issues(yaml)
        #expect(issues.map(\.path) == [path], "\(issues)")
        #expect(issues.first?.message.contains(message) == true, "\(issues)")
    }

    @Test("a password inside the URL is used, warned about, and never shown in bridge/info or the validate report")
    func inlinePassword() throws {
        let yaml = "storage:\n  backend: postgresql\n  url: postgresql://aabridge:\(Self.secret)@db.example/aabridge\n"
        let configuration = try ConfigurationLoader.load(yaml: yaml, hostname: "h").get()
        #expect(configuration.warnings.map(\.path) == ["storage.url"])
        #expect(configuration.warnings.first?.message.contains("storage.password_file") == true)
        #expect(configuration.storage.url?.contains(Self.secret) == true)
        #expect(configuration.storage.location == "postgresql://aabridge@db.example/aabridge")
        let summary = configuration.summary.serialized
        #expect(summary.contains(#""url":"postgresql://aabridge@db.example/aabridge""#))
        #expect(!summary.contains(Self.secret))
        #expect(configuration.warnings.allSatisfy { !$0.description.contains(Self.secret) })
    }

    @Test("bridge/info shows the backend, the URL and whether a password is set, never the password")
    func summary() throws {
        let configuration = try ConfigurationTestSupport.load(
            "storage:\n  backend: postgresql\n  url: \(Self.url)\n", environment: ["AABRIDGE_STORAGE_PASSWORD": Self.secret])
        let summary = configuration.summary.serialized
        #expect(
            summary.contains(
                #""storage":{"backend":"postgresql","password_file":null,"password_set":true,"url":"postgresql://aabridge@db.example:5432/aabridge"}"#
            ))
        #expect(!summary.contains(Self.secret))
        var dumped = ""
        dump(configuration, to: &dumped)
        #expect(!dumped.contains(Self.secret))
        #expect(!String(describing: configuration).contains(Self.secret))
    }
}
