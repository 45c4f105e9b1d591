import CMicroHTTPD

#if canImport(Glibc)
    import Glibc
#endif

/// libmicrohttpd, opened with `dlopen` when the first ``HTTPServer`` starts.
///
/// The bridge is not linked against libmicrohttpd: a bridge without `http.listen` (the default)
/// never maps it, nor GnuTLS and the eight libraries GnuTLS brings (p11-kit, nettle, hogweed,
/// gmp, tasn1, idn2, unistring, ffi): about 2.4 MiB of resident pages and their dynamic linking
/// at every start (docs/performance.md). ``HTTPServer`` reaches every libmicrohttpd function
/// through ``shared()``; when the library cannot be opened, the server does not start and says
/// why (``missingMessage(_:reason:)``).
struct LibMicroHTTPD: @unchecked Sendable {
    let stopDaemon: aabridge_MHD_stop_daemon
    let createResponseFromCallback: aabridge_MHD_create_response_from_callback
    let createResponseFromBuffer: aabridge_MHD_create_response_from_buffer
    let destroyResponse: aabridge_MHD_destroy_response
    let addResponseHeader: aabridge_MHD_add_response_header
    let queueResponse: aabridge_MHD_queue_response
    let lookupConnectionValue: aabridge_MHD_lookup_connection_value
    /// The variadic functions, which only the shim's fixed-argument wrappers call.
    let startDaemon: UnsafeMutableRawPointer
    let setConnectionOption: UnsafeMutableRawPointer
    let getConnectionInfo: UnsafeMutableRawPointer
    let getDaemonInfo: UnsafeMutableRawPointer

    /// The shared object opened: Debian's libmicrohttpd12 (the soname, not the `-dev` symlink).
    static let libraryName = "libmicrohttpd.so.12"

    /// The library, opened once for the process; the error when it cannot be.
    private static let loaded: Result<LibMicroHTTPD, HTTPServerError> = Result { () throws(HTTPServerError) in
        try load(libraryName)
    }

    /// The process's libmicrohttpd.
    ///
    /// - Throws: ``HTTPServerError`` when `libmicrohttpd.so.12` cannot be opened or lacks a function.
    static func shared() throws(HTTPServerError) -> LibMicroHTTPD { try loaded.get() }

    /// Opens `name` and looks up every function; a separate handle per call (tests give a name
    /// that does not exist).
    ///
    /// - Throws: ``HTTPServerError`` with ``missingMessage(_:reason:)``.
    static func load(_ name: String) throws(HTTPServerError) -> LibMicroHTTPD {
        guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
            throw HTTPServerError(missingMessage(name, reason: dlerror().map { String(cString: $0) }))
        }
        func address(_ function: String) throws(HTTPServerError) -> UnsafeMutableRawPointer {
            guard let address = dlsym(handle, function) else {
                throw HTTPServerError(missingMessage(name, reason: "it has no \(function): not libmicrohttpd, or too old a one"))
            }
            return address
        }
        func symbol<T>(_ function: String, as type: T.Type) throws(HTTPServerError) -> T {
            unsafeBitCast(try address(function), to: type)
        }
        return LibMicroHTTPD(
            stopDaemon: try symbol("MHD_stop_daemon", as: aabridge_MHD_stop_daemon.self),
            createResponseFromCallback: try symbol(
                "MHD_create_response_from_callback", as: aabridge_MHD_create_response_from_callback.self),
            createResponseFromBuffer: try symbol("MHD_create_response_from_buffer", as: aabridge_MHD_create_response_from_buffer.self),
            destroyResponse: try symbol("MHD_destroy_response", as: aabridge_MHD_destroy_response.self),
            addResponseHeader: try symbol("MHD_add_response_header", as: aabridge_MHD_add_response_header.self),
            queueResponse: try symbol("MHD_queue_response", as: aabridge_MHD_queue_response.self),
            lookupConnectionValue: try symbol("MHD_lookup_connection_value", as: aabridge_MHD_lookup_connection_value.self),
            startDaemon: try address("MHD_start_daemon"),
            setConnectionOption: try address("MHD_set_connection_option"),
            getConnectionInfo: try address("MHD_get_connection_info"),
            getDaemonInfo: try address("MHD_get_daemon_info"))
    }

    /// The connection's socket, -1 when unknown.
    func descriptor(of connection: OpaquePointer) -> Int32 { aabridge_mhd_connection_fd(getConnectionInfo, connection) }

    /// What an operator reads when libmicrohttpd cannot be opened.
    static func missingMessage(_ name: String, reason: String?) -> String {
        "http.listen needs libmicrohttpd (\(name), Debian's package libmicrohttpd12), which cannot be loaded: "
            + (reason ?? "no reason given") + "; install libmicrohttpd12, or leave http.listen unset"
    }
}
