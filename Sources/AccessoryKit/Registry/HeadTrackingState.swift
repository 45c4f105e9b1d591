/// An accessory's head-tracking session as its state shows it (`head_tracking`): iOS 27's
/// `AudioAccessoryHeadTracking.Session.isHeadTrackingActive`. No session at all is nil.
public enum HeadTrackingState: String, Hashable, Sendable {
    /// The user turned head tracking on: sensor frames are forwarded to the renderer.
    case active
    /// Registered with `headTracking`, not turned on: sensor frames are refused `notActivated`.
    case inactive
}
