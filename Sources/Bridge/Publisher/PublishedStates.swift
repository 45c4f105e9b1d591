import AccessoryKit
import JSON

/// Each accessory's state object as last published on its topic, which is what a single
/// bridge's `bridge/accessories` lists.
///
/// A 64-bit hash of the state stands for the state (a copy per accessory would double the
/// memory the states take): a state published again unchanged reuses its text. The list is
/// built from these texts: building every state again and hashing it, for a list republished
/// up to 20 times a second while states change, took milliseconds at 1,000 accessories, on the
/// loop (docs/performance.md).
///
/// The texts are kept without their keys (``ObjectTextTemplates``: the 25 keys, about half of
/// a state's bytes, once for all accessories), and a value the same as in the first state
/// stored (`null`, `false`, `[]`, ...) as one byte; what ``text(of:hash:)`` and ``list()`` give
/// is byte for byte the text stored.
final class PublishedStates: AccessoryListing {
    private var texts: [BluetoothAddress: (hash: Int, compact: [UInt8])] = [:]
    private var templates = ObjectTextTemplates()
    private(set) var changed = false

    /// The text published for a state with this hash, when it is the one last published.
    func text(of id: BluetoothAddress, hash: Int) -> [UInt8]? {
        guard let cached = texts[id], cached.hash == hash else { return nil }
        return templates.text(cached.compact)
    }

    /// The text of a state with this hash, as it goes out on the accessory's topic.
    func store(_ id: BluetoothAddress, hash: Int, bytes: [UInt8]) {
        texts[id] = (hash, templates.compact(bytes))
    }

    /// What the list shows changed (a state, a registration): it goes out again when next due.
    func markChanged() { changed = true }

    /// The accessory is gone: its topic was cleared.
    func removed(_ id: BluetoothAddress) {
        texts[id] = nil
        changed = true
    }

    /// Keeps only the accessories `kept` says (after a republish of every state: the others'
    /// texts are no longer what their topics hold).
    func keep(where kept: (BluetoothAddress) -> Bool) {
        texts = texts.filter { kept($0.key) }
    }

    func list() -> [UInt8] {
        Self.array(of: texts, count: { templates.count($0.compact) }, append: { templates.append($0.compact, to: &$1) })
    }

    func listIsCurrent() { changed = false }

    /// `[` + each value's text, by id + `]`, as JSONValue writes an array.
    static func array<Value>(of texts: [BluetoothAddress: Value], _ bytes: (Value) -> [UInt8]) -> [UInt8] {
        array(of: texts, count: { bytes($0).count }, append: { $1.append(contentsOf: bytes($0)) })
    }

    /// The same, for texts kept in another form: `count` gives a text's length, `append` writes it.
    static func array<Value>(
        of texts: [BluetoothAddress: Value], count: (Value) -> Int, append: (Value, inout [UInt8]) -> Void
    ) -> [UInt8] {
        var list: [UInt8] = []
        list.reserveCapacity(2 + texts.values.reduce(0) { $0 + count($1) + 1 })
        list.append(UInt8(ascii: "["))
        for (index, id) in texts.keys.sorted().enumerated() {
            if index > 0 { list.append(UInt8(ascii: ",")) }
            if let text = texts[id] { append(text, &list) }
        }
        list.append(UInt8(ascii: "]"))
        return list
    }
}
