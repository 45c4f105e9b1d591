import AccessoryKit
import Foundation
import Testing

@testable import Storage

@Suite("AccessoryStore: writes, loads and the connection's durability settings")
struct AccessoryStoreTests {
    typealias F = StoreFixtures

    @Test("a new store creates its directory and file and loads an empty state")
    func createsDatabase() throws {
        let directory = TemporaryDirectory()
        let path = directory.database()
        let store = try AccessoryStore(path: path)
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(!store.isReadOnly)
        #expect(try store.load() == RestoredState())
        #expect(try store.loadSources().isEmpty)
    }

    @Test("every field of accessories and registrations round-trips, set and unset")
    func roundTrip() throws {
        let directory = TemporaryDirectory()
        let store = try AccessoryStore(path: directory.database())
        try store.apply(F.everything)
        let state = try store.load()
        #expect(state == F.everythingState)
        // Spot checks so a failure names the field.
        let full = try #require(state.accessories.first { $0.id == F.full.id })
        #expect(full.displayName == F.full.displayName)
        #expect(full.descriptor == F.fullDescriptor)
        #expect(full.bluetoothIdentifier == F.full.bluetoothIdentifier)
        #expect(full.ssid == "AcmeNet-7")
        #expect(full.bluetoothTransportBridgingIdentifier == [1, 2, 3, 4, 5, 6])
        let bare = try #require(state.accessories.first { $0.id == F.bare.id })
        #expect(bare.ssid == nil)
        #expect(bare.bluetoothTransportBridgingIdentifier == nil)
        #expect(bare.bluetoothIdentifier == Accessory.bluetoothIdentifier(for: F.bare.id))
        #expect(state.accessories.first { $0.id == F.unauthorized.id }?.bluetoothTransportBridgingIdentifier == [])
        #expect(state.registrations[F.bare.id]?.isInvalidated == true)
        #expect(state.registrations[F.bare.id]?.configuration.devicePlacement == nil)
        #expect(state.registrations[F.unauthorized.id]?.configuration.secondaryAudioSourceDeviceIdentifier == nil)
        #expect(
            state.registrations[F.unauthorized.id]?.configuration.primaryAudioSourceDeviceIdentifier
                == BluetoothAddress(rawValue: 0xFFFF_FFFF_FFFF))
    }

    @Test(
        "every placement, capability set and authorization state round-trips",
        arguments: AccessoryControlDevice.Placement.allCases.map(Optional.some) + [nil])
    func placements(placement: AccessoryControlDevice.Placement?) throws {
        let directory = TemporaryDirectory()
        let store = try AccessoryStore(path: directory.database())
        var writes: [StorageWrite] = []
        var expected: [BluetoothAddress: Registration] = [:]
        for (index, state) in Accessory.State.allCases.enumerated() {
            for raw in UInt8(0)...3 {
                let id = F.address(UInt64(index * 10) + UInt64(raw))
                var accessory = F.accessory(0)
                accessory.id = id
                accessory.state = state
                let registration = Registration(
                    configuration: .init(devicePlacement: placement, deviceCapabilities: .init(rawValue: raw)), isInvalidated: raw % 2 == 0)
                writes += [.upsertAccessory(accessory), .upsertRegistration(id, registration)]
                expected[id] = registration
            }
        }
        try store.apply(writes)
        let state = try store.load()
        #expect(state.registrations == expected)
        #expect(state.accessories.map(\.state) == Accessory.State.allCases.flatMap { Array(repeating: $0, count: 4) })
    }

    @Test("the descriptor's JSON form round-trips every field and omits defaults")
    func descriptorEncoding() throws {
        let text = DescriptorRecord.encode(F.fullDescriptor)
        #expect(DescriptorRecord.decode(text) == F.fullDescriptor)
        #expect(DescriptorRecord.encode(DiscoveryDescriptor()) == "{}")
        #expect(DescriptorRecord.decode("{}") == DiscoveryDescriptor())
        #expect(DescriptorRecord.decode("{\"service\":\"nope\"}") == nil)
        #expect(DescriptorRecord.decode("{\"manufacturerBlob\":\"ABC\"}") == nil)
        #expect(DescriptorRecord.decode("not json") == nil)
    }

    @Test("upserts replace in place and keep the registration; accessories load sorted by id")
    func upsertReplaces() throws {
        let directory = TemporaryDirectory()
        let store = try AccessoryStore(path: directory.database())
        try store.apply([
            .upsertAccessory(F.accessory(9)), .upsertAccessory(F.accessory(4)), .upsertRegistration(F.address(9), F.registration(9)),
        ])
        var renamed = F.accessory(9)
        renamed.displayName = "Renamed"
        renamed.state = .unauthorized
        try store.apply([.upsertAccessory(renamed)])
        let invalidated = Registration(configuration: F.registration(9).configuration, isInvalidated: true)
        try store.apply([.upsertRegistration(F.address(9), invalidated)])
        let state = try store.load()
        #expect(state.accessories == [F.accessory(4), renamed])
        #expect(state.registrations == [F.address(9): invalidated])
    }

    @Test("deleting an accessory deletes its registration and sources; deleting a registration keeps the accessory")
    func deletes() throws {
        let directory = TemporaryDirectory()
        let store = try AccessoryStore(path: directory.database())
        try store.apply(F.everything, sources: [F.full.id: [F.address(0x100), F.address(0x101)], F.bare.id: [F.address(0x200)]])
        try store.apply([.deleteAccessory(F.full.id), .deleteRegistration(F.bare.id)])
        let state = try store.load()
        #expect(state.accessories == [F.bare, F.unauthorized])
        #expect(state.registrations == [F.unauthorized.id: F.primaryOnly])
        #expect(try store.loadSources() == [F.bare.id: [F.address(0x200)]])
        // The engine emits deleteAccessory then deleteRegistration for the same id; both succeed.
        try store.apply([.deleteAccessory(F.unauthorized.id), .deleteRegistration(F.unauthorized.id), .deleteAccessory(F.address(77))])
        #expect(try store.load().registrations.isEmpty)
    }

    @Test("the migration flag is false until migrationComplete and stays set")
    func migrationFlag() throws {
        let directory = TemporaryDirectory()
        let path = directory.database()
        let store = try AccessoryStore(path: path)
        #expect(try store.load().migrationComplete == false)
        try store.apply([.upsertAccessory(F.bare)])
        #expect(try store.load().migrationComplete == false)
        try store.apply([.migrationComplete])
        try store.apply([.migrationComplete])
        #expect(try store.load().migrationComplete == true)
        store.close()
        #expect(try AccessoryStore(path: path).load().migrationComplete == true)
    }

    @Test("sources keep their order, are replaced whole and cleared by an empty list")
    func sources() throws {
        let directory = TemporaryDirectory()
        let store = try AccessoryStore(path: directory.database())
        try store.apply([.upsertAccessory(F.accessory(1)), .upsertAccessory(F.accessory(2))])
        let order = [F.address(0x30), F.address(0x10), F.address(0x20)]
        try store.saveSources(order, for: F.address(1))
        try store.saveSources([F.address(0x10)], for: F.address(2))
        #expect(try store.loadSources() == [F.address(1): order, F.address(2): [F.address(0x10)]])
        try store.saveSources([F.address(0x20), F.address(0x30)], for: F.address(1))
        try store.saveSources([], for: F.address(2))
        #expect(try store.loadSources() == [F.address(1): [F.address(0x20), F.address(0x30)]])
    }

    @Test("sources for an accessory that is not stored are refused with .constraint")
    func sourcesNeedAccessory() throws {
        let directory = TemporaryDirectory()
        let store = try AccessoryStore(path: directory.database())
        let error = #expect(throws: StorageError.self) { try store.saveSources([F.address(5)], for: F.address(99)) }
        #expect(error?.code == .constraint)
        #expect(try store.loadSources().isEmpty)
    }

    @Test("reopening gives back the same state, sources included")
    func reopen() throws {
        let directory = TemporaryDirectory()
        let path = directory.database()
        do {
            let store = try AccessoryStore(path: path)
            try store.apply(F.everything, sources: [F.full.id: [F.address(0x101), F.address(0x100)]])
            store.close()
        }
        let reopened = try AccessoryStore(path: path)
        #expect(try reopened.load() == F.everythingState)
        #expect(try reopened.loadSources() == [F.full.id: [F.address(0x101), F.address(0x100)]])
    }

    @Test("WAL journal, synchronous FULL, foreign keys and a busy timeout are in effect")
    func pragmas() throws {
        let directory = TemporaryDirectory()
        let store = try AccessoryStore(path: directory.database())
        let settings = try store.withConnection { connection throws(StorageError) in
            [
                try connection.scalar("PRAGMA journal_mode"), try connection.scalar("PRAGMA synchronous"),
                try connection.scalar("PRAGMA foreign_keys"), try connection.scalar("PRAGMA busy_timeout"),
                try connection.scalar("PRAGMA user_version"), try connection.scalar("PRAGMA application_id"),
            ]
        }
        // synchronous: 2 = FULL.
        #expect(settings == ["wal", "2", "1", "5000", "\(StoreSchema.currentVersion)", "\(StoreSchema.applicationID)"])
    }

    @Test("a batch with a failing write leaves nothing applied")
    func atomicBatch() throws {
        let directory = TemporaryDirectory()
        let store = try AccessoryStore(path: directory.database())
        try store.apply([.upsertAccessory(F.bare)])
        let before = try store.load()
        // The registration refers to an accessory that is never stored: the deferred foreign
        // key fails at COMMIT, after the other writes already ran inside the transaction.
        let error = #expect(throws: StorageError.self) {
            try store.apply([
                .upsertAccessory(F.full), .migrationComplete, .deleteAccessory(F.bare.id),
                .upsertRegistration(F.address(99), F.fullRegistration),
            ])
        }
        #expect(error?.code == .constraint)
        #expect(error?.message.contains(directory.database()) == true)
        #expect(try store.load() == before)
        // The connection is usable afterwards (no transaction left open).
        try store.apply([.upsertAccessory(F.full)])
        #expect(try store.load().accessories == [F.full, F.bare])
    }

    @Test("writes in one step may name the accessory after its registration")
    func deferredForeignKey() throws {
        let directory = TemporaryDirectory()
        let store = try AccessoryStore(path: directory.database())
        try store.apply([.upsertRegistration(F.full.id, F.fullRegistration), .upsertAccessory(F.full)])
        #expect(try store.load().registrations == [F.full.id: F.fullRegistration])
    }

    @Test("an empty apply is a no-op; a closed store refuses with .closed")
    func closed() throws {
        let directory = TemporaryDirectory()
        let store = try AccessoryStore(path: directory.database())
        try store.apply([])
        store.close()
        store.close()
        let error = #expect(throws: StorageError.self) { try store.load() }
        #expect(error?.code == .closed)
        #expect(throws: StorageError.self) { try store.apply([.migrationComplete]) }
    }

    @Test("concurrent callers share one store safely; every write lands")
    func concurrentCallers() async throws {
        let directory = TemporaryDirectory()
        let store = try AccessoryStore(path: directory.database())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in UInt64(0)..<4 {
                group.addTask {
                    for n in 0..<25 {
                        let id = worker * 100 + UInt64(n)
                        try store.apply([.upsertAccessory(F.accessory(id)), .upsertRegistration(F.address(id), F.registration(id))])
                        _ = try store.load()
                    }
                }
            }
            try await group.waitForAll()
        }
        let state = try store.load()
        #expect(state.accessories.count == 100)
        #expect(state.registrations.count == 100)
        #expect(state.accessories.map(\.id) == state.accessories.map(\.id).sorted())
    }

    @Test("a backup taken while the store is open loads the same state and passes the integrity check")
    func backup() throws {
        let directory = TemporaryDirectory()
        let store = try AccessoryStore(path: directory.database())
        try store.apply(F.everything, sources: [F.full.id: [F.address(0x100)]])
        #expect(store.integrityCheck() == [])
        let copy = directory.path + "/backups/aabridge-backup.sqlite3"
        try store.backup(to: copy)
        // The store keeps working after the backup; the copy is a snapshot.
        try store.apply([.deleteAccessory(F.full.id)])
        #expect(!FileManager.default.fileExists(atPath: copy + ".partial"))
        #expect(!FileManager.default.fileExists(atPath: copy + "-wal"))
        let restored = try AccessoryStore(path: copy)
        #expect(try restored.load() == F.everythingState)
        #expect(try restored.loadSources() == [F.full.id: [F.address(0x100)]])
        #expect(restored.integrityCheck() == [])
        // A second backup over an existing file replaces it.
        try store.backup(to: copy)
        #expect(try AccessoryStore(path: copy).load().accessories == [F.bare, F.unauthorized])
    }

    @Test("a backup to a place that cannot be written fails with a clear error")
    func backupFails() throws {
        let directory = TemporaryDirectory()
        let store = try AccessoryStore(path: directory.database())
        // A regular file where the backup's directory should be.
        let blocker = directory.path + "/file"
        #expect(FileManager.default.createFile(atPath: blocker, contents: Data()))
        let error = #expect(throws: StorageError.self) { try store.backup(to: blocker + "/copy.sqlite3") }
        #expect(error?.code == .cannotOpen)
        #expect(error?.message.contains(blocker) == true)
    }
}
