#include <errno.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>

// libmicrohttpd's declarations only: nothing links it. The HTTPServer module opens
// libmicrohttpd.so.12 with dlopen when the first server starts (LibMicroHTTPD.swift), so a bridge
// without `http.listen` never maps it, nor the TLS libraries it brings along (GnuTLS, p11-kit,
// nettle, ...). Every call goes through a function pointer from dlsym.

// The type of each non-variadic function the HTTPServer module calls, for dlsym's result
// (`typeof` does not reference the symbol).
typedef __typeof__(&MHD_stop_daemon) aabridge_MHD_stop_daemon;
typedef __typeof__(&MHD_create_response_from_callback) aabridge_MHD_create_response_from_callback;
typedef __typeof__(&MHD_create_response_from_buffer) aabridge_MHD_create_response_from_buffer;
typedef __typeof__(&MHD_destroy_response) aabridge_MHD_destroy_response;
typedef __typeof__(&MHD_add_response_header) aabridge_MHD_add_response_header;
typedef __typeof__(&MHD_queue_response) aabridge_MHD_queue_response;
typedef __typeof__(&MHD_lookup_connection_value) aabridge_MHD_lookup_connection_value;

// The variadic ones, which Swift cannot call nor name: it holds their addresses as raw pointers
// and passes them to the wrappers below, which call them with fixed arguments.
typedef __typeof__(&MHD_start_daemon) aabridge_MHD_start_daemon;
typedef __typeof__(&MHD_set_connection_option) aabridge_MHD_set_connection_option;
typedef __typeof__(&MHD_get_connection_info) aabridge_MHD_get_connection_info;
typedef __typeof__(&MHD_get_daemon_info) aabridge_MHD_get_daemon_info;

// MHD_start_daemon is variadic, which Swift cannot call: this fixed-argument wrapper passes
// the options the bridge uses. One thread per connection (the bridge's handlers wait for the
// runtime's answer; the connection limit bounds the threads), bound to `address` only.
// `accept` decides at accept time who may connect (NULL: everyone); `per_client_limit`
// bounds one address's connections, so one client cannot take every place. The daemon's
// connection timeout is the short one a connection gets while its request's headers are
// awaited; a request that has arrived gets the longer one (aabridge_mhd_set_timeout).
// `notify` hears each connection start and close: the server's total header deadline
// (an inactivity timeout restarts with every byte, so a slow sender never meets it).
static inline struct MHD_Daemon *aabridge_mhd_start(
    void *start_daemon, const struct sockaddr_in *address, unsigned int connection_limit, unsigned int per_client_limit,
    unsigned int header_timeout_seconds, MHD_AcceptPolicyCallback accept, void *accept_context,
    MHD_AccessHandlerCallback handler, void *handler_context,
    MHD_RequestCompletedCallback completed, void *completed_context,
    MHD_NotifyConnectionCallback notify, void *notify_context) {
    return ((aabridge_MHD_start_daemon)start_daemon)(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL,
        ntohs(address->sin_port), accept, accept_context, handler, handler_context,
        MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)address,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_client_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, header_timeout_seconds,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
        MHD_OPTION_NOTIFY_CONNECTION, notify, notify_context,
        MHD_OPTION_END);
}

// MHD_set_connection_option is variadic too: one connection's inactivity timeout (it also
// restarts the connection's timer).
static inline void aabridge_mhd_set_timeout(
    void *set_connection_option, struct MHD_Connection *connection, unsigned int seconds) {
    (void)((aabridge_MHD_set_connection_option)set_connection_option)(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds);
}

// The client's IPv4 address in host byte order, 0 when it is not IPv4.
static inline uint32_t aabridge_ipv4_of(const struct sockaddr *address, socklen_t length) {
    if (address == NULL || address->sa_family != AF_INET || length < (socklen_t)sizeof(struct sockaddr_in)) return 0;
    return ntohl(((const struct sockaddr_in *)address)->sin_addr.s_addr);
}

// The connection's client address (as aabridge_ipv4_of), 0 when unknown.
static inline uint32_t aabridge_mhd_client_ipv4(void *get_connection_info, struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = ((aabridge_MHD_get_connection_info)get_connection_info)(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return 0;
    return aabridge_ipv4_of(info->client_addr, sizeof(struct sockaddr_in));
}

// The reader's "end of stream" is a macro with a cast, which Swift does not import.
static inline ssize_t aabridge_mhd_end_of_stream(void) { return MHD_CONTENT_READER_END_OF_STREAM; }

// The reader's "end with error": the connection is closed at once, nothing more written.
static inline ssize_t aabridge_mhd_end_with_error(void) { return MHD_CONTENT_READER_END_WITH_ERROR; }

// Whether a connection notification is its start (Swift imports the enum without its cases'
// usual names).
static inline int aabridge_mhd_is_start(enum MHD_ConnectionNotificationCode code) {
    return code == MHD_CONNECTION_NOTIFY_STARTED;
}

// The connection's socket, -1 when unknown.
static inline int aabridge_mhd_connection_fd(void *get_connection_info, struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = ((aabridge_MHD_get_connection_info)get_connection_info)(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

// Whether the peer of a connected socket has gone (closed, or reset): a look at what waits,
// without taking it or blocking. Bytes waiting (a pipelined request) are not a departure.
static inline int aabridge_socket_peer_gone(int fd) {
    char byte;
    ssize_t count = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (count == 0) return 1;
    if (count < 0) return !(errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
    return 0;
}

// Ends a connection from outside its thread: the thread's next poll sees the end and closes it
// (libmicrohttpd has no call to close a connection another thread runs).
static inline void aabridge_socket_shutdown(int fd) { (void)shutdown(fd, SHUT_RDWR); }

// The port the daemon listens on (the kernel's choice when 0 was asked for).
static inline uint16_t aabridge_mhd_port(void *get_daemon_info, struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = ((aabridge_MHD_get_daemon_info)get_daemon_info)(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

// A response with its own copy of `size` bytes (the buffer's parameter is not const).
static inline struct MHD_Response *aabridge_mhd_copied_response(
    aabridge_MHD_create_response_from_buffer create, size_t size, const void *bytes) {
    return create(size, (void *)bytes, MHD_RESPMEM_MUST_COPY);
}
