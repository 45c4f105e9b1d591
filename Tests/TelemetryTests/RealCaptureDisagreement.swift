/// Why the bridge says otherwise than the owner of a real capture: each is listed, with its
/// count, in docs/telemetry.md ("Real captures"). A disagreement none of these explains fails
/// the corpus test.
enum RealCaptureDisagreement: String, CaseIterable, Sendable {
    /// The owner says the device is a replica, but its frame copies Apple's (length byte 0x19,
    /// a real model id): nothing in the bytes tells it apart, so the bridge reads it as the
    /// model it claims to be. Only replicas with their own length byte (0x13) are refused.
    case cloneReadAsGenuine

    static func reason(_ capture: RealCapture, key: String, ours: [String: PeerFrame.Value]) -> RealCaptureDisagreement? {
        if key == "clone", ours["model"] != nil, ours["model"] != PeerFrame.Value.none { return .cloneReadAsGenuine }
        return nil
    }
}
