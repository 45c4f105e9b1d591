// libFuzzer target: the YAML configuration loader (libyaml + decoder + rules) over arbitrary
// bytes, with no environment overrides and a fixed host name. Checks, for any input:
//   - ConfigurationLoader.load never crashes, hangs or exhausts memory;
//   - a refusal lists at least one issue, each with a message, and prints;
//   - an accepted configuration's summary (published in bridge/info) is valid JSON, and
//     neither it nor the configuration's description depends on the MQTT password.
import JSON

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: size))
    switch ConfigurationLoader.load(bytes: bytes, file: "fuzz.yaml", environment: [:], hostname: "fuzzhost") {
    case .failure(let errors):
        precondition(!errors.issues.isEmpty, "refused without an issue")
        for issue in errors.issues { precondition(!issue.message.isEmpty, "issue without a message") }
        _ = errors.description
    case .success(let configuration):
        let summary = configuration.summary.serialized
        precondition((try? JSONParser.parse(summary)) != nil, "summary is not JSON")
        // Neither the summary nor the description depends on the password's value (a
        // substring search would be wrong: a password may be a substring of the server).
        if configuration.mqtt.password != nil {
            var other = configuration
            other.mqtt.password = Secret("a-different-password")
            precondition(other.summary.serialized == summary, "the summary depends on the password")
            precondition("\(other)" == "\(configuration)", "the description depends on the password")
        }
    }
    return 0
}
