/// The forms behind Home Assistant's buttons: each is answered on `bridge/response/<name>` like
/// a request (``RequestName``), and counted under its name in `aabridge_requests_total`.
enum FormName: String, CaseIterable, Sendable {
    /// `bridge/pairing/set` (``PairingFormComponent``).
    case pairing = "pairing/set"
    /// `bridge/reattach/set` (``ReattachFormComponent``).
    case reattach = "reattach/set"

    var name: String { rawValue }
}
