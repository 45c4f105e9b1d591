import CMicroHTTPD
import TestSupport
import Testing

@testable import HTTPServer

/// libmicrohttpd is opened with `dlopen` when an HTTP server starts, never linked: a bridge
/// without `http.listen` does not map it (nor GnuTLS and what GnuTLS brings), and a missing
/// libmicrohttpd is a clear error naming the package and the way out.
@Suite("LibMicroHTTPD: libmicrohttpd loaded only for the HTTP server, a clear error when it is missing")
struct LibMicroHTTPDLoadingTests {
    @Test("a libmicrohttpd that cannot be opened is refused, naming the library, Debian's package and http.listen")
    func missingLibrary() {
        #expect {
            _ = try LibMicroHTTPD.load("libmicrohttpd-aabridge-absent.so.12")
        } throws: { error in
            guard let error = error as? HTTPServerError else { return false }
            let named = "http.listen needs libmicrohttpd (libmicrohttpd-aabridge-absent.so.12, Debian's package libmicrohttpd12)"
            return error.description.contains(named) && error.description.contains("install libmicrohttpd12, or leave http.listen unset")
        }
    }

    @Test("a library that is not libmicrohttpd (no MHD_stop_daemon) is refused, naming the function")
    func notLibMicroHTTPD() {
        #expect {
            _ = try LibMicroHTTPD.load("libsqlite3.so.0")
        } throws: { error in
            (error as? HTTPServerError)?.description.contains("it has no MHD_stop_daemon") ?? false
        }
    }

    @Test("the installed libmicrohttpd loads with every function the server calls")
    func installedLibrary() throws {
        let library = try LibMicroHTTPD.load(LibMicroHTTPD.libraryName)
        let response = Array("ok".utf8).withUnsafeBytes {
            aabridge_mhd_copied_response(library.createResponseFromBuffer, $0.count, $0.baseAddress)
        }
        #expect(response != nil)
        if let response { library.destroyResponse(response) }
    }

    @Test("nothing in the build links libmicrohttpd: the test executable (every module) does not depend on it, nor on GnuTLS")
    func notLinked() throws {
        let text = try LinkedLibraries.ofTestExecutable()
        #expect(text.contains("libsqlite3"))
        #expect(!text.contains("libmicrohttpd"))
        #expect(!text.contains("libgnutls"))
    }
}
