import Testing

@testable import AccessoryKit

/// identity.md, Keys and Identity: what the engine does with keys and attributed sightings.
@Suite("Engine: keys and identity")
struct EngineKeysTests {
    let a = Fixtures.address(1)
    static let irk = AccessoryKey(bytes: Array(0..<16))!
    static let encryption = AccessoryKey(bytes: Array(16..<32))!

    @Test("accessory/keys sets, keeps and deletes each key; the answer and the state show only presence")
    func setKeepDelete() {
        var harness = Harness()
        harness.pair(a, Fixtures.buds)
        let set = harness.request(.setKeys(a, irk: .set(Self.irk), encryptionKey: .keep))
        #expect(set.result == .success(.keys(a, KeyPresence(irk: true, encryptionKey: false), irkMatch: .asGiven)))
        #expect(set.storage == [.saveKeys(a, AccessoryKeys(irk: Self.irk))])
        #expect(set.outputs.contains(.keysChanged(a, AccessoryKeys(irk: Self.irk))))
        #expect(harness.engine.status(of: a)?.keys == KeyPresence(irk: true, encryptionKey: false))

        // An absent key is left as it is.
        let both = harness.request(.setKeys(a, irk: .keep, encryptionKey: .set(Self.encryption)))
        #expect(both.storage == [.saveKeys(a, AccessoryKeys(irk: Self.irk, encryptionKey: Self.encryption))])
        #expect(harness.engine.keys[a] == AccessoryKeys(irk: Self.irk, encryptionKey: Self.encryption))

        // The same keys again change nothing and store nothing.
        #expect(harness.request(.setKeys(a, irk: .set(Self.irk), encryptionKey: .keep)).storage.isEmpty)

        // null deletes.
        let deleted = harness.request(.setKeys(a, irk: .delete, encryptionKey: .keep))
        #expect(deleted.result == .success(.keys(a, KeyPresence(irk: false, encryptionKey: true), irkMatch: nil)))
        #expect(harness.engine.keys[a] == AccessoryKeys(encryptionKey: Self.encryption))
    }

    @Test("keys for an unknown accessory are invalidRequest and change nothing")
    func unknownAccessory() {
        var harness = Harness()
        let step = harness.request(.setKeys(a, irk: .set(Self.irk), encryptionKey: .keep))
        #expect(step.setupErrorCode == .invalidRequest)
        #expect(step.storage.isEmpty)
        #expect(harness.engine.keys.isEmpty)
    }

    @Test("picker/select with keys stores them with the new accessory")
    func selectWithKeys() {
        var harness = Harness()
        harness.request(.showPicker(products: [Fixtures.buds.name], timeout: .default))
        harness.send(.sighting(Fixtures.sighting(a, for: Fixtures.buds)))
        let step = harness.request(.selectCandidate(a, name: nil, keys: AccessoryKeys(irk: Self.irk)))
        #expect(step.succeeded)
        #expect(step.storage.contains(.saveKeys(a, AccessoryKeys(irk: Self.irk))))
        #expect(harness.engine.status(of: a)?.keys.irk == true)
    }

    @Test("the configuration's keys are applied at every start and win over the stored ones; the others stay")
    func configuredKeysAtStart() throws {
        let other = try #require(AccessoryKey(bytes: Array(repeating: 7, count: 16)))
        var first = Harness()
        first.pair(a, Fixtures.buds)
        first.request(.setKeys(a, irk: .set(other), encryptionKey: .set(Self.encryption)))
        let restored = RestoredState(
            accessories: first.engine.accessories, registrations: first.engine.registry.registrations,
            keys: first.engine.keys)

        var configuration = Fixtures.configuration()
        configuration.keys = [a: AccessoryKeys(irk: Self.irk)]
        let second = Harness(configuration, restored: restored)
        #expect(second.log.contains(.storage(.saveKeys(a, AccessoryKeys(irk: Self.irk, encryptionKey: Self.encryption)))))
        #expect(second.engine.keys[a] == AccessoryKeys(irk: Self.irk, encryptionKey: Self.encryption))

        // Keys already as the file says: nothing is written at the next start.
        let third = Harness(configuration, restored: RestoredState(accessories: restored.accessories, keys: second.engine.keys))
        #expect(!third.log.contains { if case .storage(.saveKeys) = $0 { true } else { false } })
    }

    @Test("an attributed sighting counts for the identity and its state shows the address, the attribution and the model")
    func attributedSighting() {
        var harness = Harness()
        harness.pair(a, Fixtures.buds)
        let rotated = BluetoothAddress(rawValue: 0x4A_1234_5678_9A)
        var sighting = Fixtures.sighting(a, for: Fixtures.buds, rssi: -55, gateway: "hall", decoded: .init(model: "AirPods Pro"))
        sighting.heardFrom = rotated
        sighting.attribution = .irk
        let step = harness.send(.sighting(sighting))
        let status = harness.engine.status(of: a)
        #expect(status?.heardFrom == rotated)
        #expect(status?.identity == .irk)
        #expect(status?.model == "AirPods Pro")
        #expect(status?.gateway == "hall" && status?.rssi == -55)
        #expect(step.outputs.contains { if case .accessoryChanged = $0 { true } else { false } })
        // An IRK resolution is not stored; a followed address is (a restart needs it).
        #expect(step.storage.isEmpty)
        sighting.attribution = .followed
        #expect(harness.send(.sighting(sighting)).storage == [.saveFollowedAddress(a, rotated)])
        #expect(harness.engine.followedAddresses[a] == rotated)
        #expect(harness.send(.sighting(sighting)).storage.isEmpty)
    }

    @Test("removing an accessory forgets its keys")
    func removeForgetsKeys() {
        var harness = Harness()
        harness.pair(a, Fixtures.buds)
        harness.request(.setKeys(a, irk: .set(Self.irk), encryptionKey: .keep))
        harness.request(.remove(a))
        #expect(harness.engine.keys.isEmpty)
    }

    @Test(
        "undoing an automatic re-attachment forgets the address (stored as none), makes it away, says reattachUndone; a stale undo does nothing"
    )
    func undoReattach() {
        var harness = Harness()
        harness.pair(a, Fixtures.buds)
        let morning = BluetoothAddress(rawValue: 0x4A_1234_5678_9A)
        var sighting = Fixtures.sighting(a, for: Fixtures.buds, rssi: -55, gateway: "hall")
        sighting.heardFrom = morning
        sighting.attribution = .reattached
        harness.send(.sighting(sighting))
        #expect(harness.engine.followedAddresses[a] == morning)
        // An undo for another address (re-attached elsewhere since) changes nothing.
        #expect(harness.send(.undoReattach(a, from: BluetoothAddress(rawValue: 0x4A_0000_0000_01))).outputs.isEmpty)
        let step = harness.send(.undoReattach(a, from: morning))
        #expect(step.storage == [.saveFollowedAddress(a, nil)])
        #expect(step.events.map(\.type) == [.reattachUndone])
        #expect(step.events.first?.accessory?.id == a)
        #expect(harness.engine.followedAddresses[a] == nil)
        #expect(harness.engine.accessory(followedTo: morning) == nil)
        let status = harness.engine.status(of: a)
        #expect(status?.available == false && status?.heardFrom == a && status?.identity == .address)
        // Said once: a second undo finds nothing to undo.
        #expect(harness.send(.undoReattach(a, from: morning)).outputs.isEmpty)
    }
}
