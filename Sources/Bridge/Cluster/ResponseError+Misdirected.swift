extension ResponseError {
    /// A request over HTTP that another instance of the cluster answers.
    static func misdirected(_ request: IncomingRequest, partitioning: Partitioning) -> ResponseError {
        let what: String
        if let accessory = request.accessory {
            what =
                "accessory \(accessory) is in partition \(partitioning.partition(of: accessory)), which another instance of the cluster holds"
        } else {
            what = "the bridge's requests are answered by the instance of the cluster that holds partition 0"
        }
        return .unknown("\(what); send it on MQTT, or to that instance", accessoryControl: request.isAccessoryControl)
    }
}
