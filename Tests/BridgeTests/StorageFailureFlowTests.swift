import Foundation
import LocalProcess
import MQTT
import TestSupport
import Testing

@testable import Bridge

/// Commit before acknowledge: a request whose storage write fails is not acknowledged.
@Suite("Storage failures over MQTT")
struct StorageFailureFlowTests {
    /// Another process takes the database's write lock and holds it until the test kills it
    /// (60 s at most), far longer than the store's 5 s busy timeout; returns once it has it.
    static func holdWriteLock(_ harness: BridgeHarness) async throws -> ChildProcess {
        // The marker file appears once the lock is held: a fixed wait was too short for a
        // loaded machine (the request then went through before sqlite3 had the lock). And the
        // lock is held until the test has its answer: held for a fixed 6.5 s, a request that
        // reached the store more than 1.5 s late (a full test run on two cores) waited it out
        // within the busy timeout and succeeded.
        let marker = harness.directory.appendingPathComponent("locked").path
        let locker = try ChildProcess(
            path: "/usr/bin/sqlite3",
            arguments: [harness.databasePath, "BEGIN EXCLUSIVE;", ".shell touch '\(marker)'", ".shell sleep 60", "COMMIT;"],
            output: harness.directory.appendingPathComponent("lock.log").path)
        #expect(await eventually(timeout: .seconds(5)) { FileManager.default.fileExists(atPath: marker) }, "sqlite3 holds the lock")
        return locker
    }

    @Test("a register whose write cannot be committed (database locked) is answered unknown and changes nothing")
    func lockedDatabase() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") else {
            Issue.record("sqlite3 is not installed")
            return
        }
        try await withBridge { harness, observer async throws in
            let locker = try await Self.holdWriteLock(harness)
            defer { locker.stop(signal: SIGKILL) }
            let refused = try await observer.request(
                "accessory/register",
                #""id":"\#(Fixture.headphones)","capabilities":["audioSwitching"],"primary_source":"\#(Fixture.phone)""#,
                timeout: .seconds(9))
            #expect(refused["status"] == "error")
            #expect(refused["error"]?["code"] == "unknown", "\(refused.serialized)")
            #expect(
                observer.json(on: "aabridge/accessory/\(Fixture.headphonesTopic)").allSatisfy { $0["registration"] == "none" },
                "nothing published as if it had worked")
            await observer.waitFor("aabridge/bridge/log", timeout: .seconds(1)) { $0["level"] == "error" }
            locker.stop(signal: SIGKILL)

            // The engine kept its state: not registered, and the same request now works.
            let current = try await observer.request("accessory/current", #""id":"\#(Fixture.headphones)""#)
            #expect(current["error"]?["code"] == "invalidRequest")
            let registered = try await observer.request(
                "accessory/register",
                #""id":"\#(Fixture.headphones)","capabilities":["audioSwitching"],"primary_source":"\#(Fixture.phone)""#)
            #expect(registered["status"] == "ok")
        }
    }

    @Test("keys whose write cannot be committed are answered unknown and not used: nothing changes")
    func keysNotStored() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") else {
            Issue.record("sqlite3 is not installed")
            return
        }
        try await withBridge { harness, observer async throws in
            let locker = try await Self.holdWriteLock(harness)
            defer { locker.stop(signal: SIGKILL) }
            let refused = try await observer.request(
                "accessory/keys", #""id":"\#(Fixture.headphones)","irk":"\#(IdentityKeysFlowTests.irkHex)""#, timeout: .seconds(9))
            #expect(refused["error"]?["code"] == "unknown", "\(refused.serialized)")
            locker.stop(signal: SIGKILL)

            // The key was not taken: a rotating address of it is still nobody.
            let address = try IdentityKeysFlowTests.resolvableAddress(prand: 0x616161)
            try await IdentityKeysFlowTests.sighting(observer, from: address)
            _ = try await observer.request("accessory/rename", #""id":"\#(Fixture.headphones)","name":"Unchanged""#)
            let state = await observer.waitFor("aabridge/accessory/\(Fixture.headphonesTopic)") { $0["name"] == "Unchanged" }
            #expect(state?["keys"]?["irk"] == false)
            #expect(state?["address"] != .string(address))
        }
    }
}
