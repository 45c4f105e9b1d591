import AccessoryKit

/// The loop's engine. ``RuntimeCore`` is its only writer (the commit policy decides when a
/// step's state is kept); every other stage and component reads it through ``EngineView``.
final class EngineHolder {
    private var stored: BridgeEngine

    init(_ engine: BridgeEngine) { stored = engine }

    /// The engine, lent rather than copied. A stored property of a class is read by copying
    /// its value out, and a copy of the engine retains every one of its tables: a few
    /// thousand instructions for each look Ingest takes per message (docs/performance.md).
    /// The coroutine accessors lend the stored value for the length of the access instead.
    var engine: BridgeEngine {
        _read { yield stored }
        _modify { yield &stored }
    }
}

/// What the stages read of the engine, as it is now: a window, never a copy kept in step.
///
/// Tables of each accessory's product, keys or followed address kept beside the engine
/// would have to be updated on every path that changes it, and one path that forgets (a
/// cluster reload) attributes advertisements by an older engine; reading the engine itself
/// cannot fall behind. The per-message reads look into the engine's tables in place;
/// ``engine`` hands out the whole value, for what is read now and then.
struct EngineView {
    private let holder: EngineHolder

    init(_ holder: EngineHolder) { self.holder = holder }

    /// The engine (a copy of its value: one retain per table, for snapshots and counts).
    var engine: BridgeEngine { holder.engine }

    /// Whether `id` is a known accessory's.
    func knows(_ id: BluetoothAddress) -> Bool { holder.engine.product(of: id) != nil }

    /// The accessory `address` names: its id, or its alias (which reports and `/set` may use;
    /// an advertisement never is attributed by an alias).
    func accessory(idOrAlias address: BluetoothAddress) -> BluetoothAddress? {
        knows(address) ? address : holder.engine.accessory(aliasedTo: address)
    }

    /// The accessory whose alias `address` is.
    func accessory(aliasedTo address: BluetoothAddress) -> BluetoothAddress? { holder.engine.accessory(aliasedTo: address) }

    /// What re-attaching the accessory needs (its profile, its last room).
    func trace(of id: BluetoothAddress) -> AccessoryTrace { holder.engine.trace(of: id) }

    /// How the accessory followed to an address was found there (followed, or re-attached).
    func followedAttribution(of id: BluetoothAddress) -> IdentityAttribution { holder.engine.followedAttribution(of: id) }

    /// The away accessories a look-alike with `profile` could be, with their last rooms.
    func awayAccessories(matching profile: ProximityProfile) -> [(id: BluetoothAddress, room: String?)] {
        holder.engine.awayAccessories(matching: profile)
    }

    /// The proximity profile of a picker candidate's last advertisement.
    func candidateProfile(_ id: BluetoothAddress) -> ProximityProfile? { holder.engine.picker?.candidate(id)?.profile }

    /// The product of a known accessory (nil: the address is no accessory's id).
    func product(of id: BluetoothAddress) -> String? { holder.engine.product(of: id) }

    /// A known accessory's product and keys (what its advertisement is decoded with).
    func advertiser(_ id: BluetoothAddress) -> (product: String, keys: AccessoryKeys)? { holder.engine.advertiser(id) }

    /// The accessory last followed to `address` without a key.
    func accessory(followedTo address: BluetoothAddress) -> BluetoothAddress? { holder.engine.accessory(followedTo: address) }

    /// Where an accessory was last followed to without a key.
    func followedAddress(of id: BluetoothAddress) -> BluetoothAddress? { holder.engine.followedAddress(of: id) }

    /// Every accessory's keys (for the address resolver, rebuilt when they change).
    var keys: [BluetoothAddress: AccessoryKeys] { holder.engine.keys }

    /// The presented picker (nil when idle).
    var picker: Picker? { holder.engine.picker }

    /// Whether the picker is presented (only then is an unknown advertiser's model decoded).
    var isPickerPresented: Bool { holder.engine.picker != nil }

    /// How many accessories are known.
    var accessoryCount: Int { holder.engine.session.accessories.count }

    /// An accessory's state object.
    func status(of id: BluetoothAddress) -> AccessoryStatus? { holder.engine.status(of: id) }
}
