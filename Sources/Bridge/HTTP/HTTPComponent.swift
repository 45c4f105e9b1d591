import AccessoryKit
import Configuration
import HTTPServer
import JSON

/// The HTTP side (the console, `/metrics`, `/healthz`), as a component: the server and
/// the console's event streams (``HTTPConsole``). Its calls are posted to its mailbox and
/// handled by the loop like any other event: requests take the same path as
/// `bridge/request/<name>`, answered to the caller, and the console's streams mirror what is
/// published.
final class HTTPComponent: RuntimeComponent {
    private let configuration: HTTPConfiguration
    private let listen: HTTPConfiguration.Listen
    private let baseTopic: String
    /// The server, while it runs (nil when the port could not be bound, and after shutdown).
    private var console: HTTPConsole?

    init(configuration: HTTPConfiguration, listen: HTTPConfiguration.Listen, baseTopic: String) {
        self.configuration = configuration
        self.listen = listen
        self.baseTopic = baseTopic
    }

    /// Starts the server. A port that cannot be bound is logged, and the bridge runs without
    /// its console (MQTT is what it is for).
    func start(_ context: ComponentContext) async {
        do {
            let console = try HTTPConsole(configuration: configuration, listen: listen, baseTopic: baseTopic, mailbox: context.mailbox)
            self.console = console
            context.observation.mirror(to:) { [unowned console] topic, payload in console.mirror(topic, payload) }
            context.logger.info("HTTP: console, /metrics and /healthz on http://\(listen)/")
        } catch {
            context.logger.error("HTTP: \(error); running without the console, /metrics and /healthz")
        }
    }

    /// Stops the server (bounded: waiting connections give up within 100 ms).
    func shutdownBegins(_ context: ComponentContext) {
        context.observation.mirror(to: nil)
        console?.stop()
        console = nil
    }

    func handle(event: any Sendable, _ context: ComponentContext) async {
        guard let call = event as? HTTPCall else { return }
        switch call.kind {
        case .health:
            call.reply.answer(context.observation.problem.map { .text(503, "\($0)\n") } ?? .text(200, "ok\n"))
        case .metrics:
            let body = Array(context.observation.metricsText().utf8)
            call.reply.answer(.full(status: 200, contentType: MetricsText.contentType, body: body, headers: []))
        case .subscribe(let stream):
            guard let console else { return call.reply.answer(.text(503, "stopping\n")) }
            console.subscribe(stream, snapshot: context.observation.snapshot())
            call.reply.answer(.events(stream))
        case .request(let name, let body):
            await context.handle(Ingest.request(name: name, payload: body), answer: .http(call.reply))
        }
    }

    /// Open console event streams.
    func metrics(_ text: inout MetricsText, _ context: ComponentContext) {
        text.gauge("aabridge_console_streams", "Open console event streams.", console?.streams.count ?? 0)
    }
}
