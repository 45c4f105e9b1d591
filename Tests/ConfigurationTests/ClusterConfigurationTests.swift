import Testing

@testable import Configuration

/// `cluster:`: off by default, named after the host, only on PostgreSQL; each mistake at its key path.
@Suite("cluster: several bridges on one PostgreSQL database")
struct ClusterConfigurationTests {
    static let storage = "storage:\n  backend: postgresql\n  url: postgresql://aabridge@db.example/aabridge\n"

    @Test("off by default, the instance named after the host, 64 partitions; the file and the environment set them")
    func defaultsAndKeys() throws {
        let defaults = try ConfigurationLoader.load(yaml: "", hostname: "box-1").get()
        #expect(!defaults.cluster.enabled)
        #expect(defaults.cluster.instance == "box-1")
        #expect(defaults.cluster.partitions == 64)
        let file = try ConfigurationTestSupport.load(Self.storage + "cluster:\n  enabled: true\n  instance: gw-2\n  partitions: 128\n")
        #expect(file.cluster == ClusterConfiguration(hostname: "gw-2", enabled: true, partitions: 128))
        let environment = try ConfigurationTestSupport.load(
            Self.storage,
            environment: ["AABRIDGE_CLUSTER_ENABLED": "true", "AABRIDGE_CLUSTER_INSTANCE": "gw.3", "AABRIDGE_CLUSTER_PARTITIONS": "8"])
        #expect(environment.cluster == ClusterConfiguration(hostname: "gw.3", enabled: true, partitions: 8))
    }

    @Test(
        "each mistake is reported at its key path",
        arguments: [
            ("cluster:\n  enabled: true\n", "cluster.enabled", "set storage.backend: postgresql"),
            (storage + "cluster:\n  instance: \"a/b\"\n", "cluster.instance", "it is an MQTT topic level"),
            (storage + "cluster:\n  instance: \"a b\"\n", "cluster.instance", "it is an MQTT topic level"),
            (storage + "cluster:\n  instance: \"\"\n", "cluster.instance", "must not be empty"),
            (storage + "cluster:\n  partitions: 0\n", "cluster.partitions", "1"),
            (storage + "cluster:\n  partitions: 5000\n", "cluster.partitions", "4096"),
            (storage + "cluster:\n  members: 3\n", "cluster.members", "unknown key"),
        ])
    func mistakes(yaml: String, path: String, message: String) {
        let issues = ConfigurationTestSupport.issues(yaml)
        #expect(issues.map(\.path) == [path], "\(issues)")
        #expect(issues.first?.message.contains(message) == true, "\(issues)")
    }

    @Test("cluster.instance or cluster.partitions without cluster.enabled: true is a warning at its key path; with it, none")
    func settingsWithoutClusterMode() throws {
        let both = try ConfigurationTestSupport.load(Self.storage + "cluster:\n  instance: gw-2\n  partitions: 8\n")
        #expect(both.warnings.map(\.path) == ["cluster.instance", "cluster.partitions"])
        #expect(both.warnings.allSatisfy { $0.message.contains("cluster.enabled is not true") })
        let off = try ConfigurationTestSupport.load(Self.storage + "cluster:\n  enabled: false\n  partitions: 8\n")
        #expect(off.warnings.map(\.path) == ["cluster.partitions"])
        let on = try ConfigurationTestSupport.load(Self.storage + "cluster:\n  enabled: true\n  instance: gw-2\n  partitions: 8\n")
        #expect(on.warnings.isEmpty)
        let none = try ConfigurationTestSupport.load(Self.storage)
        #expect(none.warnings.isEmpty)
    }
}
