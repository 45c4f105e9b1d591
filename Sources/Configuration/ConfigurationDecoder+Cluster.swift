extension ConfigurationDecoder {
    static let clusterKeys = ["enabled", "instance", "partitions"]

    /// The `cluster:` section. Whether the storage backend can hold a cluster is checked with
    /// the whole file (``clusterNeedsSharedStorage(_:)``), since `storage:` may come after it.
    func cluster(_ node: YAMLNode?, into cluster: inout ClusterConfiguration) {
        guard let section = fields(node, at: "cluster", allowed: Self.clusterKeys) else { return }
        if let enabled = bool(section["enabled"], at: section.path("enabled")) { cluster.enabled = enabled }
        if let instance = requiredOrDefault(section, "instance") {
            // It is a topic level (bridge/instances/<instance>) and a log word: no wildcards,
            // separators or spaces.
            if instance.count <= 64, instance.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }) {
                cluster.instance = instance
            } else {
                fail(
                    section.path("instance"),
                    "must be 1 to 64 letters, digits, '-', '_' or '.' (it is an MQTT topic level), not '\(instance.prefix(60))'",
                    at: section["instance"])
            }
        }
        if let partitions = integer(
            section["partitions"], at: section.path("partitions"), in: 1...ClusterConfiguration.maximumPartitions)
        {
            cluster.partitions = partitions
        }
    }
}
