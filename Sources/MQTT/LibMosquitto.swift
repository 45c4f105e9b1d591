import CMosquitto

/// libmosquitto must be initialised exactly once per process, before the first client is
/// created. A global `let` is initialised lazily and atomically by the Swift runtime, so
/// touching it from any thread is safe and runs `mosquitto_lib_init` once.
let libMosquittoInitialised: Bool = {
    mosquitto_lib_init() == MOSQ_ERR_SUCCESS.rawValue
}()

/// The version of the libmosquitto the process is linked against, e.g. `2.0.11`.
public var libMosquittoVersion: String {
    var major: Int32 = 0, minor: Int32 = 0, revision: Int32 = 0
    _ = mosquitto_lib_version(&major, &minor, &revision)
    return "\(major).\(minor).\(revision)"
}
