/// Where a request's answer goes: `bridge/response/<name>`, or the HTTP caller that sent it
/// (``HTTPComponent``), which then gets it instead. Carried with the request through the
/// request path, so exactly one answer goes to exactly one place.
enum RequestAnswer {
    case mqtt
    case http(HTTPReply)
}
