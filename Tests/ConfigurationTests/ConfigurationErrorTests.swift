import Testing

@testable import Configuration

/// Every error class with its exact key path, and all errors at once.
@Suite struct ConfigurationErrorTests {
    /// One broken file, the one path it must report, and a piece of the message.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var yaml: String
        var path: String
        var message: String
        var testDescription: String { name }
    }

    static let base = ConfigurationTestSupport.validBase

    static let cases: [Case] = [
        Case(name: "unknown top-level key with suggestion", yaml: "mqqt:\n  server: x\n", path: "mqqt", message: "did you mean 'mqtt'?"),
        Case(
            name: "unknown nested key with suggestion", yaml: "mqtt:\n  sever: mqtt://x\n", path: "mqtt.sever",
            message: "did you mean 'server'?"),
        Case(
            name: "unknown key without a close match lists the allowed", yaml: "log:\n  colour: red\n", path: "log.colour",
            message: "allowed here: level, format"),
        Case(name: "wrong type: mapping expected", yaml: "mqtt: [a, b]\n", path: "mqtt", message: "expected a mapping, found a list"),
        Case(
            name: "wrong type: list expected", yaml: "products: {name: x}\n", path: "products", message: "expected a list, found a mapping"),
        Case(
            name: "wrong type: string expected", yaml: "storage:\n  path: [a]\n", path: "storage.path",
            message: "expected a string, found a list"),
        Case(
            name: "wrong type: boolean", yaml: "homeassistant:\n  enabled: maybe\n", path: "homeassistant.enabled",
            message: "expected true or false, found 'maybe'"),
        Case(
            name: "not an integer", yaml: "mqtt:\n  keepalive: soon\n", path: "mqtt.keepalive",
            message: "expected an integer (decimal or 0x hex), found 'soon'"),
        Case(
            name: "keepalive out of range", yaml: "mqtt:\n  keepalive: 70000\n", path: "mqtt.keepalive",
            message: "must be between 0 and 65535"),
        Case(
            name: "keepalive 1-4, which libmosquitto refuses at every connect", yaml: "mqtt:\n  keepalive: 3\n",
            path: "mqtt.keepalive", message: "must be 0 (off) or 5-65535 seconds"),
        Case(
            name: "a password without a user on MQTT 3.1.1", yaml: "mqtt:\n  version: 4\n  password: s3cret\n",
            path: "mqtt.password", message: "MQTT 3.1.1 (version 4) sends a password only with a user"),
        Case(
            name: "port out of range", yaml: "mqtt:\n  server: mqtt://localhost:70000\n", path: "mqtt.server",
            message: "port must be between 1 and 65535"),
        Case(
            name: "bad scheme", yaml: "mqtt:\n  server: http://localhost\n", path: "mqtt.server",
            message: "expected mqtt://host:port or mqtts://host:port, found scheme 'http'"),
        Case(name: "MQTT version", yaml: "mqtt:\n  version: 3\n", path: "mqtt.version", message: "allowed: 4 (MQTT 3.1.1), 5 (MQTT 5)"),
        Case(
            name: "reconnect max below min", yaml: "mqtt:\n  reconnect: {min_s: 10, max_s: 5}\n", path: "mqtt.reconnect.max_s",
            message: "must be at least min_s (10)"),
        Case(
            name: "cert without key", yaml: "mqtt:\n  server: mqtts://broker:8883\n  cert: \(#filePath)\n", path: "mqtt.key",
            message: "a client cert needs key as well"),
        Case(name: "base topic with wildcard", yaml: "mqtt:\n  base_topic: a/+/b\n", path: "mqtt.base_topic", message: "wildcards"),
        Case(name: "empty string", yaml: "storage:\n  path: \"\"\n", path: "storage.path", message: "must not be empty"),
        Case(
            name: "debounce below zero", yaml: "switching:\n  placement_debounce_ms: -1\n", path: "switching.placement_debounce_ms",
            message: "must be between 0 and 600000"),
        Case(
            name: "availability timeout zero", yaml: "switching:\n  availability_timeout_s: 0\n", path: "switching.availability_timeout_s",
            message: "must be between 1 and 86400"),
        Case(
            name: "health interval zero", yaml: "health:\n  interval_s: 0\n", path: "health.interval_s",
            message: "must be between 1 and 86400"),
        Case(
            name: "unknown log level lists the allowed", yaml: "log:\n  level: verbose\n", path: "log.level",
            message: "unknown value 'verbose'; allowed: debug, info, warning, error"),
        Case(
            name: "unknown log format with suggestion", yaml: "log:\n  format: jsno\n", path: "log.format", message: "did you mean 'json'?"),
        Case(
            name: "unknown technology", yaml: "setup:\n  supports: [bluetooth, zigbee]\n", path: "setup.supports[1]",
            message: "allowed: bluetooth, wifi"),
        Case(
            name: "company identifier out of range", yaml: "setup:\n  bluetooth:\n    company_identifiers: [0x1004C]\n",
            path: "setup.bluetooth.company_identifiers[0]", message: "must be between 0x0 and 0xFFFF"),
        Case(
            name: "bad UUID", yaml: "setup:\n  bluetooth:\n    services: [\"FE2\"]\n", path: "setup.bluetooth.services[0]",
            message: "expected a Bluetooth UUID"),
        Case(
            name: "bad hex", yaml: base.replacingOccurrences(of: "\"ffff\"", with: "\"fffg\""),
            path: "products[0].descriptor.bluetooth_manufacturer_data_mask", message: "expected hex bytes"),
        Case(
            name: "odd hex", yaml: base.replacingOccurrences(of: "\"0719\"", with: "\"071\""),
            path: "products[0].descriptor.bluetooth_manufacturer_data_blob", message: "expected hex bytes"),
        Case(
            name: "mask length (descriptor rule)", yaml: base.replacingOccurrences(of: "\"ffff\"", with: "\"ffffff\""),
            path: "products[0].descriptor.bluetooth_manufacturer_data_mask", message: "has 3 bytes"),
        Case(
            name: "company identifier not declared (declaration rule)", yaml: base.replacingOccurrences(of: "[0x004C]", with: "[0x0006]"),
            path: "products[0].descriptor.bluetooth_company_identifier", message: "not in setup.bluetooth.company_identifiers"),
        Case(
            name: "bluetooth not declared", yaml: base.replacingOccurrences(of: "supports: [bluetooth]", with: "supports: [wifi]"),
            path: "products[0].descriptor.bluetooth_company_identifier", message: "setup.supports does not declare bluetooth"),
        Case(
            name: "unknown hardware", yaml: base.replacingOccurrences(of: "inEarBud", with: "inEarBuds"), path: "products[0].hardware",
            message: "did you mean 'inEarBud'?"),
        Case(
            name: "missing hardware", yaml: base.replacingOccurrences(of: "    hardware: inEarBud\n", with: ""),
            path: "products[0].hardware", message: "is required"),
        Case(
            name: "unknown capability",
            yaml: base.replacingOccurrences(
                of: "    hardware: inEarBud\n", with: "    hardware: inEarBud\n    capabilities: [audioSwitching, noiseCancelling]\n"),
            path: "products[0].capabilities[1]", message: "unknown capability 'noiseCancelling'"),
        Case(
            name: "unknown decoder", yaml: base.replacingOccurrences(of: "apple_proximity", with: "apple"),
            path: "products[0].placement_decoder", message: "allowed: apple_proximity, none"),
        Case(
            name: "rule worn_when outside mask",
            yaml: base.replacingOccurrences(
                of: "placement_decoder: apple_proximity",
                with: "placement_decoder: {rule: {source: manufacturer, offset: 3, mask: 0x01, worn_when: 0x02}}"),
            path: "products[0].placement_decoder.rule.worn_when", message: "has bits outside mask"),
        Case(
            name: "rule on service data without a service UUID",
            yaml: base.replacingOccurrences(
                of: "placement_decoder: apple_proximity",
                with: "placement_decoder: {rule: {source: service, offset: 0, mask: 1, worn_when: 1}}"),
            path: "products[0].placement_decoder.rule.source", message: "needs descriptor.bluetooth_service_uuid"),
        Case(
            name: "rule source",
            yaml: base.replacingOccurrences(
                of: "placement_decoder: apple_proximity",
                with: "placement_decoder: {rule: {source: advert, offset: 3, mask: 1, worn_when: 1}}"),
            path: "products[0].placement_decoder.rule.source", message: "allowed: manufacturer, service"),
        Case(
            name: "duplicate product name",
            yaml: base + "  - name: AirPods Pro\n    hardware: inEarBud\n    descriptor: {bluetooth_company_identifier: 0x004C}\n",
            path: "products[1].name", message: "duplicate product name 'AirPods Pro' (also products[0])"),
        Case(
            name: "duplicate gateway name", yaml: "gateways:\n  - {name: omg, format: openmqttgateway}\n  - {name: omg, format: theengs}\n",
            path: "gateways[1].name", message: "duplicate gateway name 'omg'"),
        Case(
            name: "unknown gateway format", yaml: "gateways:\n  - {name: g, format: zigbee2mqtt}\n", path: "gateways[0].format",
            message: "allowed: openmqttgateway, theengs, espresense, tasmota, native"),
        Case(
            name: "gateway topic wildcard in the middle", yaml: "gateways:\n  - {name: g, format: native, topic: \"a/#/b\"}\n",
            path: "gateways[0].topic", message: "# must be a whole level and the last one"),
        Case(
            name: "bad address", yaml: "sources:\n  - {address: \"11:22:33:44:55\", name: x}\n", path: "sources[0].address",
            message: "expected a Bluetooth address"),
        Case(
            name: "duplicate source",
            yaml: "sources:\n  - {address: \"11:22:33:44:55:66\", name: x}\n  - {address: \"11-22-33-44-55-66\", name: y}\n",
            path: "sources[1].address", message: "duplicate source 11:22:33:44:55:66"),
        Case(
            name: "migration of an unknown product",
            yaml: base + "accessories:\n  - {id: \"A1:B2:C3:D4:E5:F6\", name: a, product: AirPods Max}\n", path: "accessories[0].product",
            message: "no product named 'AirPods Max'"),
        Case(
            name: "migration with an ssid prefix",
            yaml: base + "accessories:\n  - {id: \"A1:B2:C3:D4:E5:F6\", name: a, product: AirPods Pro, ssid_prefix: Acme}\n",
            path: "accessories[0].ssid_prefix", message: "a migrated accessory needs a full ssid"),
        Case(
            name: "irk of the wrong length",
            yaml: base + "accessories:\n  - {id: \"A1:B2:C3:D4:E5:F6\", name: a, product: AirPods Pro, irk: \"0011\"}\n",
            path: "accessories[0].irk", message: "decodes to 2 bytes; a key has 16"),
        Case(
            name: "duplicate key", yaml: "mqtt:\n  server: mqtt://a\n  server: mqtt://b\n", path: "mqtt.server",
            message: "duplicate key (first given at line 2, column 3)"),
        Case(
            name: "duplicate key in a product",
            yaml: base.replacingOccurrences(of: "    hardware: inEarBud\n", with: "    hardware: inEarBud\n    hardware: inEarBud\n"),
            path: "products[0].hardware", message: "duplicate key"),
        Case(
            name: "password and password_file", yaml: "mqtt:\n  password: a\n  password_file: /b\n", path: "mqtt.password",
            message: "give password or password_file, not both"),
        Case(
            name: "unreadable password_file", yaml: "mqtt:\n  password_file: /nonexistent/secret\n", path: "mqtt.password_file",
            message: "cannot read '/nonexistent/secret'"),
    ]

    @Test(arguments: cases)
    func reportsTheKeyPath(_ testCase: Case) {
        let issues = ConfigurationTestSupport.issues(testCase.yaml)
        #expect(issues.count == 1, "\(issues)")
        #expect(issues.first?.path == testCase.path, "\(issues)")
        #expect(issues.first?.message.contains(testCase.message) == true, "\(issues)")
    }

    @Test func fileErrorsCarryTheirPosition() {
        let issues = ConfigurationTestSupport.issues("log:\n  level: verbose\n")
        #expect(issues.first?.origin == .file(line: 2, column: 10))
        #expect(issues.first?.description == "log.level: unknown value 'verbose'; allowed: debug, info, warning, error (line 2, column 10)")
    }

    @Test func fiveDifferentErrorsGiveFiveIssues() {
        let yaml = """
            mqtt:
              server: mqtt://localhost:99999
              keepalive: -1
            log:
              level: loud
            setup:
              bluetooth:
                company_identifiers: [0x004C]
            products:
              - name: AirPods Pro
                hardware: inEarBud
                descriptor:
                  bluetooth_company_identifier: 0x004C
                  bluetooth_manufacturer_data_blob: "0719"
                  bluetooth_manufacturer_data_mask: "ffffff"
            gateways:
              - {name: omg, format: openmqttgateway, colour: red}
            """
        let issues = ConfigurationTestSupport.issues(yaml)
        // Top to bottom, as a user fixes them; the descriptor rule sits at its mask's line.
        #expect(
            issues.map(\.path) == [
                "mqtt.server", "mqtt.keepalive", "log.level",
                "products[0].descriptor.bluetooth_manufacturer_data_mask", "gateways[0].colour",
            ])
    }

    @Test func rulePathsKeepFileIndicesWhenEarlierProductsHaveErrors() {
        let yaml =
            ConfigurationTestSupport.validBase.replacingOccurrences(of: "hardware: inEarBud", with: "hardware: earbud") + """
                  - name: Acme
                    hardware: overEarHeadphone
                    descriptor:
                      bluetooth_service_uuid: "FE2D"
                accessories:
                  - {id: "A1:B2:C3:D4:E5:F6", name: a, product: AirPods Pro}
                """
        let issues = ConfigurationTestSupport.issues(yaml)
        // products[0] is left out for its hardware; products[1]'s rule error keeps its index,
        // and the migration naming products[0] is not also called unknown.
        #expect(issues.map(\.path) == ["products[0].hardware", "products[1].descriptor.bluetooth_service_uuid"])
    }

    @Test func errorHeaderCountsTheIssues() {
        guard case let .failure(errors) = ConfigurationLoader.load(yaml: "log: {level: a, format: b}\n", file: "x.yaml") else {
            Issue.record("loaded")
            return
        }
        #expect(errors.description.hasPrefix("x.yaml: 2 errors in the configuration:\n  log.level: "))
        #expect(ConfigurationErrors.exitStatus == 2)
    }
}

/// Rule issues found after decoding still point into the file.
@Suite struct ConfigurationRuleOriginTests {
    @Test func descriptorRuleIssuesCarryTheirLine() {
        let yaml = ConfigurationTestSupport.validBase.replacingOccurrences(of: "\"ffff\"", with: "\"ffffff\"")
        let issues = ConfigurationTestSupport.issues(yaml)
        #expect(issues.first?.origin == .file(line: 14, column: 41))
        let missingMask = ConfigurationTestSupport.validBase.replacingOccurrences(
            of: "      bluetooth_manufacturer_data_mask: \"ffff\"\n", with: "")
        let missing = ConfigurationTestSupport.issues(missingMask)
        #expect(missing.map(\.path) == ["products[0].descriptor.bluetooth_manufacturer_data_mask"])
        #expect(missing.first?.origin == .file(line: 12, column: 7))
    }
}
