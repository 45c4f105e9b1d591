extension ConfigurationDecoder {
    /// The longest room name: Home Assistant's area names are short, and the name becomes a
    /// sensor state and an attribute.
    static let maximumRoomNameLength = 64

    /// The `rooms:` mapping, heard node (gateway) name to room name. A key is a gateway name as
    /// the gateway's topics carry it, so a single topic level (no `/`, `+` or `#`); a value is
    /// 1-64 characters once trimmed. Several nodes may share a room.
    func rooms(_ node: YAMLNode?) -> [String: String] {
        guard let node, !node.isNull else { return [:] }
        guard case let .mapping(entries) = node.content else {
            fail("rooms", "expected a mapping of node names to room names (esp32-3f2a: Kitchen), found \(node.kindName)", at: node)
            return [:]
        }
        var rooms: [String: String] = [:]
        var firstKeys: [String: YAMLNode] = [:]
        for entry in entries {
            guard let key = entry.key.scalar, !key.isNull, !key.value.isEmpty else {
                fail("rooms", "a node name must be a non-empty plain name, found \(entry.key.kindName)", at: entry.key)
                continue
            }
            let name = key.value
            let path = "rooms.\(name)"
            if let first = firstKeys[name] {
                fail(path, "duplicate node (first given at \(first.origin))", at: entry.key)
                continue
            }
            firstKeys[name] = entry.key
            if name.contains("/") || name.contains("+") || name.contains("#") {
                fail(path, "a node name is one topic level, as its gateway's topics carry it: no /, + or #", at: entry.key)
                continue
            }
            guard entry.value.scalar != nil, !entry.value.isNull else {
                fail(path, "expected a room name, found \(entry.value.kindName)", at: entry.value)
                continue
            }
            guard let room = string(entry.value, at: path)?.trimmingWhitespace else { continue }
            if room.isEmpty {
                fail(path, "the room name must not be empty (leave the node out to keep its name)", at: entry.value)
            } else if room.count > Self.maximumRoomNameLength {
                fail(path, "the room name is longer than \(Self.maximumRoomNameLength) characters", at: entry.value)
            } else if room.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                fail(path, "the room name must not contain control characters", at: entry.value)
            } else {
                rooms[name] = room
            }
        }
        return rooms
    }
}
