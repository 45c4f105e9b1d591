extension ResponseError.Kind {
    /// The status of the console's request API for a request that failed with this code.
    var httpStatus: Int {
        switch self {
        case .invalidRequest: 400
        case .unknown: 500
        // The request was understood but the bridge's state refuses it (not a candidate, not capable, ...).
        case .refused: 409
        }
    }
}
