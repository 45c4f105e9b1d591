import AccessoryKit

/// The console (`GET /`): one HTML page with its CSS and plain JavaScript, served from the
/// binary. No build step, no CDN, nothing fetched from elsewhere: it works on a gateway box
/// without internet access.
///
/// The page keeps the bridge's state as an MQTT subscriber would, from `GET /events` (the
/// bridge's own publications: `bridge/accessories`, `bridge/picker`, `bridge/health`, ...),
/// and acts only through `POST /api/request/<name>`, the request API of mqtt-api.md. Every
/// text from the bridge is set with `textContent`, never parsed as HTML (an accessory's name
/// is whatever its advertisement said). Keys are write-only: the page shows whether one is
/// set, never a key. The script's request names are written into it from ``RequestName``.
enum ConsolePage {
    /// The response headers. `framed`: the page is shown through Home Assistant's ingress,
    /// which puts it in an iframe of Home Assistant's own page (the same origin, as the browser
    /// sees it); anything else may not frame it (clickjacking of the console's buttons).
    static func headers(framed: Bool) -> [(String, String)] {
        [
            // Only this page's own inline script and style, and requests to this server.
            (
                "Content-Security-Policy",
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; "
                    + "base-uri 'none'; form-action 'none'; frame-ancestors \(framed ? "'self'" : "'none'")"
            ),
            ("Referrer-Policy", "no-referrer"),
            ("X-Frame-Options", framed ? "SAMEORIGIN" : "DENY"),
        ]
    }

    /// The page served at `prefix`: "" when the browser reaches this server itself, an
    /// ``IngressPath`` (already checked to hold only `/`, letters, digits, `_` and `-`, so it
    /// needs no escaping in an attribute) behind Home Assistant's ingress. The script sends
    /// its requests and sets its cookie below it, as the browser must name them.
    static func html(prefix: String) -> [UInt8] {
        prefix.isEmpty ? page : Array(("<!doctype html>\n<html lang=\"en\" data-base=\"\(prefix)\">\n" + rest).utf8)
    }

    private static let page: [UInt8] = Array(("<!doctype html>\n<html lang=\"en\">\n" + rest).utf8)
    private static let rest = head + style + body + script

    private static let head = """
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>aabridge</title>

        """

    private static let style = """
        <style>
        body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #f5f5f7; }
        header { display: flex; gap: 1.5em; align-items: baseline; padding: .8em 1.2em; background: #1d1d1f; color: #fff; }
        header h1 { font-size: 1.2em; margin: 0; }
        main { padding: 1em 1.2em; display: grid; gap: 1em; }
        section { background: #fff; border-radius: 8px; padding: .8em 1em; box-shadow: 0 1px 2px #0002; }
        h2 { font-size: 1.05em; margin: 0 0 .6em; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: .35em .5em; border-bottom: 1px solid #e5e5ea; vertical-align: top; }
        th { font-weight: 600; color: #555; }
        .online { color: #1a7f37; font-weight: 600; } .offline { color: #c4161c; font-weight: 600; }
        .muted { color: #888; } .error { color: #c4161c; }
        button { font: inherit; padding: .2em .7em; border-radius: 5px; border: 1px solid #aaa; background: #fafafa; cursor: pointer; }
        button.danger { border-color: #c4161c; color: #c4161c; }
        input { font: inherit; padding: .2em .4em; border: 1px solid #bbb; border-radius: 4px; }
        .row { display: flex; gap: .5em; flex-wrap: wrap; align-items: center; margin: .3em 0; }
        #log { font-family: ui-monospace, monospace; font-size: 12px; max-height: 10em; overflow: auto; white-space: pre-wrap; }
        #login { display: none; }
        [hidden] { display: none !important; }
        </style>
        </head>

        """

    private static let body = """
        <body>
        <header><h1>aabridge</h1><span id="bridge-state" class="offline">connecting…</span><span id="bridge-version"></span>
        <span id="bridge-health" class="muted"></span></header>
        <main>
        <section id="login"><h2>Token</h2><form id="login-form" class="row">
        <input id="token" type="password" autocomplete="current-password" placeholder="http.token">
        <button type="submit">Use token</button></form></section>
        <section id="picker"><h2>Pairing</h2>
        <div class="row"><span id="picker-state">Picker: idle</span>
        <input id="picker-products" placeholder="Products (optional, comma-separated)" size="34">
        <button id="picker-show" type="button">Show picker</button>
        <button id="picker-dismiss" type="button">Dismiss</button></div>
        <table><thead><tr><th>Candidate</th><th>Product</th><th>Advertised name</th><th>RSSI</th><th>Gateway</th><th></th></tr></thead>
        <tbody id="candidates"></tbody></table>
        <form id="select-form" class="row" hidden>
        <strong id="select-id"></strong>
        <input id="select-name" placeholder="Name" maxlength="128">
        <input id="select-primary" placeholder="Primary source (optional)" size="19">
        <input id="select-secondary" placeholder="Secondary source (optional)" size="19">
        <input id="select-irk" type="password" autocomplete="off" placeholder="IRK (optional)">
        <input id="select-encryption" type="password" autocomplete="off" placeholder="Encryption key (optional)">
        <button id="select-submit" type="submit">Pair</button></form></section>
        <section><h2>Accessories</h2>
        <table><thead><tr><th>Name</th><th>Id</th><th>Product</th><th>State</th><th>Placement</th><th>Room</th><th>Battery</th>
        <th>Routes</th><th>Keys</th><th>Last error</th><th>Actions</th></tr></thead><tbody id="accessories"></tbody></table>
        <p id="no-accessories" class="muted">No accessories yet: show the picker and pair one.</p></section>
        <section><h2>Gateways</h2><div id="gateways" class="muted">none heard</div></section>
        <section><h2>Requests</h2><div id="log"></div></section>
        </main>

        """

    private static let script = """
        <script>
        "use strict";
        const state = { accessories: [], picker: null, selected: null, drafts: {} };
        const $ = (id) => document.getElementById(id);
        // Behind Home Assistant's ingress the page is at /api/hassio_ingress/<token>/ and so is
        // everything it asks for: the server says where in data-base ("" when reached directly).
        const base = document.documentElement.getAttribute("data-base") || "";
        function el(tag, text, attributes) {
          const node = document.createElement(tag);
          if (text !== undefined && text !== null) node.textContent = String(text);
          for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
          return node;
        }
        function log(line) {
          const entry = el("div", new Date().toLocaleTimeString() + "  " + line);
          $("log").prepend(entry);
          while ($("log").childNodes.length > 50) $("log").lastChild.remove();
        }
        // Every action is a request of the MQTT request API, over HTTP: same body, same response.
        async function request(name, body) {
          let response;
          try {
            response = await fetch(base + "/api/request/" + name, {
              method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}),
              credentials: "same-origin" });
          } catch (error) { log(name + ": " + error); return null; }
          if (response.status === 401) { askToken(); return null; }
          let answer = null;
          try { answer = await response.json(); } catch (error) { log(name + ": HTTP " + response.status); return null; }
          if (answer.status === "ok") log(name + ": ok");
          else log(name + ": " + (answer.error ? answer.error.code + ": " + answer.error.message : "error"));
          return answer;
        }
        function askToken() { $("login").style.display = "block"; }
        $("login-form").addEventListener("submit", (event) => {
          event.preventDefault();
          document.cookie = "aabridge_token=" + encodeURIComponent($("token").value) + "; path=" + (base || "/") + "; SameSite=Strict";
          $("token").value = "";
          $("login").style.display = "none";
          connect();
        });
        function battery(value) {
          if (!value) return "";
          const names = { main: "", left: "L ", right: "R ", case: "case " };
          const flags = { main: "charging", left: "left_charging", right: "right_charging", case: "case_charging" };
          return Object.keys(names).filter((key) => typeof value[key] === "number")
            .map((key) => names[key] + value[key] + "%" + (value[flags[key]] === true ? " charging" : "")).join(", ");
        }
        // What was typed in a row (and an armed Remove) survives the re-rendering of the table.
        function draft(id) { return state.drafts[id] || (state.drafts[id] = { name: "", irk: "", key: "", armed: false }); }
        function bind(input, id, field) {
          input.value = draft(id)[field];
          input.addEventListener("input", () => { draft(id)[field] = input.value; });
          return input;
        }
        function renderAccessories() {
          const body = $("accessories");
          body.replaceChildren();
          $("no-accessories").hidden = state.accessories.length > 0;
          for (const accessory of state.accessories) {
            const row = el("tr", null, { "data-id": accessory.id });
            row.append(el("td", accessory.name, { class: "name" }), el("td", accessory.id), el("td", accessory.product));
            row.append(el("td", accessory.state + (accessory.available ? "" : " (unavailable)"), { class: "state" }));
            row.append(el("td", accessory.placement || "", { class: "placement" }), el("td", accessory.room || ""));
            row.append(el("td", battery(accessory.battery)), el("td", (accessory.routes || []).join(", ")));
            const keys = accessory.keys || {};
            row.append(el("td", "IRK " + (keys.irk ? "set" : "not set") + ", key " + (keys.encryption_key ? "set" : "not set"), { class: "keys" }));
            const lastError = accessory.last_error;
            row.append(el("td", lastError ? lastError.code + ": " + lastError.message : "", { class: "error" }));
            const actions = el("td");
            if (accessory.state === "awaitingAuthorization") {
              const authorize = el("button", "Authorize", { type: "button", class: "authorize" });
              authorize.onclick = () => request("\(RequestName.authorize.name)", { id: accessory.id });
              actions.append(authorize);
            }
            const renameRow = el("div", null, { class: "row" });
            const nameInput = bind(el("input", null, { class: "rename-name", placeholder: "New name", maxlength: "128" }), accessory.id, "name");
            const rename = el("button", "Rename", { type: "button", class: "rename" });
            rename.onclick = async () => {
              const answer = await request("\(RequestName.rename.name)", { id: accessory.id, name: nameInput.value });
              if (answer && answer.status === "ok") draft(accessory.id).name = "";
            };
            renameRow.append(nameInput, rename);
            const keysRow = el("div", null, { class: "row" });
            const irk = bind(el("input", null, { type: "password", autocomplete: "off", placeholder: "IRK", class: "keys-irk" }), accessory.id, "irk");
            const key = bind(el("input", null, { type: "password", autocomplete: "off", placeholder: "Encryption key", class: "keys-key" }), accessory.id, "key");
            const setKeys = el("button", "Set keys", { type: "button", class: "set-keys" });
            setKeys.onclick = () => {
              const body = { id: accessory.id };
              if (irk.value) body.irk = irk.value;
              if (key.value) body.encryption_key = key.value;
              irk.value = ""; key.value = ""; draft(accessory.id).irk = ""; draft(accessory.id).key = "";
              request("\(RequestName.keys.name)", body);
            };
            keysRow.append(irk, key, setKeys);
            const remove = el("button", draft(accessory.id).armed ? "Really remove?" : "Remove", { type: "button", class: "remove danger" });
            remove.onclick = () => {
              // Two clicks: a removal cannot be undone (the accessory must be paired again).
              if (draft(accessory.id).armed) { draft(accessory.id).armed = false; request("\(RequestName.remove.name)", { id: accessory.id }); return; }
              draft(accessory.id).armed = true;
              remove.textContent = "Really remove?";
            };
            actions.append(renameRow, keysRow, remove);
            row.append(actions);
            body.append(row);
          }
        }
        function renderPicker() {
          const picker = state.picker || { state: "idle", candidates: [] };
          $("picker-state").textContent = "Picker: " + picker.state + (picker.expires_at ? " until " + picker.expires_at : "");
          const body = $("candidates");
          body.replaceChildren();
          for (const candidate of picker.candidates || []) {
            const row = el("tr", null, { "data-id": candidate.id });
            row.append(el("td", candidate.id), el("td", candidate.product), el("td", candidate.name || ""));
            row.append(el("td", candidate.rssi === null ? "" : candidate.rssi), el("td", candidate.gateway || ""));
            const choose = el("button", "Select", { type: "button", class: "choose" });
            choose.onclick = () => {
              state.selected = candidate.id;
              $("select-id").textContent = candidate.id;
              $("select-name").value = candidate.name || candidate.product;
              $("select-form").hidden = false;
            };
            const cell = el("td");
            cell.append(choose);
            row.append(cell);
            body.append(row);
          }
          const still = (picker.candidates || []).some((candidate) => candidate.id === state.selected);
          if (!still) { state.selected = null; $("select-form").hidden = true; }
        }
        $("picker-show").onclick = () => {
          const products = $("picker-products").value.split(",").map((name) => name.trim()).filter((name) => name);
          request("\(RequestName.showPicker.name)", products.length ? { products } : {});
        };
        $("picker-dismiss").onclick = () => request("\(RequestName.dismissPicker.name)", {});
        $("select-form").addEventListener("submit", async (event) => {
          event.preventDefault();
          if (!state.selected) return;
          const body = { id: state.selected };
          const fields = { name: "select-name", primary_source: "select-primary", secondary_source: "select-secondary",
            irk: "select-irk", encryption_key: "select-encryption" };
          for (const [key, id] of Object.entries(fields)) { if ($(id).value.trim()) body[key] = $(id).value.trim(); }
          $("select-irk").value = ""; $("select-encryption").value = "";
          await request("\(RequestName.selectCandidate.name)", body);
        });
        function renderGateways(gateways) {
          const list = Array.isArray(gateways) ? gateways : [];
          $("gateways").textContent = list.length ? list.map((g) => g.name + " (" + g.format + "): " + g.state).join(" · ") : "none configured";
        }
        function received(topic, payload) {
          if (topic === "bridge/state") {
            const online = payload && payload.state === "online";
            $("bridge-state").textContent = online ? "online" : "offline";
            $("bridge-state").className = online ? "online" : "offline";
          } else if (topic === "bridge/info" && payload) {
            $("bridge-version").textContent = "v" + payload.version;
          } else if (topic === "bridge/health" && payload) {
            // Published every health.interval_s: its counters say when they were taken.
            $("bridge-health").textContent = payload.decisions + " decisions, " + payload.errors + " errors, " +
              payload.telemetry_rejected + " rejected, up " + payload.uptime_s + " s (at " + payload.at + ")";
          } else if (topic === "bridge/accessories") {
            state.accessories = Array.isArray(payload) ? payload : [];
            renderAccessories();
          } else if (topic === "bridge/picker") {
            state.picker = payload;
            renderPicker();
          } else if (topic === "bridge/gateways") {
            renderGateways(payload);
          } else if (topic.startsWith("accessory/") && topic.split("/").length === 2 && payload) {
            // A single accessory's state arrives before the (batched) list: show it at once.
            const index = state.accessories.findIndex((accessory) => accessory.id === payload.id);
            if (index >= 0) state.accessories[index] = payload; else state.accessories.push(payload);
            renderAccessories();
          } else if (topic.startsWith("accessory/") && topic.endsWith("/error") && payload) {
            log("accessory error: " + payload.code + ": " + payload.message);
          }
        }
        let source = null;
        async function connect() {
          if (source) source.close();
          // EventSource says nothing about a 401: ask first.
          const probe = await fetch(base + "/metrics", { method: "GET", credentials: "same-origin" }).catch(() => null);
          if (probe && probe.status === 401) { askToken(); return; }
          source = new EventSource(base + "/events");
          source.addEventListener("mqtt", (event) => {
            const message = JSON.parse(event.data);
            received(message.topic, message.payload);
          });
          source.onerror = () => {
            $("bridge-state").textContent = "console disconnected, retrying…";
            $("bridge-state").className = "offline";
          };
        }
        connect();
        </script>
        </body>
        </html>

        """
}
