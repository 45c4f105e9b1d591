import Foundation
import LocalProcess
import Testing

/// Files the commands read, bounded before reading (issue 49): the real executable, under an
/// address-space limit of 2 GiB, against sparse files larger than that (`truncate`: no disk
/// used), `/dev/zero`, FIFOs, and a BlueZ name full of terminal escapes.
///
/// Before, the size was checked after reading (a 3 GiB file needed 3 GiB), `/dev/zero` was
/// "cannot read /dev/zero: Success", and a FIFO hung the command until a writer came.
@Suite("Files read bounded, special files refused by type")
struct BoundedFileCommandTests {
    final class Directory {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-bounded-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }

        /// A sparse file of `size` bytes (its blocks are never written).
        func sparse(_ name: String, size: Int) throws -> String {
            let path = url.appendingPathComponent(name).path
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            #expect(truncate(path, off_t(size)) == 0)
            return path
        }

        func fifo(_ name: String) -> String {
            let path = url.appendingPathComponent(name).path
            #expect(mkfifo(path, 0o600) == 0)
            return path
        }

        func file(_ name: String, _ text: String) throws -> String {
            let path = url.appendingPathComponent(name).path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
    }

    static let threeGiB = 3 << 30

    /// Runs the executable with at most 2 GiB of address space (a read of a 3 GiB file cannot
    /// succeed in it); a run still going after 15 s (a FIFO waited on) is killed: -2.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("bounded-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: output) }
        let child = try ChildProcess(
            path: "/bin/sh", arguments: ["-c", "ulimit -v 2097152; exec \"$0\" \"$@\"", try ExecutableTests.executable] + arguments,
            output: output.path)
        let status = child.wait(timeout: 15) ?? -2
        return (status, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }

    @Test("keys import-macos: a 3 GiB file is refused before it is read, /dev/zero and a FIFO by their type")
    func importMacOS() throws {
        let directory = try Directory()
        let large = try directory.sparse("export.txt", size: Self.threeGiB)
        var result = try Self.run(["keys", "import-macos", large])
        #expect(result.status == 2, "\(result.output)")
        #expect(result.output.contains("\(large): \(Self.threeGiB) bytes: not a Keychain export"), "\(result.output)")

        result = try Self.run(["keys", "import-macos", "/dev/zero"])
        #expect(result.status == 2, "\(result.output)")
        #expect(result.output.contains("cannot read /dev/zero: it is a character device, not a regular file"), "\(result.output)")

        let fifo = directory.fifo("export.fifo")
        result = try Self.run(["keys", "import-macos", fifo])
        #expect(result.status == 2, "a FIFO is refused, not waited on: \(result.output)")
        #expect(result.output.contains("cannot read \(fifo): it is a FIFO, not a regular file"), "\(result.output)")
    }

    @Test("validate: a 3 GiB mqtt.password_file or http.token_file is refused before it is read; a FIFO secret or configuration too")
    func secretsAndConfiguration() throws {
        let directory = try Directory()
        let large = try directory.sparse("secret", size: Self.threeGiB)
        let cases = [
            ("mqtt:\n  password_file: \(large)\n", "mqtt.password_file", "'\(large)' is larger than 64 KiB"),
            ("http:\n  listen: 127.0.0.1:8080\n  token_file: \(large)\n", "http.token_file", "'\(large)' is larger than 64 KiB"),
            ("mqtt:\n  password_file: /dev/zero\n", "mqtt.password_file", "it is a character device, not a regular file"),
            (
                "mqtt:\n  password_file: \(directory.fifo("secret.fifo"))\n", "mqtt.password_file",
                "it is a FIFO, not a regular file"
            ),
        ]
        for (index, (yaml, key, message)) in cases.enumerated() {
            let config = try directory.file("config-\(index).yaml", yaml)
            let result = try Self.run(["validate", "--config", config])
            #expect(result.status == 2, "\(yaml): \(result.output)")
            #expect(result.output.contains(key) && result.output.contains(message), "\(yaml): \(result.output)")
        }
        let fifo = directory.fifo("aabridge.yaml")
        let result = try Self.run(["validate", "--config", fifo])
        #expect(result.status == 2, "a FIFO configuration is refused, not waited on: \(result.output)")
        #expect(result.output.contains("it is a FIFO, not a regular file"), "\(result.output)")
    }

    @Test("keys import-bluez: an info that is a FIFO is refused at once; a name's terminal escapes are printed escaped")
    func importBlueZ() throws {
        let workspace = try KeysImportTests.Workspace()
        let config = try workspace.configuration(server: "mqtt://127.0.0.1:1")
        // No key: the command says so without a broker, printing the device's name.
        let hostile = "Bud\u{1B}]0;owned\u{07}\u{1B}[2J\u{1B}[31mred\u{9B}1A\u{202E}txt"
        try workspace.pair("D0:00:00:00:00:01", name: hostile, key: nil)
        var result = try KeysImportTests.run(["keys", "import-bluez", "--config", config, "--bluetooth-dir", workspace.bluetooth])
        #expect(result.output.contains("D0:00:00:00:00:01"), "\(result.output)")
        #expect(!result.output.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x9B || $0.value == 0x202E })
        #expect(result.output.contains(#""Bud\x1B]0;owned\x07\x1B[2J\x1B[31mred\x9B1A\u{202E}txt""#), "\(result.output)")

        let device = "\(workspace.bluetooth)/\(KeysImportTests.adapter)/E0:00:00:00:00:02"
        try FileManager.default.createDirectory(atPath: device, withIntermediateDirectories: true)
        #expect(mkfifo(device + "/info", 0o600) == 0)
        let start = ContinuousClock.now
        result = try KeysImportTests.run(["keys", "import-bluez", "--config", config, "--bluetooth-dir", workspace.bluetooth])
        #expect(result.status == 2, "\(result.output)")
        #expect(result.output.contains("cannot read '\(device)/info': it is a FIFO, not a regular file"), "\(result.output)")
        #expect(ContinuousClock.now - start < .seconds(10))
    }
}
