import AccessoryKit
import JSON
import Testing

@testable import Bridge

/// What the Publisher keeps of each published state: the text for `bridge/accessories` and for
/// publishing an unchanged state again, stored without its keys but given back as published.
@Suite("Published states")
struct PublishedStatesTests {
    static func text(_ id: String, rssi: Int) -> [UInt8] {
        JSONValue.object([
            ("id", .string(id)), ("name", "Kitchen \"AirPods\""), ("routes", ["11:22:33:44:55:66"]), ("rssi", .int(rssi)),
            ("battery", ["left": 80]), ("last_error", nil),
        ]).bytes
    }

    @Test("the text of the state last stored comes back for its hash only, byte for byte")
    func textForTheSameHash() throws {
        let states = PublishedStates()
        let id = try #require(BluetoothAddress("A1:B2:C3:D4:E5:F6"))
        let first = Self.text("A1:B2:C3:D4:E5:F6", rssi: -60)
        states.store(id, hash: 1, bytes: first)
        #expect(states.text(of: id, hash: 1) == first)
        #expect(states.text(of: id, hash: 2) == nil, "a changed state is built again")
        let second = Self.text("A1:B2:C3:D4:E5:F6", rssi: -61)
        states.store(id, hash: 2, bytes: second)
        #expect(states.text(of: id, hash: 2) == second)
        #expect(states.text(of: id, hash: 1) == nil)
    }

    @Test("the list is every stored text, by id, as stored; a removal takes it out and marks the list changed")
    func list() throws {
        let states = PublishedStates()
        let ids = ["C0:00:00:00:00:03", "A0:00:00:00:00:01", "B0:00:00:00:00:02"]
        for (number, id) in ids.enumerated() {
            states.store(try #require(BluetoothAddress(id)), hash: number, bytes: Self.text(id, rssi: -50 - number))
        }
        let expected =
            "["
            + ids.sorted().map { id in String(decoding: Self.text(id, rssi: -50 - ids.firstIndex(of: id)!), as: UTF8.self) }
            .joined(separator: ",") + "]"
        #expect(String(decoding: states.list(), as: UTF8.self) == expected)
        #expect(try JSONParser.parse(String(decoding: states.list(), as: UTF8.self)).arrayValue?.count == 3)
        states.listIsCurrent()
        states.removed(try #require(BluetoothAddress("B0:00:00:00:00:02")))
        #expect(states.changed)
        #expect(
            String(decoding: states.list(), as: UTF8.self)
                == "[\(String(decoding: Self.text("A0:00:00:00:00:01", rssi: -51), as: UTF8.self)),"
                + "\(String(decoding: Self.text("C0:00:00:00:00:03", rssi: -50), as: UTF8.self))]")
        states.keep { $0 == BluetoothAddress("C0:00:00:00:00:03") }
        #expect(
            String(decoding: states.list(), as: UTF8.self)
                == "[\(String(decoding: Self.text("C0:00:00:00:00:03", rssi: -50), as: UTF8.self))]")
    }
}
