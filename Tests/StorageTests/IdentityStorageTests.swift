import AccessoryKit
import Testing

@testable import Storage

/// Schema 3: the keys and the followed address of each accessory (identity.md).
@Suite("AccessoryStore: keys and followed addresses")
struct IdentityStorageTests {
    typealias F = StoreFixtures
    static let irk = AccessoryKey(bytes: Array(0..<16))!
    static let encryption = AccessoryKey(bytes: Array(16..<32))!

    @Test("keys and the followed address survive a reopen; replacing keys keeps the followed address and the reverse")
    func roundTrip() throws {
        let directory = TemporaryDirectory()
        let path = directory.database()
        let id = F.full.id
        let followed = BluetoothAddress(rawValue: 0x4A_0000_0000_01)
        do {
            let store = try AccessoryStore(path: path)
            try store.apply([.upsertAccessory(F.full), .saveKeys(id, AccessoryKeys(irk: Self.irk, encryptionKey: Self.encryption))])
            try store.apply([.saveFollowedAddress(id, followed)])
            try store.apply([.saveKeys(id, AccessoryKeys(encryptionKey: Self.encryption))])
            store.close()
        }
        let state = try AccessoryStore(path: path).load()
        #expect(state.keys == [id: AccessoryKeys(encryptionKey: Self.encryption)])
        #expect(state.followedAddresses == [id: followed])
    }

    @Test("the order a key matched in and the accessory's trace (profile, last room) survive a reopen; not_yet is kept as not_yet")
    func orderAndTrace() throws {
        let directory = TemporaryDirectory()
        let path = directory.database()
        let trace = AccessoryTrace(profile: ProximityProfile(model: 0x2014, colour: 0), room: "bedroom")
        do {
            let store = try AccessoryStore(path: path)
            try store.apply([.upsertAccessory(F.full), .upsertAccessory(F.bare)])
            try store.apply([.saveKeys(F.full.id, AccessoryKeys(irk: Self.irk, irkOrder: .reversed)), .saveTrace(F.full.id, trace)])
            try store.apply([.saveKeys(F.bare.id, AccessoryKeys(irk: Self.irk, irkOrder: .notYet))])
            store.close()
        }
        let state = try AccessoryStore(path: path).load()
        #expect(state.keys[F.full.id]?.irkOrder == .reversed)
        #expect(state.keys[F.bare.id]?.irkOrder == .notYet)
        #expect(state.traces == [F.full.id: trace])
    }

    @Test("no keys stored loads as none; deleting the accessory deletes its keys")
    func deletion() throws {
        let directory = TemporaryDirectory()
        let store = try AccessoryStore(path: directory.database())
        let id = F.full.id
        try store.apply([.upsertAccessory(F.full), .saveKeys(id, AccessoryKeys())])
        #expect(try store.load().keys.isEmpty)
        try store.apply([.saveKeys(id, AccessoryKeys(irk: Self.irk))])
        try store.apply([.deleteAccessory(id)])
        let rows = try store.withConnection { connection throws(StorageError) in try connection.integer("SELECT count(*) FROM identities") }
        #expect(rows == 0)
        #expect(try store.load().keys.isEmpty)
    }

    @Test("keys of an accessory that is not stored are refused (constraint) and nothing is written")
    func keysNeedAnAccessory() throws {
        let directory = TemporaryDirectory()
        let store = try AccessoryStore(path: directory.database())
        #expect(throws: StorageError.self) { try store.apply([.saveKeys(F.full.id, AccessoryKeys(irk: Self.irk))]) }
        #expect(try store.load().keys.isEmpty)
    }

    @Test("a stored key of the wrong length is reported as damaged, naming the accessory")
    func damagedKey() throws {
        let directory = TemporaryDirectory()
        let store = try AccessoryStore(path: directory.database())
        try store.apply([.upsertAccessory(F.full), .saveKeys(F.full.id, AccessoryKeys(irk: Self.irk))])
        // The CHECK constraint refuses a short key, so the damage is made with the checks off.
        try store.withConnection { connection throws(StorageError) in
            try connection.execute("PRAGMA ignore_check_constraints = ON")
            try connection.execute("UPDATE identities SET irk = x'0011'")
        }
        #expect {
            try store.load()
        } throws: { error in
            (error as? StorageError)?.code == .corrupt && (error as? StorageError)?.message.contains(F.full.id.description) == true
        }
    }
}
