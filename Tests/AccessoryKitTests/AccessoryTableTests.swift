import TestSupport
import Testing

@testable import AccessoryKit

/// AccessoryTable answers as a `[BluetoothAddress: Value]` does, whatever the order of its slots.
@Suite("AccessoryTable: a dictionary's answers, stored densely")
struct AccessoryTableTests {
    static func address(_ n: UInt64) -> BluetoothAddress { BluetoothAddress(rawValue: 0xA0B0_C000_0000 | n) }

    @Test("random insertions, updates and removals: the same answers as a Dictionary after every step", arguments: 0..<8)
    func sameAsDictionary(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var table = AccessoryTable<Int>()
        var model: [BluetoothAddress: Int] = [:]
        for step in 0..<2_000 {
            let key = Self.address(UInt64.random(in: 0..<64, using: &rng))
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<5: table[key] = step; model[key] = step
            case 5..<7: #expect(table.removeValue(forKey: key) == model.removeValue(forKey: key))
            case 7: table[key] = nil; model[key] = nil
            case 8:
                // In place through the slot, as the engine changes its records.
                if let index = table.index(forKey: key) {
                    table.values[index] += 1
                    model[key]! += 1
                } else {
                    #expect(model[key] == nil)
                }
            case 9 where step % 2 == 0:
                // Removed through the optional the subscript yields (its `_modify` path).
                #expect(table[key].take() == model.removeValue(forKey: key))
            default: table[key]? += 10; model[key]? += 10
            }
            #expect(table.count == model.count)
            #expect(table.isEmpty == model.isEmpty)
            #expect(Dictionary(uniqueKeysWithValues: table.map { ($0.key, $0.value) }) == model)
            #expect(Set(table.keys) == Set(model.keys))
            for (index, key) in table.keys.enumerated() { #expect(table.index(forKey: key) == index) }
        }
        #expect(table.compactMapValues { $0 % 2 == 0 ? $0 : nil } == model.compactMapValues { $0 % 2 == 0 ? $0 : nil })
    }

    @Test("a key given twice when built from pairs: the last value wins")
    func lastWins() {
        let table = AccessoryTable([(Self.address(1), "first"), (Self.address(2), "other"), (Self.address(1), "last")])
        #expect(table.count == 2)
        #expect(table[Self.address(1)] == "last")
        #expect(table[Self.address(2)] == "other")
        #expect(table[Self.address(3)] == nil)
    }

    @Test("equal and equally hashed whatever the order of the slots; a different value or key is not equal")
    func equalityIgnoresOrder() {
        let forward = AccessoryTable((1...50).map { (Self.address($0), Int($0)) })
        var backward = AccessoryTable((1...50).reversed().map { (Self.address($0), Int($0)) })
        #expect(forward.keys != backward.keys)
        #expect(forward == backward)
        #expect(forward.hashValue == backward.hashValue)
        backward[Self.address(7)] = 0
        #expect(forward != backward)
        backward[Self.address(7)] = 7
        #expect(forward == backward)
        backward.removeValue(forKey: Self.address(7))
        backward[Self.address(99)] = 7
        #expect(forward != backward)
    }

    @Test("a change through the subscript is made in place: the value's storage is not copied (no copy out and back)")
    func changedInPlace() {
        var table = AccessoryTable((1...3).map { (Self.address($0), [Int]()) })
        for n: UInt64 in 1...3 { table.values[table.index(forKey: Self.address(n))!].reserveCapacity(16) }
        func storage(_ n: UInt64) -> UnsafeRawPointer? {
            table.values[table.index(forKey: Self.address(n))!].withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
        }
        let before = storage(2)
        table[Self.address(2)]?.append(1)
        table[Self.address(2)]?.append(2)
        // A copy out of the table would share the buffer, and the append would copy it.
        #expect(storage(2) == before)
        #expect(table[Self.address(2)] == [1, 2])
        #expect(table[Self.address(1)] == [] && table[Self.address(3)] == [])
    }

    /// Counts its live instances: what the table moves in and out must be neither lost nor doubled.
    final class Counted {
        nonisolated(unsafe) static var live = 0
        let value: Int
        init(_ value: Int) {
            self.value = value
            Self.live += 1
        }
        deinit { Self.live -= 1 }
    }

    @Test("values moved out and back (changed, replaced, removed through the optional) are each released exactly once")
    func movedValuesReleased() {
        do {
            var table = AccessoryTable((1...5).map { (Self.address($0), Counted(Int($0))) })
            #expect(Counted.live == 5)
            table[Self.address(2)]? = Counted(20)
            #expect(Counted.live == 5)
            #expect(table[Self.address(2)]?.value == 20)
            _ = table[Self.address(3)].take()
            _ = table[Self.address(5)].take()
            _ = table[Self.address(1)].take()
            #expect(Counted.live == 2)
            #expect(Set(table.keys) == [Self.address(2), Self.address(4)])
            #expect(table[Self.address(4)]?.value == 4)
            _ = table[Self.address(4)].take()
            _ = table[Self.address(2)].take()
            #expect(table.isEmpty)
            #expect(Counted.live == 0)
            table[Self.address(9)]? = Counted(9)
            #expect(table.isEmpty && Counted.live == 0)
        }
        #expect(Counted.live == 0)
    }

    @Test("a copy is a value: changing it leaves the original as it was")
    func valueSemantics() {
        var original = AccessoryTable([(Self.address(1), [1]), (Self.address(2), [2])])
        var copy = original
        copy[Self.address(1)]?.append(9)
        copy.removeValue(forKey: Self.address(2))
        #expect(original[Self.address(1)] == [1])
        #expect(original[Self.address(2)] == [2])
        original[Self.address(3)] = [3]
        #expect(copy[Self.address(3)] == nil)
        #expect(copy[Self.address(1)] == [1, 9])
    }
}
