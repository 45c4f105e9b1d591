/// The name of every request of mqtt-api.md: the `<name>` of `bridge/request/<name>` and of
/// the console's `POST /api/request/<name>`. The one list of them: the decoder, the Home
/// Assistant controls, the console's script and the commands name a request by its case, so a
/// renamed request is renamed everywhere, and an unknown one does not compile.
public enum RequestName: String, CaseIterable, Hashable, Sendable {
    case showPicker = "picker/show"
    case selectCandidate = "picker/select"
    case finishDiscovery = "picker/finish_discovery"
    case dismissPicker = "picker/dismiss"
    case authorize = "accessory/authorize"
    case failAuthorization = "accessory/fail_authorization"
    case rename = "accessory/rename"
    case remove = "accessory/remove"
    case register = "accessory/register"
    case current = "accessory/current"
    case invalidate = "accessory/invalidate"
    case keys = "accessory/keys"
    case homeSources = "accessory/home_sources"
    case alias = "accessory/alias"
    case reattach = "accessory/reattach"
    /// The head-tracking session's switch (iOS 27's `AudioAccessoryHeadTracking`).
    case headTracking = "accessory/head_tracking"
    case nameSource = "source/name"
    /// The bridge's own request, answered without the engine.
    case health

    /// The name as it stands in a topic or a path.
    public var name: String { rawValue }

    /// Whether the request belongs to AccessoryControlDevice: its errors use that domain (and
    /// carry no ASError raw code).
    public var isAccessoryControl: Bool {
        switch self {
        case .register, .current, .invalidate, .headTracking: true
        default: false
        }
    }
}
