/// ESPresense names a device it resolved with one of its `known_irks` `irk:<32 hex digits>`,
/// and puts that id in its topics (`espresense/devices/irk:<hex>/<room>`): a topic level that
/// starts with `irk:` carries a key. Such a level is never echoed (log lines, `bridge/log`,
/// rejections, gateway names, metric labels, Home Assistant's gateway sensors): it shows as
/// ``redactedLevel``, and is never taken as a gateway's name.
public enum KeyedTopic {
    /// What a key-carrying level shows as.
    public static let redactedLevel = "irk:<redacted>"

    /// Whether a topic level carries a key: it starts with `irk:`, in any case.
    public static func carriesKey(_ level: some StringProtocol) -> Bool {
        let utf8 = Array(level.utf8.prefix(4))
        return utf8.count == 4 && zip(utf8, "irk:".utf8).allSatisfy { $0 | 0x20 == $1 | 0x20 }
    }

    /// `topic` with every key-carrying level replaced by ``redactedLevel``.
    public static func redacted(_ topic: String) -> String {
        guard topic.utf8.count >= 4 else { return topic }
        return topic.split(separator: "/", omittingEmptySubsequences: false)
            .map { carriesKey($0) ? redactedLevel : String($0) }
            .joined(separator: "/")
    }
}
