import AccessoryKit
import Foundation
import LocalProcess
import Storage
import TestSupport
import Testing

@testable import Bridge

/// The runtime on a real PostgreSQL (``LocalPostgres``) and a real broker: a request is
/// committed there before it is answered, and another bridge on the same database starts
/// from it.
@Suite("The runtime on PostgreSQL")
struct PostgresFlowTests {
    static let password = "flow-Secret-9"

    @Test("a registration answered ok is in PostgreSQL; a new bridge on the same database restores it")
    func requestSurvivesANewBridge() async throws {
        let postgres = try LocalPostgres(.init(password: Self.password))
        let url = postgres.url
        let first = try BridgeHarness()
        defer { first.removeDirectory() }
        first.runner.openStore = { try PostgresStore(url: url, password: Self.password, origin: "first") }
        var registeredBefore: Int?
        try await first.run { observer in
            let response = try await observer.request(
                "accessory/register",
                #""id":"\#(Fixture.headphones)","capabilities":["audioSwitching"],"primary_source":"\#(Fixture.phone)""#)
            #expect(response["status"] == "ok")
            // Answered, so committed: another connection sees it now, before the bridge stops.
            let reader = try PostgresStore(url: url, password: Self.password)
            defer { reader.close() }
            let headphones = try #require(BluetoothAddress(Fixture.headphones))
            let registration = try reader.load().registrations[headphones]
            #expect(registration?.configuration.primaryAudioSourceDeviceIdentifier == BluetoothAddress(Fixture.phone))
            registeredBefore = try await observer.request("health")["data"]?["registered"]?.intValue
        }
        #expect(!FileManager.default.fileExists(atPath: first.databasePath), "no SQLite file beside PostgreSQL")

        // A new bridge, a new broker (no retained state from the first), the same database.
        let second = try BridgeHarness()
        defer { second.removeDirectory() }
        second.runner.openStore = { try PostgresStore(url: url, password: Self.password, origin: "second") }
        try await second.run { observer in
            let state = await observer.waitFor("aabridge/accessory/\(Fixture.headphonesTopic)") { $0["registration"] == "active" }
            #expect(state?["primary_source"] == .string(Fixture.phone))
            let health = try await observer.request("health")
            #expect(registeredBefore != nil)
            #expect(health["data"]?["registered"]?.intValue == registeredBefore)
        }
    }
}
