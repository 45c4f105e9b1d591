import TestSupport
import Testing

@testable import Storage

/// libpq is opened with `dlopen` when PostgreSQL is used, never linked: a SQLite bridge does not
/// map it (nor Kerberos, LDAP and TLS), and a missing libpq is a clear storage error.
@Suite("LibPQ: libpq loaded only for PostgreSQL, a clear error when it is missing")
struct LibPQLoadingTests {
    @Test("a libpq that cannot be opened is .cannotOpen, naming the library, Debian's package and SQLite as the way out")
    func missingLibrary() {
        #expect {
            _ = try LibPQ.load("libpq-aabridge-absent.so.5")
        } throws: { error in
            guard let error = error as? StorageError, error.code == .cannotOpen else { return false }
            return error.message.contains("storage.backend postgresql needs libpq (libpq-aabridge-absent.so.5, Debian's package libpq5)")
                && error.message.contains("install libpq5, or use storage.backend sqlite")
        }
    }

    @Test("a library that is not libpq (no PQconnectdbParams) is refused with .cannotOpen, naming the function")
    func notLibPQ() {
        #expect {
            _ = try LibPQ.load("libsqlite3.so.0")
        } throws: { error in
            guard let error = error as? StorageError, error.code == .cannotOpen else { return false }
            return error.message.contains("it has no PQconnectdbParams")
        }
    }

    @Test("the installed libpq loads with every function the connection calls, and parses a connection string")
    func installedLibrary() throws {
        let library = try LibPQ.load(LibPQ.libraryName)
        var errorMessage: UnsafeMutablePointer<CChar>?
        let options = library.conninfoParse("postgresql://u@h:5/d", &errorMessage)
        #expect(options != nil)
        library.conninfoFree(options)
        #expect(PostgresConnection.syntaxProblem("host=h port=5432") == nil)
        #expect(PostgresConnection.syntaxProblem("postgresql://[::1") != nil)
    }

    @Test("nothing in the build links libpq: the test executable (every module) does not depend on it")
    func notLinked() throws {
        let text = try LinkedLibraries.ofTestExecutable()
        #expect(text.contains("libsqlite3"))
        #expect(!text.contains("libpq"))
    }
}
