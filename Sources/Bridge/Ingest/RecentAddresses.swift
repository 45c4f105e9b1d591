import AccessoryKit
import Telemetry

/// The resolvable private addresses heard lately advertising Apple proximity pairing, and the
/// model each advertised: a key given now is tried against them in both byte orders, so the
/// order that resolves the accessory is usually known at once (household.md, "Keys that users
/// can actually get"), even while the accessory is silent.
///
/// Bounded: at most ``capacity`` addresses, none older than ``maximumAgeMilliseconds``; when
/// full the oldest goes.
struct RecentAddresses {
    static let capacity = 4_096
    static let maximumAgeMilliseconds: Int64 = 600_000
    static let renoteMilliseconds: Int64 = 60_000

    private struct Heard {
        var model: UInt16
        var at: Timestamp
    }

    private var heard: [BluetoothAddress: Heard] = [:]
    /// Arrival order, for evicting the oldest (an address heard again is moved to the end
    /// lazily: its stale position is skipped when it comes up).
    private var order: [(address: BluetoothAddress, at: Timestamp)] = []
    private var head = 0

    var count: Int { heard.count }

    /// An unattributed resolvable private address advertised proximity pairing with `model`.
    mutating func note(_ address: BluetoothAddress, model: UInt16, at now: Timestamp) {
        guard address.isResolvablePrivate else { return }
        // An address heard again within a minute keeps its place: an accessory advertises
        // several times a second, and its every advertisement would lengthen `order`.
        if let known = heard[address], now.milliseconds(since: known.at) < Self.renoteMilliseconds, known.model == model { return }
        if heard[address] == nil && heard.count >= Self.capacity { evictOldest() }
        heard[address] = Heard(model: model, at: now)
        order.append((address, now))
        compact()
    }

    /// The byte order of `key` that resolves one of the addresses heard within the last ten
    /// minutes advertising `model`, else nil (also when the accessory's model is not known: a
    /// match from just any of thousands of addresses would be a guess). The as-given order is
    /// tried first.
    func order(of key: AccessoryKey, model: UInt16?, at now: Timestamp) -> IRKOrder? {
        guard let model else { return nil }
        let candidates = IRKOrder.notYet.candidates(key.bytes).compactMap { order, bytes in
            IdentityResolvingKey(bytes: bytes).map { (order, $0) }
        }
        for (address, entry) in heard.sorted(by: { $0.value.at > $1.value.at }) {
            guard now.milliseconds(since: entry.at) <= Self.maximumAgeMilliseconds else { continue }
            guard entry.model == model else { continue }
            if let match = candidates.first(where: { $0.1.resolves(address) }) { return match.0 }
        }
        return nil
    }

    private mutating func evictOldest() {
        while head < order.count {
            let (address, at) = order[head]
            head += 1
            if heard[address]?.at == at {
                heard[address] = nil
                return
            }
        }
    }

    /// Drops what is too old and, now and then, the positions already passed.
    private mutating func compact() {
        guard let newest = order.last?.at else { return }
        while head < order.count, newest.milliseconds(since: order[head].at) > Self.maximumAgeMilliseconds {
            let (address, at) = order[head]
            if heard[address]?.at == at { heard[address] = nil }
            head += 1
        }
        if head > Self.capacity {
            order.removeFirst(head)
            head = 0
        }
    }
}
