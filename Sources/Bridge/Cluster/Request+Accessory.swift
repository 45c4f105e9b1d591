import AccessoryKit

extension Request {
    /// The accessory the request is about; nil for the picker's requests and `source/name`,
    /// which are the bridge's (in a cluster, the holder of partition 0 answers those,
    /// `picker/select` too).
    var accessory: BluetoothAddress? {
        switch self {
        case .showPicker, .selectCandidate, .finishDiscovery, .dismissPicker, .nameSource: nil
        case .authorize(let id), .failAuthorization(let id), .rename(let id, _), .remove(let id), .register(let id, _), .current(let id),
            .invalidate(let id), .setKeys(let id, _, _, _), .setHomeSources(let id, _), .setAlias(let id, _), .reattach(let id, _),
            .setHeadTracking(let id, _):
            id
        }
    }
}

extension IncomingRequest {
    /// The accessory the request is about (nil: bridge-wide, or it could not be decoded).
    var accessory: BluetoothAddress? {
        if case .success(.engine(let request)) = decoded { request.accessory } else { nil }
    }
}
