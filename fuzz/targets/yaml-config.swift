// libFuzzer target: the YAML configuration loader (libyaml + decoder + rules) over arbitrary
// bytes, with no environment overrides and a fixed host name. Checks, for any input:
//   - ConfigurationLoader.load never crashes, hangs or exhausts memory;
//   - a refusal lists at least one issue, each with a message, and prints;
//   - an accepted configuration's summary (published in bridge/info) is valid JSON and
//     never contains the MQTT password.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: size))
    switch ConfigurationLoader.load(bytes: bytes, file: "fuzz.yaml", environment: [:], hostname: "fuzzhost") {
    case .failure(let errors):
        precondition(!errors.issues.isEmpty, "refused without an issue")
        for issue in errors.issues { precondition(!issue.message.isEmpty, "issue without a message") }
        _ = errors.description
    case .success(let configuration):
        let summary = configuration.summaryJSON
        precondition((try? JSONParser.parse(summary)) != nil, "summary is not JSON")
        if let password = configuration.mqtt.password?.revealed, password.utf8.count >= 4 {
            precondition(!summary.contains(password), "the password appears in the summary")
            precondition(!"\(configuration)".contains(password), "the password appears in the description")
        }
    }
    return 0
}
