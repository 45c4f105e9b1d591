import AccessoryKit
import Foundation
import Testing

@testable import Storage

/// kill -9 durability: a child process (this very test binary, running only
/// `crashChildWriter`) commits writes and prints each acknowledged id; the parent kills it with
/// SIGKILL at a random moment and checks that every acknowledged write is in the database.
///
/// SIGKILL loses the process, not the kernel's page cache, so this proves "committed before
/// acknowledged" and crash consistency; power-cut durability rests on `synchronous=FULL`
/// (one fdatasync per commit, checked by `pragmas` and visible with `strace -c`).
@Suite("Crash durability: every acknowledged write survives kill -9")
struct CrashDurabilityTests {
    typealias F = StoreFixtures
    static let childVariable = "AABRIDGE_STORAGE_CRASH_CHILD"

    static func writes(_ n: UInt64) -> [StorageWrite] {
        [.upsertAccessory(F.accessory(n)), .upsertRegistration(F.address(n), F.registration(n))]
    }

    @Test("child: commit and acknowledge until killed", .enabled(if: ProcessInfo.processInfo.environment[childVariable] != nil))
    func crashChildWriter() throws {
        let path = try #require(ProcessInfo.processInfo.environment[Self.childVariable])
        let store = try AccessoryStore(path: path)
        let deadline = ContinuousClock.now + .seconds(60) // never outlive a parent that died
        var n: UInt64 = 1
        while ContinuousClock.now < deadline {
            try store.apply(Self.writes(n))
            // write(2), not print: an acknowledgement must leave the process at once, unbuffered.
            let line = Array("ack \(n)\n".utf8)
            _ = line.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            n += 1
        }
    }

    /// Runs the child until it has acknowledged `target` writes (plus a random delay), kills
    /// it with SIGKILL and returns every id it acknowledged.
    static func runAndKill(path: String, target: Int) throws -> [UInt64] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--testing-library", "swift-testing", "--filter", "CrashDurabilityTests/crashChildWriter"]
        process.environment = ProcessInfo.processInfo.environment.merging([childVariable: path]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        var killed = false
        let reader = output.fileHandleForReading
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let data = reader.availableData
            if data.isEmpty { break } // EOF: the child is gone
            text += String(decoding: data, as: UTF8.self)
            if !killed && (text.components(separatedBy: "ack ").count - 1 >= target || ContinuousClock.now > deadline) {
                // A random moment: usually in the middle of the next commit.
                usleep(UInt32.random(in: 0...3000))
                kill(process.processIdentifier, SIGKILL)
                killed = true
            }
        }
        process.waitUntilExit()
        #expect(
            process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL,
            "the child ended by itself: \(text.suffix(400))")
        return text.split(separator: "\n").compactMap { line in
            line.hasPrefix("ack ") ? UInt64(line.dropFirst(4)) : nil
        }
    }

    @Test("parent: every write acknowledged before SIGKILL is present after reopening", arguments: 1...3)
    func acknowledgedWritesSurviveKill(round: Int) async throws {
        let directory = TemporaryDirectory()
        let path = directory.database()
        let target = Int.random(in: 20...300)
        // Blocking pipe reads stay off the cooperative pool.
        let acknowledged = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try Self.runAndKill(path: path, target: target) })
            }
        }
        #expect(acknowledged.count >= target)
        #expect(acknowledged == Array(1...UInt64(acknowledged.count)))
        let store = try AccessoryStore(path: path)
        let state = try store.load()
        let stored = Set(state.accessories.map(\.id))
        let last = UInt64(acknowledged.count)
        for n in acknowledged {
            #expect(stored.contains(F.address(n)), "acknowledged write \(n) of \(last) is missing")
            #expect(state.registrations[F.address(n)] == F.registration(n))
        }
        // At most the one commit in flight when it died went through unacknowledged.
        #expect(stored.count == acknowledged.count || stored == Set((1...last + 1).map(F.address)))
        #expect(Set(state.registrations.keys) == stored)
        #expect(store.integrityCheck() == [])
    }
}
