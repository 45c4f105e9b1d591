import Configuration
import Foundation
import JSON
import TestSupport
import Testing

/// Runs a Home Assistant automation, or an automation blueprint with its inputs, the way Home
/// Assistant does for the parts aabridge's blueprints use, with its templates rendered by
/// Jinja2 in the immutable sandbox (python3): `!input` replaced by the given input or the
/// input's default; `trigger_variables` rendered when the automation starts; per event, the
/// first matching trigger (MQTT with `+`/`#` wildcards and `payload_json`, or a state trigger
/// with `attribute`, `from`, `to`, `not_from`, `not_to`; `for` is not waited), then the
/// automation's `variables`, its conditions and its actions (`variables`, `condition`,
/// `choose`, `if`, `repeat` with `for_each`, and the calls, recorded with their rendered
/// target and data). Each rendered text is taken as a Python literal when it is one (Home
/// Assistant's parse_result), a list or dict keeping its text for a call's data field (its
/// ResultWrapper: `mqtt.publish` gets the JSON text); a template condition passes on a true
/// result. Home Assistant's `is_state`, `state_attr` and `states` read `states`.
enum AutomationRunner {
    /// What one event did.
    struct Outcome: Sendable {
        /// A trigger matched.
        var fired: Bool
        /// The conditions passed.
        var passed: Bool
        /// The actions called, in order.
        var calls: [Call]
        /// A template or emulation error, nil when none.
        var error: String?
    }

    /// One action call.
    struct Call: Sendable, Equatable {
        var action: String
        var target: JSONValue
        var data: JSONValue

        static func == (a: Call, b: Call) -> Bool { a.action == b.action && a.target == b.target && a.data == b.data }
    }

    /// An MQTT message as a trigger event.
    static func mqtt(_ topic: String, _ payload: String) -> JSONValue {
        ["platform": "mqtt", "topic": .string(topic), "payload": .string(payload)]
    }

    /// A state change as a trigger event; a state is `{"state", "attributes", "name"}`, nil
    /// for none.
    static func state(_ entity: String, from: JSONValue?, to: JSONValue?) -> JSONValue {
        ["platform": "state", "entity_id": .string(entity), "from_state": from ?? .null, "to_state": to ?? .null]
    }

    /// Runs `automation` (a parsed file) for each event.
    static func run(
        _ automation: YAMLNode, inputs: [(String, JSONValue)] = [], states: [(String, JSONValue)] = [], events: [JSONValue]
    ) throws -> [Outcome] {
        let spec: JSONValue = [
            "automation": try json(automation), "inputs": .object(inputs), "states": .object(states), "events": .array(events),
        ]
        let results = try JSONParser.parse(try Jinja.run(script: scriptText, input: spec.bytes))
        return (results["results"]?.arrayValue ?? []).map { result in
            Outcome(
                fired: result["fired"]?.boolValue ?? false, passed: result["passed"]?.boolValue ?? false,
                calls: (result["calls"]?.arrayValue ?? []).map {
                    Call(action: $0["action"]?.stringValue ?? "", target: $0["target"] ?? .null, data: $0["data"] ?? .null)
                },
                error: result["error"]?.stringValue)
        }
    }

    /// A parsed YAML document as the JSON Home Assistant's loader (YAML 1.1) would make of it:
    /// plain scalars typed (booleans, integers, floats, null), quoted ones strings, and
    /// `!input name` as `{"!input": "name"}`.
    static func json(_ node: YAMLNode) throws -> JSONValue {
        switch node.content {
        case .scalar(let scalar):
            if scalar.tag == "!input" { return ["!input": .string(scalar.value)] }
            if let tag = scalar.tag { throw BlueprintError("unexpected tag \(tag) at \(node.origin)") }
            guard scalar.style == .plain else { return .string(scalar.value) }
            if scalar.isNull { return .null }
            if ["true", "True", "TRUE"].contains(scalar.value) { return .bool(true) }
            if ["false", "False", "FALSE"].contains(scalar.value) { return .bool(false) }
            if let int = Int(scalar.value) { return .int(int) }
            if scalar.value.contains("."), let double = Double(scalar.value) { return .double(double) }
            return .string(scalar.value)
        case .sequence(let items):
            return .array(try items.map(json))
        case .mapping(let entries):
            return .object(try entries.map { (try #require($0.key.scalar?.value), try json($0.value)) })
        }
    }

    static let scriptText = #"""
        import ast, json, re, sys
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        spec = json.load(open(sys.argv[1]))
        states = spec.get("states", {})
        env = ImmutableSandboxedEnvironment()
        env.globals["is_state"] = lambda entity, state: entity in states and states[entity]["state"] == state
        env.globals["state_attr"] = lambda entity, name: states.get(entity, {}).get("attributes", {}).get(name)
        env.globals["states"] = lambda entity: states.get(entity, {}).get("state", "unknown")

        class Stop(Exception):
            pass

        class WrappedList(list):
            pass

        class WrappedDict(dict):
            pass

        def native(text):
            # Home Assistant's parse_result: a text that is a Python literal becomes that value; a list
            # or dict keeps the text it came from (its ResultWrapper), which is what a service's string
            # field (mqtt.publish's payload) gets.
            try:
                value = ast.literal_eval(text)
            except Exception:
                return text
            if isinstance(value, str):
                return text
            if isinstance(value, (list, dict)):
                wrapped = WrappedList(value) if isinstance(value, list) else WrappedDict(value)
                wrapped.render_result = text
                return wrapped
            return value

        def render(template, context):
            return env.from_string(template).render(**context)

        def complex_value(value, context):
            if isinstance(value, str):
                return native(render(value, context))
            if isinstance(value, list):
                return [complex_value(item, context) for item in value]
            if isinstance(value, dict):
                return {key: complex_value(item, context) for key, item in value.items()}
            return value

        def boolean(value):
            if isinstance(value, bool):
                return value
            if isinstance(value, (int, float)):
                return value != 0
            return str(value).strip().lower() in ("true", "yes", "on", "enable", "1")

        def substitute(node, inputs, used):
            if isinstance(node, dict):
                if set(node) == {"!input"}:
                    name = node["!input"]
                    used.add(name)
                    if name not in inputs:
                        raise KeyError("no value for input %s" % name)
                    return inputs[name]
                return {key: substitute(value, inputs, used) for key, value in node.items()}
            if isinstance(node, list):
                return [substitute(item, inputs, used) for item in node]
            return node

        def as_list(value):
            if value is None:
                return []
            return value if isinstance(value, list) else [value]

        def topic_matches(pattern, topic):
            p, t = pattern.split("/"), topic.split("/")
            for index, level in enumerate(p):
                if level == "#":
                    return True
                if index >= len(t) or (level != "+" and level != t[index]):
                    return False
            return len(p) == len(t)

        def match_trigger(index, trigger, event, trigger_variables):
            kind = trigger.get("trigger", trigger.get("platform"))
            base = {"id": str(trigger.get("id", index)), "idx": str(index), "platform": kind}
            if kind == "mqtt" and event["platform"] == "mqtt":
                topic = render(trigger["topic"], trigger_variables)
                if not topic_matches(topic, event["topic"]):
                    return None
                result = dict(base, topic=event["topic"], payload=event["payload"], qos=0)
                try:
                    result["payload_json"] = json.loads(event["payload"])
                except Exception:
                    pass
                if "payload" in trigger:
                    value = event["payload"]
                    if "value_template" in trigger:
                        value = render(trigger["value_template"], {"value": event["payload"], "value_json": result.get("payload_json")})
                    if value != render(str(trigger["payload"]), trigger_variables):
                        return None
                return result
            if kind == "state" and event["platform"] == "state":
                if event["entity_id"] not in as_list(trigger.get("entity_id")):
                    return None
                before, after = event.get("from_state"), event.get("to_state")
                attribute = trigger.get("attribute")
                def value(state):
                    if state is None:
                        return None
                    return state.get("attributes", {}).get(attribute) if attribute else state["state"]
                if attribute:
                    if value(before) == value(after):
                        return None
                elif any(key in trigger for key in ("from", "to", "not_from", "not_to")):
                    if before is not None and after is not None and before["state"] == after["state"]:
                        return None
                if "from" in trigger and trigger["from"] is not None and value(before) not in as_list(trigger["from"]):
                    return None
                if "to" in trigger and trigger["to"] is not None and value(after) not in as_list(trigger["to"]):
                    return None
                if "not_from" in trigger and value(before) in as_list(trigger["not_from"]):
                    return None
                if "not_to" in trigger and value(after) in as_list(trigger["not_to"]):
                    return None
                return dict(base, entity_id=event["entity_id"], from_state=before, to_state=after, **{"for": trigger.get("for")})
            return None

        def condition(item, context):
            if isinstance(item, str):
                return boolean(native(render(item, context)))
            kind = item.get("condition")
            if kind == "template":
                return boolean(native(render(item["value_template"], context)))
            if kind == "and":
                return all(condition(c, context) for c in item["conditions"])
            if kind == "or":
                return any(condition(c, context) for c in item["conditions"])
            if kind == "not":
                return not any(condition(c, context) for c in item["conditions"])
            if kind == "state":
                return all(states.get(e, {}).get("state") in as_list(item["state"]) for e in as_list(item["entity_id"]))
            raise ValueError("condition %r is not emulated" % kind)

        def run(sequence, context, calls):
            for step in sequence:
                if "variables" in step:
                    for name, value in step["variables"].items():
                        context[name] = complex_value(value, context)
                elif "condition" in step:
                    if not condition(step, context):
                        raise Stop()
                elif "choose" in step:
                    for option in step["choose"]:
                        if all(condition(c, context) for c in as_list(option["conditions"])):
                            run(option["sequence"], context, calls)
                            break
                    else:
                        run(step.get("default", []), context, calls)
                elif "if" in step:
                    if all(condition(c, context) for c in as_list(step["if"])):
                        run(step["then"], context, calls)
                    else:
                        run(step.get("else", []), context, calls)
                elif "repeat" in step:
                    items = complex_value(step["repeat"]["for_each"], context)
                    for index, item in enumerate(items):
                        inner = dict(context, repeat={"item": item, "index": index + 1, "first": index == 0, "last": index == len(items) - 1})
                        run(step["repeat"]["sequence"], inner, calls)
                elif "action" in step:
                    calls.append({
                        "action": complex_value(step["action"], context),
                        "target": complex_value(step.get("target", {}), context),
                        "data": {key: getattr(value, "render_result", value) for key, value in complex_value(step.get("data", {}), context).items()},
                    })
                elif "stop" in step:
                    raise Stop()
                else:
                    raise ValueError("action %r is not emulated" % list(step))

        document = spec["automation"]
        inputs = {}
        declared = (document.get("blueprint") or {}).get("input") or {}
        for name, declaration in declared.items():
            if isinstance(declaration, dict) and "default" in declaration:
                inputs[name] = declaration["default"]
        inputs.update(spec.get("inputs", {}))
        used = set()
        automation = substitute({k: v for k, v in document.items() if k != "blueprint"}, inputs, used)
        trigger_variables = {}
        for name, value in (automation.get("trigger_variables") or {}).items():
            trigger_variables[name] = complex_value(value, trigger_variables)
        results = []
        for event in spec["events"]:
            result = {"fired": False, "passed": False, "calls": []}
            try:
                for index, trigger in enumerate(automation["triggers"]):
                    matched = match_trigger(index, trigger, event, trigger_variables)
                    if matched is not None:
                        break
                if matched is None:
                    results.append(result)
                    continue
                result["fired"] = True
                context = dict(trigger_variables, trigger=matched)
                for name, value in (automation.get("variables") or {}).items():
                    context[name] = complex_value(value, context)
                if not all(condition(c, context) for c in as_list(automation.get("conditions"))):
                    results.append(result)
                    continue
                result["passed"] = True
                try:
                    run(automation["actions"], context, result["calls"])
                except Stop:
                    pass
            except Exception as error:
                result["error"] = "%s: %s" % (type(error).__name__, error)
            results.append(result)
        json.dump({"results": results, "used_inputs": sorted(used)}, open(sys.argv[2], "w"))
        """#
}

/// A blueprint that is not what the tests expect.
struct BlueprintError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
