import Testing

@testable import AccessoryKit

/// What the user said that lasts (household.md, "Home sources", "Aliases"): home sources
/// restored when an accessory comes back, aliases, source names given at run time.
@Suite("Engine: home sources, aliases and source names")
struct EngineHomeSourcesTests {
    static let id = Fixtures.address(1)
    static let alias = BluetoothAddress("F0:F1:F2:F3:F4:F5")!
    static let availability: Int64 = 120_000

    /// Paired buds registered with both capabilities, worn (placement `inEar` committed), with
    /// `home` as home sources and available, then silent for longer than the availability
    /// window: unavailable, their connected sources cleared.
    static func awayBuds(home: [BluetoothAddress] = [Fixtures.phone]) -> Harness {
        var harness = Harness()
        harness.pairAndRegister(id, Fixtures.buds, placement: .inEar)
        #expect(harness.request(.setHomeSources(id, home)).succeeded)
        harness.advance(availability + 1)
        #expect(harness.engine.status(of: id)?.available == false)
        #expect(harness.engine.status(of: id)?.sources == [])
        return harness
    }

    static func worn() -> AdvertisementSighting {
        Fixtures.sighting(id, for: Fixtures.buds, decoded: .init(worn: true, placement: .inEar))
    }

    @Test("back with no connected source and no report since: the home sources become the connected sources, reason home_source")
    func restoredOnReturn() {
        var harness = Self.awayBuds(home: [Fixtures.phone, Fixtures.laptop])
        let back = harness.send(.sighting(Self.worn()))
        #expect(harness.configuration(Self.id)?.primaryAudioSourceDeviceIdentifier == Fixtures.phone)
        #expect(harness.configuration(Self.id)?.secondaryAudioSourceDeviceIdentifier == Fixtures.laptop)
        #expect(harness.engine.route(for: Fixtures.phone) == .accessory(Self.id))
        #expect(back.decisions.map(\.reason) == [.homeSource, .homeSource])
        #expect(back.decisions.map(\.source) == [Fixtures.phone, Fixtures.laptop])
        #expect(harness.configuration(Self.id)?.devicePlacement == .inEar, "the placement is not reset")
        #expect(harness.engine.status(of: Self.id)?.homeSources == [Fixtures.phone, Fixtures.laptop])
    }

    @Test("the first return after a start says startup")
    func startupOnFirstReturn() {
        var first = Self.awayBuds()
        first.send(.sighting(Self.worn()))
        var state = RestoredState(
            accessories: first.engine.accessories, registrations: first.engine.registry.registrations, migrationComplete: true,
            homeSources: [Self.id: [Fixtures.phone]])
        // Stopped while away: nothing connected is stored.
        state.registrations[Self.id]?.configuration.primaryAudioSourceDeviceIdentifier = nil
        var restarted = Harness(Fixtures.configuration(), restored: state)
        let back = restarted.send(.sighting(Self.worn()))
        #expect(back.decisions.map(\.reason) == [.startup])
        #expect(restarted.engine.route(for: Fixtures.phone) == .accessory(Self.id))
        // Away and back again within the same run: home_source.
        restarted.advance(Self.availability + 1)
        #expect(restarted.send(.sighting(Self.worn())).decisions.map(\.reason) == [.homeSource])
    }

    @Test(
        "a report while away wins: a source connected, or one disconnected, keeps the home sources from being restored",
        arguments: [
            AccessoryReport.Change.sourceConnected(Fixtures.tv), .sourceDisconnected(Fixtures.phone), .preferredSource(Fixtures.tv),
        ])
    func reportWhileAwayWins(change: AccessoryReport.Change) {
        var harness = Self.awayBuds()
        // `/set`: no gateway, so it says nothing about being heard.
        harness.report(Self.id, change, gateway: nil)
        let back = harness.send(.sighting(Self.worn()))
        #expect(!back.decisions.contains { $0.reason == .homeSource })
        #expect(harness.engine.route(for: Fixtures.phone) == .fallback)
        #expect(harness.engine.status(of: Self.id)?.homeSources == [Fixtures.phone], "kept for the next return")
    }

    @Test("connected sources present on return are not overwritten")
    func connectedSourcesStay() {
        var harness = Harness()
        harness.pairAndRegister(Self.id, Fixtures.buds, placement: .inEar, primary: Fixtures.tv)
        #expect(harness.request(.setHomeSources(Self.id, [Fixtures.phone])).succeeded)
        #expect(harness.configuration(Self.id)?.primaryAudioSourceDeviceIdentifier == Fixtures.tv)
        // A start with the TV still stored as connected: heard within the window, it keeps it.
        let state = RestoredState(
            accessories: harness.engine.accessories, registrations: harness.engine.registry.registrations, migrationComplete: true,
            homeSources: [Self.id: [Fixtures.phone]])
        var restarted = Harness(Fixtures.configuration(), restored: state)
        restarted.send(.sighting(Self.worn()))
        #expect(restarted.configuration(Self.id)?.primaryAudioSourceDeviceIdentifier == Fixtures.tv)
        #expect(restarted.engine.route(for: Fixtures.phone) == .fallback)
    }

    @Test(
        "home sources set while the accessory is available with no connected source are taken at once; register and /set never change them")
    func setWhileAvailable() {
        var harness = Harness()
        harness.pairAndRegister(Self.id, Fixtures.buds, placement: .inEar)
        let set = harness.request(.setHomeSources(Self.id, [Fixtures.phone]))
        #expect(set.result == .success(.state(Self.id)))
        #expect(
            set.storage == [.saveHomeSources(Self.id, [Fixtures.phone]), .upsertRegistration(Self.id, harness.engine.registry[Self.id]!)])
        #expect(set.decisions.map(\.reason) == [.homeSource])
        harness.request(.register(Self.id, RegistrationRequest(capabilities: Fixtures.buds.capabilities)))
        harness.report(Self.id, .sources([Fixtures.tv]), gateway: nil)
        #expect(harness.engine.status(of: Self.id)?.homeSources == [Fixtures.phone])
        #expect(harness.request(.setHomeSources(Self.id, [])).storage == [.saveHomeSources(Self.id, [])])
        #expect(harness.engine.status(of: Self.id)?.homeSources == [])
        #expect(harness.configuration(Self.id)?.primaryAudioSourceDeviceIdentifier == Fixtures.tv, "connected sources stay")
    }

    @Test("a registration that takes no sources (no audioSwitching) restores nothing and reports no error")
    func noAudioSwitching() {
        var harness = Harness()
        harness.pairAndRegister(Self.id, Fixtures.buds, capabilities: [.placement], placement: .inEar)
        #expect(harness.request(.setHomeSources(Self.id, [Fixtures.phone])).errors.isEmpty)
        harness.advance(Self.availability + 1)
        let back = harness.send(.sighting(Self.worn()))
        #expect(back.errors.isEmpty && back.decisions.isEmpty)
        #expect(harness.configuration(Self.id)?.primaryAudioSourceDeviceIdentifier == nil)
    }

    @Test("picker/select's sources are home sources for every product")
    func selectGivesHomeSources() {
        var harness = Harness()
        harness.request(.showPicker(products: [Fixtures.studio.name], timeout: .default))
        harness.send(.sighting(Fixtures.sighting(Self.id, for: Fixtures.studio)))
        let step = harness.request(.selectCandidate(Self.id, name: nil, sources: [Fixtures.phone, Fixtures.tv]))
        #expect(step.succeeded)
        #expect(harness.engine.status(of: Self.id)?.homeSources == [Fixtures.phone, Fixtures.tv])
        #expect(step.storage.contains(.saveHomeSources(Self.id, [Fixtures.phone, Fixtures.tv])))
    }

    @Test("a home source that is the accessory's own id or alias is refused, nothing stored")
    func ownAddressRefused() {
        var harness = Harness()
        harness.pair(Self.id, Fixtures.buds)
        #expect(harness.request(.setAlias(Self.id, Self.alias)).succeeded)
        for source in [Self.id, Self.alias] {
            let step = harness.request(.setHomeSources(Self.id, [Fixtures.phone, source]))
            #expect(step.setupErrorCode == .invalidRequest)
            #expect(step.result?.error?.message.contains("'sources'[1]") == true, "\(String(describing: step.result))")
            #expect(step.storage.isEmpty)
        }
        #expect(harness.engine.status(of: Self.id)?.homeSources == [])
    }

    @Test("an alias: stored, shown, found again; another accessory's id or alias, or a source's address, is refused")
    func aliases() {
        var harness = Harness()
        let other = Fixtures.address(2)
        harness.pair(Self.id, Fixtures.buds)
        harness.pair(other, Fixtures.buds)
        let set = harness.request(.setAlias(Self.id, Self.alias))
        #expect(set.storage == [.saveAlias(Self.id, Self.alias)])
        #expect(harness.engine.status(of: Self.id)?.alias == Self.alias)
        #expect(harness.engine.accessory(aliasedTo: Self.alias) == Self.id)
        harness.request(.setHomeSources(other, [Fixtures.tv]))
        for (address, message) in [
            (other, "the id of another accessory"), (Self.id, "the accessory's own id"), (Fixtures.tv, "a source device's address"),
        ] {
            let refused = harness.request(.setAlias(Self.id, address))
            #expect(refused.setupErrorCode == .invalidRequest)
            #expect(refused.result?.error?.message.contains(message) == true, "\(String(describing: refused.result))")
            #expect(refused.storage.isEmpty)
        }
        let taken = harness.request(.setAlias(other, Self.alias))
        #expect(taken.result?.error?.message.contains("already the alias of accessory \(Self.id)") == true)
        #expect(harness.request(.setAlias(Self.id, nil)).storage == [.saveAlias(Self.id, nil)])
        #expect(harness.engine.accessory(aliasedTo: Self.alias) == nil)
        // Removed with its accessory.
        harness.request(.setAlias(Self.id, Self.alias))
        harness.request(.remove(Self.id))
        #expect(harness.engine.accessory(aliasedTo: Self.alias) == nil)
    }

    @Test("an alias never attributes an advertisement: a sighting from it is no one's")
    func aliasIsNoAdvertiser() {
        var harness = Harness()
        harness.pair(Self.id, Fixtures.buds)
        harness.request(.setAlias(Self.id, Self.alias))
        #expect(harness.engine.product(of: Self.alias) == nil)
        #expect(harness.engine.advertiser(Self.alias) == nil)
    }

    @Test("source names: given at run time and stored; the configuration's win; null removes the run-time one")
    func sourceNames() {
        var configuration = Fixtures.configuration()
        configuration.sourceNames = [Fixtures.phone: "Alice's iPhone"]
        var harness = Harness(configuration)
        let named = harness.request(.nameSource(Fixtures.tv, "Living room TV"))
        #expect(named.result == .success(.sourceName(Fixtures.tv, "Living room TV")))
        #expect(named.storage == [.saveSourceName(Fixtures.tv, "Living room TV")])
        #expect(named.outputs.contains(.sourceNamed(Fixtures.tv, "Living room TV")))
        let shadowed = harness.request(.nameSource(Fixtures.phone, "Phone"))
        #expect(shadowed.result == .success(.sourceName(Fixtures.phone, "Alice's iPhone")), "the configuration's name wins")
        #expect(harness.engine.sourceNames == [Fixtures.phone: "Alice's iPhone", Fixtures.tv: "Living room TV"])
        #expect(harness.request(.nameSource(Fixtures.tv, nil)).storage == [.saveSourceName(Fixtures.tv, nil)])
        #expect(harness.engine.sourceName(of: Fixtures.tv) == nil)
        // Restored from storage.
        let restored = Harness(configuration, restored: RestoredState(sourceNames: [Fixtures.laptop: "Bob's MacBook"]))
        #expect(restored.engine.sourceName(of: Fixtures.laptop) == "Bob's MacBook")
    }

    @Test("restored home sources and aliases are the accessory's from the start")
    func restored() {
        var harness = Harness()
        harness.pair(Self.id, Fixtures.buds)
        let state = RestoredState(
            accessories: harness.engine.accessories, migrationComplete: true, homeSources: [Self.id: [Fixtures.phone]],
            aliases: [Self.id: Self.alias])
        let restarted = Harness(Fixtures.configuration(), restored: state)
        #expect(restarted.engine.status(of: Self.id)?.homeSources == [Fixtures.phone])
        #expect(restarted.engine.status(of: Self.id)?.alias == Self.alias)
        #expect(restarted.engine.accessory(aliasedTo: Self.alias) == Self.id)
    }
}
