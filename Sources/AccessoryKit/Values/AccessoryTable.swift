/// One value per accessory, kept densely: a hash table from the accessory's address to a slot,
/// and the values in an array exactly as long as their number.
///
/// A `[BluetoothAddress: Value]` keeps the values themselves in its hash table, which is at
/// most three quarters full and doubles when it would be fuller: 100,000 accessories occupy
/// 262,144 buckets, each as wide as a value (320 bytes for the engine's records, 216 for an
/// ``Accessory``), so most of the memory is empty buckets. Here the table holds one `Int` per
/// bucket and only the array holds values (docs/performance.md, "Memory").
///
/// Lookups, insertion and removal are O(1) as with a dictionary. Removing moves the last value
/// into the freed slot, so the order of ``keys`` and ``values`` is no order to rely on — a
/// dictionary's is not either; callers sort where order matters.
public struct AccessoryTable<Value> {
    /// The slot of each key in ``keys`` and ``values``.
    private var slots: [BluetoothAddress: Int]
    /// The keys, slot by slot.
    public private(set) var keys: [BluetoothAddress]
    /// The values, slot by slot. Changed in place through ``index(forKey:)`` inside the module;
    /// only this type changes how many there are.
    public internal(set) var values: [Value]

    /// An empty table.
    public init() {
        slots = [:]
        keys = []
        values = []
    }

    /// A table of `pairs`; for a key given twice, the last value wins (as
    /// `Dictionary(_:uniquingKeysWith: { _, last in last })`).
    public init(_ pairs: some Sequence<(BluetoothAddress, Value)>) {
        self.init()
        let pairs = Array(pairs)
        slots.reserveCapacity(pairs.count)
        keys.reserveCapacity(pairs.count)
        values.reserveCapacity(pairs.count)
        for (key, value) in pairs { self[key] = value }
    }

    /// How many accessories have a value.
    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    /// The value of an accessory; setting `nil` removes it.
    ///
    /// Changed in place: `table[id]?.field = x` (and every other mutation through the
    /// subscript) moves the value out of its slot for the change and back, instead of copying
    /// it out and assigning the copy back.
    public subscript(key: BluetoothAddress) -> Value? {
        get { slots[key].map { values[$0] } }
        _modify {
            // Absent, or the only value (whose slot a removal through the yielded optional
            // could not fill): the copy, as a get and a set would do.
            guard let slot = slots[key], keys.count > 1 else {
                var value = self[key]
                yield &value
                self[key] = value
                return
            }
            var value: Value? = values.withUnsafeMutableBufferPointer { buffer in (buffer.baseAddress! + slot).move() }
            defer { restore(&value, slot: slot, key: key) }
            yield &value
        }
        set {
            if let newValue {
                if let slot = slots[key] {
                    values[slot] = newValue
                } else {
                    slots[key] = keys.count
                    keys.append(key)
                    values.append(newValue)
                }
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// Puts back the value `_modify` moved out of `slot`, or (set to nil) removes the key,
    /// filling the emptied slot first. `keys.count > 1`.
    private mutating func restore(_ value: inout Value?, slot: Int, key: BluetoothAddress) {
        if let moved = value.take() {
            values.withUnsafeMutableBufferPointer { buffer in (buffer.baseAddress! + slot).initialize(to: moved) }
            return
        }
        // The slot is uninitialised: the last value moves into it (unless it is the last), and
        // the last slot, uninitialised then, gets a copy of another value for removeLast to drop.
        let last = keys.count - 1
        values.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            if slot != last { (base + slot).moveInitialize(from: base + last, count: 1) }
            (base + last).initialize(to: base[0])
        }
        slots.removeValue(forKey: key)
        if slot != last {
            keys.swapAt(slot, last)
            slots[keys[slot]] = slot
        }
        keys.removeLast()
        values.removeLast()
    }

    /// The slot of an accessory's value in ``values``, nil when it has none. Valid until the
    /// next insertion or removal.
    public func index(forKey key: BluetoothAddress) -> Int? { slots[key] }

    /// Removes an accessory's value; returns it, nil when it had none.
    @discardableResult
    public mutating func removeValue(forKey key: BluetoothAddress) -> Value? {
        guard let slot = slots.removeValue(forKey: key) else { return nil }
        let last = keys.count - 1
        if slot != last {
            keys.swapAt(slot, last)
            values.swapAt(slot, last)
            slots[keys[slot]] = slot
        }
        keys.removeLast()
        return values.removeLast()
    }

    /// The accessories whose transformed value is not nil, with it.
    public func compactMapValues<T>(_ transform: (Value) throws -> T?) rethrows -> [BluetoothAddress: T] {
        var result: [BluetoothAddress: T] = [:]
        for (key, value) in zip(keys, values) {
            if let transformed = try transform(value) { result[key] = transformed }
        }
        return result
    }
}

extension AccessoryTable: Sequence {
    /// The pairs, slot by slot, labelled as a dictionary's are.
    public struct Iterator: IteratorProtocol {
        private var pairs: Zip2Sequence<[BluetoothAddress], [Value]>.Iterator

        init(_ table: AccessoryTable) { pairs = zip(table.keys, table.values).makeIterator() }

        public mutating func next() -> (key: BluetoothAddress, value: Value)? {
            pairs.next().map { (key: $0.0, value: $0.1) }
        }
    }

    public func makeIterator() -> Iterator { Iterator(self) }
    public var underestimatedCount: Int { count }
}

extension AccessoryTable: Sendable where Value: Sendable {}
extension AccessoryTable.Iterator: Sendable where Value: Sendable {}

extension AccessoryTable: Equatable where Value: Equatable {
    /// Equal when the same accessories have equal values, whatever their slots.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return zip(lhs.keys, lhs.values).allSatisfy { key, value in rhs[key] == value }
    }
}

extension AccessoryTable: Hashable where Value: Hashable {
    /// Independent of the slots, as a dictionary's hash is of its order: each pair is hashed
    /// on its own and the results combined with XOR.
    public func hash(into hasher: inout Hasher) {
        var combined = 0
        for (key, value) in zip(keys, values) {
            var pair = Hasher()
            pair.combine(key)
            pair.combine(value)
            combined ^= pair.finalize()
        }
        hasher.combine(count)
        hasher.combine(combined)
    }
}
