import AccessoryKit
import Configuration
import Foundation
import JSON
import MQTT
import Storage
import Telemetry
import TestSupport

@testable import Bridge

/// A compressed week of one household (issue "Found again after a night"), on an injected
/// clock: every advertisement goes through the bridge's own stages, without MQTT. ``Ingest``
/// decides whose it is, ``RuntimeCore`` applies it to the engine and stores it in a real
/// SQLite database, and a restart builds both again from that database, as `aabridge run`
/// does. What is published is not looked at: whose an advertisement is, is the sighting
/// Ingest hands the engine.
///
/// Each resident pair is paired from the picker on the first morning, and then every day:
/// out of its case in the morning in the room its case sleeps in (from a new address, after
/// the night), moved between rooms during the day, back in that room for the last half hour,
/// and silent in the closed case for the night. While out it advertises every
/// ``advertisementSeconds`` and rotates its address every 15 min. A neighbour's pair passes
/// the hall every morning for a few minutes, from a new address each day. Each gateway hears
/// only its own room, except that a pair walking from one room to the next is heard by both
/// for a minute. Batteries are as a pair's own: full each morning after the night in the
/// case, draining while out at a rate of the pair's own (its owner's listening), the right bud
/// a little faster; the case level is unknown while both buds are out (the frames of a bud in
/// the case carry it).
final class HouseholdWeek {
    struct Pair {
        var name: String
        var model: UInt16
        var colour: UInt8
        var resident: Bool
        /// Where its case sleeps (a resident's), or the gateway it passes (the neighbour's).
        var home: String
        /// The rooms its owner spends the day in.
        var rooms: [String]

        init(_ name: String, model: UInt16, colour: UInt8 = 0, home: String, rooms: [String] = [], resident: Bool = true) {
            self.name = name
            self.model = model
            self.colour = colour
            self.home = home
            self.rooms = rooms.isEmpty ? [home] : rooms
            self.resident = resident
        }
    }

    /// What the week came to, per household.
    struct Report: CustomStringConvertible {
        var name: String
        /// Resident pairs that advertised for over an hour with none of it attributed to them.
        var lost = 0
        /// Advertisements attributed to an accessory that is not the pair's own.
        var wrong = 0
        /// Per morning of a resident pair after the first: seconds from its first advertisement
        /// to the first one attributed to it (nil: never that day).
        var reattach: [Double?] = []
        /// Addresses listed as look-alikes (`lookalikeHeard`).
        var lookalikesOffered = 0
        var advertisements = 0
        var restarts = 0

        var description: String {
            let found = reattach.compactMap(\.self).sorted()
            let median = found.isEmpty ? "-" : String(format: "%.0f s", found[found.count / 2])
            let worst = found.last.map { String(format: "%.0f s", $0) } ?? "-"
            let missed = reattach.count - found.count
            return "\(name): \(advertisements) advertisements, \(restarts) restarts; lost \(lost), wrong attachments \(wrong); "
                + "re-attached \(found.count) of \(reattach.count) mornings (median \(median), worst \(worst), \(missed) not that day); "
                + "look-alikes offered \(lookalikesOffered)"
        }
    }

    static let advertisementSeconds: Int64 = 5
    static let rotationSeconds: Int64 = 15 * 60
    static let lostSeconds: Int64 = 3600
    static let day: Int64 = 86_400

    private let pairs: [Pair]
    private let name: String
    private let directory: URL
    private let configuration: BridgeConfiguration
    private var core: RuntimeCore
    private var ingest: IngestFeed
    private var generator: SplitMix64
    private var report: Report

    /// Per pair: its address now, the accessory it was paired as, and the bookkeeping of
    /// the measures.
    private struct Live {
        var address: BluetoothAddress
        var id: BluetoothAddress?
        var out = false
        var room: String
        var nextRotation: Int64 = 0
        var morning: Int64?
        var unattributedSince: Int64?
        var countedLost = false
        /// When it last came out of its case, and how many points an hour its buds drain.
        var outSince: Int64 = 0
        var drainPerHour: Int64 = 5
    }
    private var live: [Live] = []

    init(_ name: String, pairs: [Pair], seed: UInt64) throws {
        self.name = name
        self.pairs = pairs
        generator = SplitMix64(seed: seed)
        report = Report(name: name)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-week-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let yaml = """
            mqtt:
              server: mqtt://127.0.0.1:1
            homeassistant:
              enabled: false
            storage:
              path: \(directory.appendingPathComponent("aabridge.sqlite3").path)
            log:
              level: error
            setup:
              supports: [bluetooth]
              bluetooth:
                company_identifiers: [0x004C]
            products:
              - name: AirPods or Beats
                hardware: inEarBud
                capabilities: [audioSwitching, placement]
                auto_register: true
                placement_decoder: apple_proximity
                setup_options: [rename]
                descriptor:
                  bluetooth_company_identifier: 0x004C
                  bluetooth_manufacturer_data_blob: "0719"
                  bluetooth_manufacturer_data_mask: "ffff"
            gateways:
              - name: omg
                format: openmqttgateway
            switching:
              availability_timeout_s: 120

            """
        configuration = try ConfigurationLoader.load(yaml: yaml, environment: [:], hostname: "week").get()
        (core, ingest) = try Self.start(configuration)
        live = pairs.map { Live(address: BluetoothAddress(rawValue: 0), room: $0.home) }
        for index in pairs.indices {
            live[index].address = randomAddress()
            live[index].drainPerHour = random(3...8)
        }
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// The stages over the database, as a start of `aabridge run` builds them.
    private static func start(_ configuration: BridgeConfiguration) throws -> (RuntimeCore, IngestFeed) {
        let store = try AccessoryStore(path: configuration.storage.path)
        let core = RuntimeCore(
            engine: BridgeEngine(configuration: configuration.engine, restored: try store.load()),
            storage: StorageWorker(store: store), diagnostics: Diagnostics(logger: BridgeLogger(minimum: .error)),
            ownership: .solo())
        let ingest = IngestFeed(configuration: configuration, engine: core.view)
        return (core, ingest)
    }

    private func restart(at now: Int64) async throws {
        await core.flushDeferredWrites(at: Self.time(now))
        _ = await core.perform(.invalidate, at: Self.time(now))
        await core.storage.close()
        (core, ingest) = try Self.start(configuration)
        _ = await perform(.activate, at: now)
        report.restarts += 1
    }

    /// The output step of BridgeRuntime without the Publisher: Ingest follows what changed.
    @discardableResult
    private func perform(_ work: RuntimeCore.Work, at now: Int64) async -> RuntimeCore.Outcome {
        let outcome = await core.perform(work, at: Self.time(now))
        ingest.applied(outcome.outputs)
        return outcome
    }

    private static func time(_ seconds: Int64) -> Timestamp { Timestamp(milliseconds: 1_800_000_000_000 + seconds * 1000) }

    private func randomAddress() -> BluetoothAddress {
        // A resolvable private address: the top two bits 01.
        let value = (UInt64.random(in: 0..<(1 << 46), using: &generator)) | (1 << 46)
        return BluetoothAddress(rawValue: value)
    }

    private func random(_ range: ClosedRange<Int64>) -> Int64 { Int64.random(in: range, using: &generator) }

    /// One proximity-pairing advertisement of pair `index`, heard by `gateway`.
    private func advertise(_ index: Int, gateway: String, at now: Int64) async {
        let pair = pairs[index]
        let address = live[index].address
        let model = [UInt8(pair.model >> 8), UInt8(pair.model & 0xFF)]
        // Model as the bytes appear (0x0E20 for 0x200E), in ear, the buds' levels in tenths (the
        // primary's in the low nibble), case unknown, lid, colour, 0, 16 bytes.
        let hoursOut = now - live[index].outSince
        let drained = live[index].drainPerHour * hoursOut / 3600
        let primary = UInt8(max(0, 100 - drained) / 10), secondary = UInt8(max(0, 100 - drained - drained / 8) / 10)
        var frame: [UInt8] = [0x07, 0x19, 0x01, model[1], model[0], 0x0B, secondary << 4 | primary, 0x0F, 0x31, pair.colour, 0x00]
        for _ in 0..<16 { frame.append(UInt8.random(in: 0...255, using: &generator)) }
        let data = "4c00" + frame.map { String(format: "%02x", $0) }.joined()
        let topic = "home/\(gateway)/BTtoMQTT/\(address.topicID)"
        let payload = #"{"id":"\#(address)","mac_type":1,"manufacturerdata":"\#(data)","rssi":\#(-50 - random(0...10))}"#
        let outcome = ingest.ingest(
            MQTTMessage(topic: topic, payload: Array(payload.utf8)), route: ingest.router.route(topic), at: Self.time(now))
        report.advertisements += 1
        if outcome.lookalikeHeard { report.lookalikesOffered += 1 }
        if let window = ProcessInfo.processInfo.environment["AABRIDGE_WEEK_TRACE"],
            name == ProcessInfo.processInfo.environment["AABRIDGE_WEEK_HOUSEHOLD"],
            let from = Int64(window.split(separator: "-")[0]), let to = Int64(window.split(separator: "-")[1]), (from...to).contains(now)
        {
            var attributed = "-"
            if case .telemetry(.sighting(let sighting), _, _) = outcome.effect {
                attributed = "\(sighting.accessoryID) \(sighting.attribution)"
            }
            print(
                "TRACE \(now / Self.day) \(now % Self.day / 3600):\(now % 3600 / 60):\(now % 60) \(pairs[index].name) \(address) @\(gateway) -> \(attributed) \(outcome.notice?.message ?? "") \(outcome.announcement ?? "")"
            )
        }
        guard case .telemetry(let input, let context, _) = outcome.effect, case .sighting(let sighting) = input else {
            // Nobody's advertisement (Ingest hands the engine no sighting of it): this pair was
            // heard and counted for no one.
            if case .none = outcome.effect { observe(index, attributedTo: nil, at: now) }
            return
        }
        await perform(.telemetry(input, context: context), at: now)
        let attributedTo = core.view.knows(sighting.accessoryID) ? sighting.accessoryID : nil
        observe(index, attributedTo: attributedTo, at: now)
    }

    private func observe(_ index: Int, attributedTo: BluetoothAddress?, at now: Int64) {
        let own = live[index].id
        if let attributedTo, attributedTo != own {
            report.wrong += 1
            if report.wrong <= 5, ProcessInfo.processInfo.environment["AABRIDGE_WEEK_DEBUG"] != nil {
                let day = now / Self.day, clock = now % Self.day
                print(
                    "WRONG day \(day) \(clock / 3600):\(clock % 3600 / 60) \(pairs[index].name) at \(live[index].address) in \(live[index].room) -> \(attributedTo) how \(core.view.followedAttribution(of: attributedTo)) own \(String(describing: own))"
                )
            }
        }
        guard pairs[index].resident, own != nil else { return }
        if attributedTo == own {
            if let morning = live[index].morning {
                report.reattach.append(Double(now - morning))
                live[index].morning = nil
            }
            live[index].unattributedSince = nil
            live[index].countedLost = false
        } else {
            let since = live[index].unattributedSince ?? now
            live[index].unattributedSince = since
            if now - since > Self.lostSeconds && !live[index].countedLost {
                if ProcessInfo.processInfo.environment["AABRIDGE_WEEK_DEBUG"] != nil {
                    let day = now / Self.day, clock = now % Self.day
                    print(
                        "LOST day \(day) \(clock / 3600):\(clock % 3600 / 60) \(pairs[index].name) at \(live[index].address) in \(live[index].room) since \(since % Self.day / 3600):\(since % 3600 / 60) lookalikes \(ingest.lookalikes.tracker.newest.map { "\($0.address) \($0.firstGateway) \($0.couldBe)" })"
                    )
                }
                report.lost += 1
                live[index].countedLost = true
            }
        }
    }

    /// A resident's day: out of the case at `wake`, in its home room for the first and the
    /// last half hour, elsewhere in between (changing every 1-2 h), into the case at `sleep`.
    private struct Day {
        var wake: Int64
        var sleep: Int64
        var moves: [(at: Int64, room: String)]
    }

    private func plan(_ pair: Pair, day: Int64) -> Day {
        let start = day * Self.day
        let wake = start + 7 * 3600 + random(0...45 * 60)
        let sleep = start + 22 * 3600 + 30 * 60 + random(0...60 * 60)
        var moves: [(Int64, String)] = [(wake, pair.home)]
        var at = wake + 1800
        while at < sleep - 1800 {
            moves.append((at, pair.rooms[Int(random(0...Int64(pair.rooms.count - 1)))]))
            at += random(3600...7200)
        }
        moves.append((sleep - 1800, pair.home))
        return Day(wake: wake, sleep: sleep, moves: moves)
    }

    /// Runs the week: pairing on the first morning, restarts on day 2 at 14:00 and day 4 at
    /// 03:00 (a night), seven days.
    func run() async throws -> Report {
        _ = await perform(.activate, at: 0)
        let restarts: [Int64] = [2 * Self.day + 14 * 3600, 4 * Self.day + 3 * 3600]
        var plans: [[Day]] = pairs.map { pair in (Int64(0)..<7).map { plan(pair, day: $0) } }
        // The neighbour passes the hall each morning, 08:00-08:40, for 2-4 minutes.
        for (index, pair) in pairs.enumerated() where !pair.resident {
            plans[index] = (Int64(0)..<7).map { day in
                let pass = day * Self.day + 8 * 3600 + random(0...40 * 60)
                return Day(wake: pass, sleep: pass + random(120...240), moves: [(pass, pair.home)])
            }
        }
        var restartIndex = 0
        var now: Int64 = 0
        while now < 7 * Self.day {
            if restartIndex < restarts.count, now >= restarts[restartIndex] {
                try await restart(at: now)
                restartIndex += 1
            }
            let day = Int(now / Self.day)
            for index in pairs.indices {
                let plan = plans[index][day]
                let out = now >= plan.wake && now < plan.sleep
                if out && !live[index].out {
                    // Out of the case: from a new address (it rotated in the case overnight).
                    if day > 0 || !pairs[index].resident { live[index].address = randomAddress() }
                    live[index].nextRotation = now + Self.rotationSeconds
                    live[index].outSince = now
                    if day > 0 && pairs[index].resident {
                        // The day before ended without it found again: that morning is missed.
                        if live[index].morning != nil { report.reattach.append(nil) }
                        live[index].morning = now
                    }
                    live[index].unattributedSince = nil
                }
                live[index].out = out
                guard out else { continue }
                // Walking from one room to the next it is heard by both for a minute.
                var previousRoom: String?
                if let moveIndex = plan.moves.lastIndex(where: { $0.at <= now }) {
                    live[index].room = plan.moves[moveIndex].room
                    if moveIndex > 0, now - plan.moves[moveIndex].at < 60, plan.moves[moveIndex - 1].room != live[index].room {
                        previousRoom = plan.moves[moveIndex - 1].room
                    }
                }
                if now >= live[index].nextRotation {
                    live[index].address = randomAddress()
                    live[index].nextRotation = now + Self.rotationSeconds + random(-60...60)
                }
                if day == 0 && pairs[index].resident && live[index].id == nil {
                    try await pair(index, at: now)
                }
                if let previousRoom { await advertise(index, gateway: previousRoom, at: now) }
                await advertise(index, gateway: live[index].room, at: now)
            }
            while let deadline = core.nextDeadline, deadline <= Self.time(now) { await perform(.tick, at: now) }
            if let expiry = ingest.lookalikes.tracker.nextExpiry, expiry <= Self.time(now) {
                ingest.lookalikes.tracker.expire(at: Self.time(now))
            }
            if now % 60 == 0 { await core.flushDeferredWrites(at: Self.time(now)) }
            now += Self.advertisementSeconds
        }
        for index in pairs.indices where pairs[index].resident && live[index].morning != nil { report.reattach.append(nil) }
        await core.flushDeferredWrites(at: Self.time(now))
        await core.storage.close()
        return report
    }

    /// Pairs resident pair `index` from the picker, as a user would on the first morning: the
    /// picker shown, one advertisement heard, the candidate selected.
    private func pair(_ index: Int, at now: Int64) async throws {
        if core.view.picker == nil {
            await perform(.request(.showPicker(products: nil, timeout: .default), name: "picker/show"), at: now)
        }
        await advertise(index, gateway: live[index].room, at: now)
        let id = live[index].address
        let request = try ingest.ingest.prepare(.selectCandidate(id, name: pairs[index].name), at: Self.time(now)).get()
        let outcome = await perform(.request(request, name: "picker/select"), at: now)
        guard case .success? = outcome.result else {
            throw BrokerError("could not pair \(pairs[index].name): \(String(describing: outcome.result))")
        }
        live[index].id = id
        if pairs.indices.allSatisfy({ !pairs[$0].resident || live[$0].id != nil || $0 == index }) {
            await perform(.request(.dismissPicker, name: "picker/dismiss"), at: now)
        }
    }
}
