import Foundation
import MQTT
import TestSupport
import Testing

@testable import Bridge

/// Commit before acknowledge: a request whose storage write fails is not acknowledged.
@Suite("Storage failures over MQTT")
struct StorageFailureFlowTests {
    @Test("a register whose write cannot be committed (database locked) is answered unknown and changes nothing")
    func lockedDatabase() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") else {
            Issue.record("sqlite3 is not installed")
            return
        }
        try await withBridge { harness, observer async throws in
            // Held until released: a fixed time was outrun in full test runs (WriteLockHolder).
            let locker = try await WriteLockHolder(database: harness.databasePath, directory: harness.directory)
            defer { locker.stop() }
            let refused = try await observer.request(
                "accessory/register",
                #""id":"\#(Fixture.headphones)","capabilities":["audioSwitching"],"primary_source":"\#(Fixture.phone)""#,
                timeout: .seconds(30))
            #expect(refused["status"] == "error")
            #expect(refused["error"]?["code"] == "unknown", "\(refused.serialized)")
            #expect(
                observer.json(on: "aabridge/accessory/\(Fixture.headphonesTopic)").allSatisfy { $0["registration"] == "none" },
                "nothing published as if it had worked")
            await observer.waitFor("aabridge/bridge/log", timeout: .seconds(1)) { $0["level"] == "error" }
            #expect(await locker.release() == 0, "sqlite3: \(locker.log)")

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
            // Held until released: a fixed time was outrun in full test runs (WriteLockHolder).
            let locker = try await WriteLockHolder(database: harness.databasePath, directory: harness.directory)
            defer { locker.stop() }
            let refused = try await observer.request(
                "accessory/keys", #""id":"\#(Fixture.headphones)","irk":"\#(IdentityKeysFlowTests.irkHex)""#, timeout: .seconds(30))
            #expect(refused["error"]?["code"] == "unknown", "\(refused.serialized)")
            #expect(await locker.release() == 0, "sqlite3: \(locker.log)")

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
