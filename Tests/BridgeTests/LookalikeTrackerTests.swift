import AccessoryKit
import Testing

@testable import Bridge

/// household.md, "Found again after a night": the look-alike rule alone, with times given
/// (ReattachFlowTests runs it over a real mosquitto).
@Suite("Look-alikes: what is offered and what is re-attached")
struct LookalikeTrackerTests {
    static let profile = ProximityProfile(model: 0x2014, colour: 0)
    static let alice = BluetoothAddress(rawValue: 0x4A_0000_0000_A1)
    static let bob = BluetoothAddress(rawValue: 0x4A_0000_0000_B0)
    static let morning = BluetoothAddress(rawValue: 0x5B_1111_1111_11)
    static let other = BluetoothAddress(rawValue: 0x6C_2222_2222_22)

    static func at(_ seconds: Double) -> Timestamp { Timestamp(milliseconds: 1_800_000_000_000 + Int64(seconds * 1000)) }

    /// Advertisements of `address` heard by `gateway` every second from `from` through `to`;
    /// the decisions in order.
    static func advertise(
        _ tracker: inout LookalikeTracker, _ address: BluetoothAddress, gateway: String, from: Double, to: Double,
        away: [(id: BluetoothAddress, room: String?)], profile: ProximityProfile = profile
    ) -> [LookalikeTracker.Decision] {
        stride(from: from, through: to, by: 1).map { second in
            tracker.heard(address, profile: profile, gateway: gateway, rssi: -60, at: at(second), away: away)
        }
    }

    @Test("the only away accessory, first heard where it was last heard: offered first, re-attached after 2 advertisements over 5 s")
    func unique() {
        var tracker = LookalikeTracker(mode: .auto, windowSeconds: 600)
        let decisions = Self.advertise(&tracker, Self.morning, gateway: "bedroom", from: 0, to: 5, away: [(Self.alice, "bedroom")])
        #expect(decisions.first == .offered(first: true))
        #expect(decisions.dropFirst().prefix(4).allSatisfy { $0 == .offered(first: false) }, "not before 5 s: \(decisions)")
        #expect(decisions[5] == .reattach(Self.alice), "\(decisions)")
        // Attached: it is no look-alike any more.
        #expect(tracker.entries.isEmpty)
    }

    @Test("a neighbour's pair first heard in the hall is only offered, even as the only fitting accessory")
    func neighbour() {
        var tracker = LookalikeTracker(mode: .auto, windowSeconds: 600)
        let decisions = Self.advertise(&tracker, Self.morning, gateway: "hall", from: 0, to: 30, away: [(Self.alice, "bedroom")])
        #expect(!decisions.contains(.reattach(Self.alice)))
        #expect(tracker.options == [Self.alice: [Self.morning]])
        // Heard later in the bedroom too: it was still first heard in the hall.
        #expect(
            !Self.advertise(&tracker, Self.morning, gateway: "bedroom", from: 31, to: 40, away: [(Self.alice, "bedroom")]).contains(
                .reattach(Self.alice)))
    }

    @Test("another look-alike of that model and colour heard within the window: neither is re-attached")
    func rival() {
        var tracker = LookalikeTracker(mode: .auto, windowSeconds: 600)
        _ = Self.advertise(&tracker, Self.other, gateway: "hall", from: 0, to: 1, away: [(Self.alice, "bedroom")])
        // 9 minutes later the rival is still within the 10-minute window.
        let decisions = Self.advertise(&tracker, Self.morning, gateway: "bedroom", from: 540, to: 560, away: [(Self.alice, "bedroom")])
        #expect(!decisions.contains(.reattach(Self.alice)), "\(decisions)")
        // Another colour is no rival.
        var colours = LookalikeTracker(mode: .auto, windowSeconds: 600)
        let black = ProximityProfile(model: 0x2014, colour: 1)
        _ = Self.advertise(&colours, Self.other, gateway: "hall", from: 0, to: 1, away: [(Self.bob, "hall")], profile: black)
        #expect(
            Self.advertise(&colours, Self.morning, gateway: "bedroom", from: 2, to: 10, away: [(Self.alice, "bedroom")]).contains(
                .reattach(Self.alice)))
    }

    @Test("two away accessories: the one last heard by the gateway that hears it first, and not by the other's, is re-attached")
    func tieBreak() {
        var tracker = LookalikeTracker(mode: .auto, windowSeconds: 600)
        let away: [(id: BluetoothAddress, room: String?)] = [(Self.alice, "bedroom"), (Self.bob, "guestroom")]
        #expect(Self.advertise(&tracker, Self.morning, gateway: "guestroom", from: 0, to: 5, away: away).last == .reattach(Self.bob))
        // Both last heard in one room: continuity cannot tell.
        var same = LookalikeTracker(mode: .auto, windowSeconds: 600)
        let together: [(id: BluetoothAddress, room: String?)] = [(Self.alice, "kitchen"), (Self.bob, "kitchen")]
        #expect(
            !Self.advertise(&same, Self.morning, gateway: "kitchen", from: 0, to: 30, away: together).contains {
                $0 != .offered(first: false) && $0 != .offered(first: true)
            })
        // Heard also by the other's room: not singled out.
        var both = LookalikeTracker(mode: .auto, windowSeconds: 600)
        _ = Self.advertise(&both, Self.morning, gateway: "guestroom", from: 0, to: 0, away: away)
        #expect(!Self.advertise(&both, Self.morning, gateway: "bedroom", from: 1, to: 10, away: away).contains(.reattach(Self.bob)))
        // No room known (never heard since it was paired): nothing singles it out.
        var unknown = LookalikeTracker(mode: .auto, windowSeconds: 600)
        #expect(
            !Self.advertise(&unknown, Self.morning, gateway: "bedroom", from: 0, to: 10, away: [(Self.alice, nil)]).contains(
                .reattach(Self.alice)))
    }

    @Test("ask offers and never re-attaches")
    func ask() {
        var tracker = LookalikeTracker(mode: .ask, windowSeconds: 600)
        let decisions = Self.advertise(&tracker, Self.morning, gateway: "bedroom", from: 0, to: 30, away: [(Self.alice, "bedroom")])
        #expect(decisions.allSatisfy { if case .offered = $0 { true } else { false } })
        #expect(tracker.options == [Self.alice: [Self.morning]])
        #expect(LookalikeTracker(mode: .off, windowSeconds: 600).isLooking == false)
    }

    @Test("bounded: at most 64 kept (the stalest goes), 16 published newest first, each forgotten after the window")
    func bounded() throws {
        var tracker = LookalikeTracker(mode: .ask, windowSeconds: 600)
        for index in 0..<200 {
            let address = BluetoothAddress(rawValue: 0x5A_0000_0000_00 + UInt64(index))
            _ = tracker.heard(
                address, profile: Self.profile, gateway: "hall", rssi: -70, at: Self.at(Double(index)), away: [(Self.alice, "bedroom")])
        }
        #expect(tracker.entries.count == LookalikeTracker.capacity)
        let listed = try #require(tracker.payload { _ in "AirPods Pro (2nd generation)" }.arrayValue)
        #expect(listed.count == 16)
        #expect(listed.first?["address"] == .string(BluetoothAddress(rawValue: 0x5A_0000_0000_00 + 199).description))
        #expect(listed.first?["could_be"] == [.string(Self.alice.description)])
        #expect(try #require(tracker.nextExpiry) == Self.at(136).advanced(byMilliseconds: 600_001))
        tracker.expire(at: Self.at(199 + 600.5))
        #expect(tracker.entries.isEmpty)
        #expect(tracker.listChanged)
    }

    @Test(
        "lookalike_flood: a node that first hears 8 fresh look-alikes within the window attaches none by itself, even with the rivals gone")
    func flood() {
        var tracker = LookalikeTracker(mode: .auto, windowSeconds: 600)
        for index in 0..<LookalikeTracker.floodCount {
            let decoy = BluetoothAddress(rawValue: 0x5A_0000_0000_00 + UInt64(index))
            _ = Self.advertise(&tracker, decoy, gateway: "bedroom", from: Double(index), to: Double(index), away: [(Self.alice, "bedroom")])
        }
        #expect(tracker.isFlooding("bedroom", at: Self.at(10)))
        #expect(!tracker.isFlooding("hall", at: Self.at(10)))
        // The decoys attributed elsewhere (no rivals left): the node still attaches nothing.
        for index in 0..<LookalikeTracker.floodCount { tracker.forget(BluetoothAddress(rawValue: 0x5A_0000_0000_00 + UInt64(index))) }
        let decisions = Self.advertise(&tracker, Self.morning, gateway: "bedroom", from: 20, to: 30, away: [(Self.alice, "bedroom")])
        #expect(!decisions.contains(.reattach(Self.alice)), "\(decisions)")
        // Once the window has passed, the node is trusted again.
        #expect(!tracker.isFlooding("bedroom", at: Self.at(20 + 601)))
        var later = tracker
        later.forget(Self.morning)
        #expect(
            Self.advertise(&later, Self.other, gateway: "bedroom", from: 700, to: 706, away: [(Self.alice, "bedroom")]).contains(
                .reattach(Self.alice)))
    }

    /// Issue 49, finding 3: a radio inventing one fresh address of the profile every 3 s kept
    /// the accessory from ever being re-attached (each counted as a rival for the window).
    @Test("decoys heard once by a flooding node are no rivals; an address that advertises again still is")
    func decoysAreNoRivals() {
        var tracker = LookalikeTracker(mode: .auto, windowSeconds: 600)
        for index in 0..<20 {
            let decoy = BluetoothAddress(rawValue: 0x5A_0000_0000_00 + UInt64(index))
            _ = Self.advertise(
                &tracker, decoy, gateway: "hall", from: Double(index * 3), to: Double(index * 3), away: [(Self.alice, "bedroom")])
        }
        #expect(tracker.isFlooding("hall", at: Self.at(60)))
        var withDecoys = tracker
        let decisions = Self.advertise(&withDecoys, Self.morning, gateway: "bedroom", from: 60, to: 66, away: [(Self.alice, "bedroom")])
        #expect(decisions.contains(.reattach(Self.alice)), "\(decisions)")
        // A look-alike in the hall that advertises twice is a pair, not a decoy: nothing is attached.
        var withPair = tracker
        _ = Self.advertise(&withPair, Self.other, gateway: "hall", from: 58, to: 59, away: [(Self.alice, "bedroom")])
        let held = Self.advertise(&withPair, Self.morning, gateway: "bedroom", from: 60, to: 66, away: [(Self.alice, "bedroom")])
        #expect(!held.contains(.reattach(Self.alice)), "\(held)")
    }

    @Test("an accessory whose automatic re-attachment was undone is not re-attached by the rules again within the window")
    func heldBack() {
        var tracker = LookalikeTracker(mode: .auto, windowSeconds: 600)
        let decisions = stride(from: 0.0, through: 10, by: 1).map { second in
            tracker.heard(
                Self.morning, profile: Self.profile, gateway: "bedroom", rssi: -60, at: Self.at(second), away: [(Self.alice, "bedroom")]
            ) { $0 == Self.alice }
        }
        #expect(!decisions.contains(.reattach(Self.alice)), "\(decisions)")
        #expect(tracker.entries[Self.morning] != nil, "still offered")
    }
}

/// household.md, "Keys that users can actually get": the recent addresses a new key is tried
/// against, in both byte orders.
@Suite("Recent addresses for a key's byte order")
struct RecentAddressesTests {
    static let hex = "8899aabbccddeeff0011223344556677"

    static func at(_ seconds: Double) -> Timestamp { Timestamp(milliseconds: 1_800_000_000_000 + Int64(seconds * 1000)) }

    static func address(of hex: String, prand: UInt32) throws -> BluetoothAddress {
        try #require(BluetoothAddress(try IdentityResolutionFlowTests.resolvableAddress(irk: hex, prand: prand)))
    }

    static func key(_ hex: String) throws -> AccessoryKey { try AccessoryKey.parse(hex).get() }

    @Test("the order that resolves an address heard with the accessory's model: as given, or reversed")
    func bothOrders() throws {
        let reversed = KeyByteOrderFlowTests.reversed(Self.hex)
        var recent = RecentAddresses()
        recent.note(try Self.address(of: Self.hex, prand: 0x123456), model: 0x2014, at: Self.at(0))
        #expect(recent.order(of: try Self.key(Self.hex), model: 0x2014, at: Self.at(1)) == .asGiven)
        #expect(recent.order(of: try Self.key(reversed), model: 0x2014, at: Self.at(1)) == .reversed)
        // Another model's address, no model known, or heard over ten minutes ago: no match.
        #expect(recent.order(of: try Self.key(Self.hex), model: 0x200E, at: Self.at(1)) == nil)
        #expect(recent.order(of: try Self.key(Self.hex), model: nil, at: Self.at(1)) == nil)
        #expect(recent.order(of: try Self.key(Self.hex), model: 0x2014, at: Self.at(601)) == nil)
    }

    @Test("bounded: at most 4,096 addresses, the oldest going; only resolvable private addresses are kept")
    func bounded() throws {
        var recent = RecentAddresses()
        let first = try Self.address(of: Self.hex, prand: 0x000001)
        recent.note(first, model: 0x2014, at: Self.at(0))
        recent.note(BluetoothAddress(rawValue: 0xC0_0000_0000_01), model: 0x2014, at: Self.at(0))
        #expect(recent.count == 1, "a static random address is not an RPA")
        for index in 0..<5_000 {
            recent.note(BluetoothAddress(rawValue: 0x40_0000_0001_00 + UInt64(index)), model: 0x2014, at: Self.at(0.01 * Double(index)))
        }
        #expect(recent.count == RecentAddresses.capacity)
        #expect(recent.order(of: try Self.key(Self.hex), model: 0x2014, at: Self.at(60)) == nil, "the oldest went")
    }
}
