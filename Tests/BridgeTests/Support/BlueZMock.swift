import Dispatch
import Foundation
import TestSupport

/// BlueZ on a private bus (Tests/BlueZ/bluez_mock.py: a dbus-daemon of its own and
/// python-dbusmock's bluez5 template), driven one command a line. Its bus address is what the
/// bridge under test takes as its system bus. No real adapter or bluetoothd is involved.
final class BlueZMock: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The private bus (`unix:path=…`), for `DBUS_SYSTEM_BUS_ADDRESS`.
    let address: String
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    /// Commands and their answers, one at a time, off the test's own tasks (the reads block).
    private let queue = DispatchQueue(label: "aabridge.test.bluez-mock")

    /// - Parameter monitor: whether its adapters offer AdvertisementMonitorManager1 (passive scanning).
    init(monitor: Bool = true) throws {
        let python = Repository.file(".build/bluez-mock-venv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw Failure(description: "no \(python): scripts/bluez-mock-venv makes it (scripts/test runs it)")
        }
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [Repository.file("Tests/BlueZ/bluez_mock.py")] + (monitor ? [] : ["--no-monitor"])
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let ready = Self.line(output.fileHandleForReading)
        guard let ready, ready.hasPrefix("ready ") else {
            process.terminate()
            throw Failure(description: "the mock did not start: \(ready ?? "no output")")
        }
        address = String(ready.dropFirst("ready ".count))
    }

    /// Sends one command; its answer's value, or a failure with the mock's words.
    @discardableResult
    func send(_ command: String) async throws -> String {
        let (input, output) = (input.fileHandleForWriting, output.fileHandleForReading)
        let answer: String? = await withCheckedContinuation { continuation in
            queue.async {
                input.write(Data((command + "\n").utf8))
                continuation.resume(returning: Self.line(output))
            }
        }
        guard let answer, answer.hasPrefix("ok") else { throw Failure(description: "\(command): \(answer ?? "the mock ended")") }
        return String(answer.dropFirst(2)).trimmingCharacters(in: .whitespaces)
    }

    /// Ends the mock, its BlueZ and its bus.
    func stop() {
        input.fileHandleForWriting.write(Data("quit\n".utf8))
        let process = self.process
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning { process.terminate() }
    }

    private static func line(_ handle: FileHandle) -> String? {
        var bytes: [UInt8] = []
        while true {
            let byte = handle.readData(ofLength: 1)
            guard let first = byte.first else { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if first == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(first)
        }
    }
}
