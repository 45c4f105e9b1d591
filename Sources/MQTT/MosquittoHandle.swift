/// The raw libmosquitto handle.
///
/// `@unchecked Sendable` because libmosquitto in threaded mode (`mosquitto_threaded_set`)
/// guards publish, subscribe and disconnect with its own mutexes, and everything else
/// (`mosquitto_loop`, connect) is only ever called from the one network thread.
struct MosquittoHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}
