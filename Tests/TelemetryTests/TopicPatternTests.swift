import Testing

@testable import Telemetry

@Suite struct TopicPatternTests {
    @Test func singleLevelWildcardCapturesTheGateway() throws {
        let pattern = try #require(TopicPattern("home/+/BTtoMQTT/#"))
        #expect(pattern.match("home/gw1/BTtoMQTT/AABBCCDDEEFF") == ["gw1", "AABBCCDDEEFF"])
        // MQTT: `#` also matches the parent level, so the bare config topic matches too.
        #expect(pattern.match("home/gw1/BTtoMQTT") == ["gw1", ""])
        #expect(pattern.match("home/gw1/BTtoMQTT/a/b") == ["gw1", "a/b"])
        #expect(pattern.match("home/gw1/LWT") == nil)
        #expect(pattern.match("home/gw1") == nil)
        #expect(pattern.match("other/gw1/BTtoMQTT/x") == nil)
    }

    @Test func exactLevels() throws {
        let pattern = try #require(TopicPattern("tele/+/BLE"))
        #expect(pattern.match("tele/t1/BLE") == ["t1"])
        #expect(pattern.match("tele/t1/BLE/x") == nil)
        #expect(pattern.match("tele//BLE") == [""])
        #expect(pattern.match("tele/t1") == nil)
        #expect(try #require(TopicPattern("a/b")).match("a/b") == [])
    }

    @Test func wildcardsDoNotMatchDollarTopics() throws {
        #expect(try #require(TopicPattern("#")).match("$SYS/broker") == nil)
        #expect(try #require(TopicPattern("+/broker")).match("$SYS/broker") == nil)
        #expect(try #require(TopicPattern("$SYS/#")).match("$SYS/broker") == ["broker"])
    }

    /// Keeping fewer captures matches exactly the same topics: only the strings made differ.
    @Test func keepingFewerCapturesMatchesTheSameTopics() throws {
        let pattern = try #require(TopicPattern("home/+/BTtoMQTT/+/#"))
        for topic in ["home/gw1/BTtoMQTT/AABBCCDDEEFF", "home/gw1/BTtoMQTT/AA/x/y", "home/gw1/LWT", "home//BTtoMQTT//", "$x/gw/BTtoMQTT/a"]
        {
            let all = pattern.match(topic)
            #expect(pattern.match(topic, keepingAtMost: 1) == all.map { Array($0.prefix(1)) }, "\(topic)")
            #expect(pattern.match(topic, keepingAtMost: 0) == all.map { _ in [] }, "\(topic)")
            #expect(pattern.match(topic, keepingAtMost: 2) == all.map { Array($0.prefix(2)) }, "\(topic)")
        }
        #expect(pattern.match("home/gw1/BTtoMQTT/AA/x", keepingAtMost: 1) == ["gw1"])
    }

    @Test(arguments: ["", "a/#/b", "a/b#", "a/+b", "a+/b"])
    func rejectsInvalidFilters(_ filter: String) {
        #expect(TopicPattern(filter) == nil)
    }
}
