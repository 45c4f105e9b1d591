import CMosquitto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension MQTTClient {
    /// Applies ``configuration`` to the libmosquitto handle; called once, from init.
    func applyConfiguration() throws(MQTTError) {
        let mosq = handle.pointer
        let version = configuration.protocolVersion == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311
        try check(mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, Int32(version)), "protocol version")
        try check(mosquitto_threaded_set(mosq, true), "threaded mode")
        _ = mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1)
        if configuration.username != nil || configuration.password != nil {
            try check(mosquitto_username_pw_set(mosq, configuration.username, configuration.password), "username/password")
        }
        if let tls = configuration.tls {
            for path in [tls.caFile, tls.certificateFile, tls.keyFile].compactMap({ $0 })
            where !FileManager.default.isReadableFile(atPath: path) {
                throw MQTTError(code: .invalidConfiguration, message: "TLS file '\(path)' is not readable")
            }
            // Without a CA of its own the server is verified against the system's trust store.
            let caPath = tls.caPath ?? (tls.caFile == nil ? "/etc/ssl/certs" : nil)
            try check(mosquitto_tls_set(mosq, tls.caFile, caPath, tls.certificateFile, tls.keyFile, nil), "TLS")
            try check(mosquitto_tls_insecure_set(mosq, !tls.verifyHostname), "TLS hostname verification")
        }
        if let will = configuration.will {
            let rc = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set_v5(mosq, will.topic, Int32(bytes.count), bytes.baseAddress, will.qos.rawValue, will.retain, nil)
            }
            try check(rc, "will")
        }
    }

    private func check(_ rc: Int32, _ what: String) throws(MQTTError) {
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            throw MQTTError(code: .invalidConfiguration, message: "\(what): \(String(cString: mosquitto_strerror(rc)))")
        }
    }
}
