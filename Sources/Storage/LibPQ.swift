import CPostgres

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// libpq, opened with `dlopen` the first time a PostgreSQL connection string is read.
///
/// The bridge is not linked against libpq: a bridge whose storage is SQLite never maps it, nor
/// the Kerberos, LDAP and TLS libraries it depends on (about 22 M instructions of dynamic
/// linking at every start). ``PostgresConnection`` reaches every libpq function through
/// ``shared()``; when the library cannot be opened, a PostgreSQL connection fails with
/// `.cannotOpen` and a message naming the library and Debian's package (``missingMessage``).
struct LibPQ: @unchecked Sendable {
    let connectdbParams: aabridge_PQconnectdbParams
    let status: aabridge_PQstatus
    let setNoticeProcessor: aabridge_PQsetNoticeProcessor
    let reset: aabridge_PQreset
    let conninfo: aabridge_PQconninfo
    let conninfoFree: aabridge_PQconninfoFree
    let conninfoParse: aabridge_PQconninfoParse
    let transactionStatus: aabridge_PQtransactionStatus
    let exec: aabridge_PQexec
    let execParams: aabridge_PQexecParams
    let clear: aabridge_PQclear
    let ntuples: aabridge_PQntuples
    let consumeInput: aabridge_PQconsumeInput
    let notifies: aabridge_PQnotifies
    let freemem: aabridge_PQfreemem
    let socket: aabridge_PQsocket
    let finish: aabridge_PQfinish
    let resultStatus: aabridge_PQresultStatus
    let resultErrorField: aabridge_PQresultErrorField
    let errorMessage: aabridge_PQerrorMessage
    let getisnull: aabridge_PQgetisnull
    let getvalue: aabridge_PQgetvalue
    let getlength: aabridge_PQgetlength

    /// The shared object opened: Debian's libpq5 (the soname, not the `-dev` symlink).
    static let libraryName = "libpq.so.5"

    /// The library, opened once for the process; the error when it cannot be.
    private static let loaded: Result<LibPQ, StorageError> = Result { () throws(StorageError) in try load(libraryName) }

    /// The process's libpq.
    ///
    /// - Throws: `.cannotOpen` when `libpq.so.5` cannot be opened or lacks a function.
    static func shared() throws(StorageError) -> LibPQ { try loaded.get() }

    /// Opens `name` and looks up every function; a separate handle per call (tests give a
    /// name that does not exist).
    ///
    /// - Throws: `.cannotOpen` with ``missingMessage(_:reason:)``.
    static func load(_ name: String) throws(StorageError) -> LibPQ {
        guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
            throw StorageError(.cannotOpen, message: missingMessage(name, reason: dlerror().map { String(cString: $0) }))
        }
        func symbol<T>(_ function: String, as type: T.Type) throws(StorageError) -> T {
            guard let address = dlsym(handle, function) else {
                throw StorageError(
                    .cannotOpen, message: missingMessage(name, reason: "it has no \(function) (libpq 10 or later is needed)"))
            }
            return unsafeBitCast(address, to: type)
        }
        return LibPQ(
            connectdbParams: try symbol("PQconnectdbParams", as: aabridge_PQconnectdbParams.self),
            status: try symbol("PQstatus", as: aabridge_PQstatus.self),
            setNoticeProcessor: try symbol("PQsetNoticeProcessor", as: aabridge_PQsetNoticeProcessor.self),
            reset: try symbol("PQreset", as: aabridge_PQreset.self),
            conninfo: try symbol("PQconninfo", as: aabridge_PQconninfo.self),
            conninfoFree: try symbol("PQconninfoFree", as: aabridge_PQconninfoFree.self),
            conninfoParse: try symbol("PQconninfoParse", as: aabridge_PQconninfoParse.self),
            transactionStatus: try symbol("PQtransactionStatus", as: aabridge_PQtransactionStatus.self),
            exec: try symbol("PQexec", as: aabridge_PQexec.self),
            execParams: try symbol("PQexecParams", as: aabridge_PQexecParams.self),
            clear: try symbol("PQclear", as: aabridge_PQclear.self),
            ntuples: try symbol("PQntuples", as: aabridge_PQntuples.self),
            consumeInput: try symbol("PQconsumeInput", as: aabridge_PQconsumeInput.self),
            notifies: try symbol("PQnotifies", as: aabridge_PQnotifies.self),
            freemem: try symbol("PQfreemem", as: aabridge_PQfreemem.self),
            socket: try symbol("PQsocket", as: aabridge_PQsocket.self),
            finish: try symbol("PQfinish", as: aabridge_PQfinish.self),
            resultStatus: try symbol("PQresultStatus", as: aabridge_PQresultStatus.self),
            resultErrorField: try symbol("PQresultErrorField", as: aabridge_PQresultErrorField.self),
            errorMessage: try symbol("PQerrorMessage", as: aabridge_PQerrorMessage.self),
            getisnull: try symbol("PQgetisnull", as: aabridge_PQgetisnull.self),
            getvalue: try symbol("PQgetvalue", as: aabridge_PQgetvalue.self),
            getlength: try symbol("PQgetlength", as: aabridge_PQgetlength.self))
    }

    /// What an operator reads when libpq cannot be opened.
    static func missingMessage(_ name: String, reason: String?) -> String {
        "storage.backend postgresql needs libpq (\(name), Debian's package libpq5), which cannot be loaded: "
            + (reason ?? "no reason given") + "; install libpq5, or use storage.backend sqlite"
    }
}
