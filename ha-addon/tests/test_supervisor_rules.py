"""The add-on's files checked against the rules the Home Assistant Supervisor applies to them.

Usage: ha-addon/tests/test_supervisor_rules.py [--addon ha-addon/aabridge]

The rules were read from home-assistant/supervisor at 090ef31ec024952c2469ed5a7c9f3ce8c1a5499e
(2026-08-21, after release 2026.08.0) and are written out here; none of its code is copied
into this repository, and it is not imported (it is not installed here):

- supervisor/apps/build.py, AppBuild.create/_read_build_config: a build.yaml (or .yml, .json)
  makes the Supervisor log "uses build.yaml which is deprecated. Move build parameters into the
  Dockerfile directly" at every build; a build_from that fails RE_DOCKER_IMAGE_BUILD
  (apps/validate.py: an image name with a `/`) makes it log "Error parsing ... build config
  ..., using defaults" and build FROM ghcr.io/home-assistant/base:latest. Without a build file
  (2026.04.0 and later) it passes only BUILD_VERSION and BUILD_ARCH; older Supervisors pass
  BUILD_FROM too, their own Alpine base: the Dockerfile must not take its bases from BUILD_FROM.
- supervisor/apps/validate.py, _SCHEMA_APP_CONFIG (extra=REMOVE_EXTRA: an unknown key is
  dropped without a word) and the deprecation advisories of _migrate_app_config and
  _warn_app_config; SCHEMA_ELEMENT with options.py's RE_SCHEMA_ELEMENT for the schema's types.
- supervisor/apps/options.py, AppOptions: how the default options are checked against the
  schema (unknown keys dropped, a missing key refused unless its type ends in `?`).
- supervisor/apps/validate.py, SCHEMA_APP_TRANSLATIONS / SCHEMA_TRANSLATION_CONFIGURATION:
  configuration.<option>.{name, description, fields.<key>.{...}}.

Each rule is also run on a copy of the files broken on purpose, and must catch it: a rule that
cannot fail is reported as a failure.
"""
import argparse
import copy
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUPERVISOR_COMMIT = "090ef31ec024952c2469ed5a7c9f3ce8c1a5499e"

# apps/validate.py
RE_DOCKER_IMAGE_BUILD = re.compile(r"^([a-zA-Z\-\.:\d{}]+/)*?([\-\w{}]+)/([\-\w{}]+)(:[\.\-\w{}]+)?$")
RE_SERVICE = re.compile(r"^(?P<service>mqtt|mysql):(?P<rights>provide|want|need)$")
RE_SLUG_FIELD = re.compile(r"^[-_.A-Za-z0-9]+$")
# apps/options.py
RE_SCHEMA_ELEMENT = re.compile(
    r"^(?:"
    r"|bool|email|url|port"
    r"|device(?:\((?P<filter>subsystem=[a-z]+)\))?"
    r"|str(?:\((?P<s_min>\d+)?,(?P<s_max>\d+)?\))?"
    r"|password(?:\((?P<p_min>\d+)?,(?P<p_max>\d+)?\))?"
    r"|int(?:\((?P<i_min>-?\d+)?,(?P<i_max>-?\d+)?\))?"
    r"|float(?:\((?P<f_min>-?\d*\.?\d+)?,(?P<f_max>-?\d*\.?\d+)?\))?"
    r"|match\((?P<match>.*)\)"
    r"|list\((?P<list>.+)\)"
    r")\??$"
)
# const.py
ARCH_ALL = ["aarch64", "amd64"]
ARCH_DEPRECATED = ["armhf", "armv7", "i386"]
STARTUP = ["initialize", "system", "services", "application", "once"]
BOOT = ["auto", "manual", "manual_only"]
STAGE = ["stable", "experimental", "deprecated"]
MAP_TYPES = ["data", "config", "ssl", "local_apps", "backup", "share", "media", "homeassistant_config", "all_app_configs",
             "app_config", "addons", "all_addon_configs", "addon_config"]
# The keys _SCHEMA_APP_CONFIG knows; any other is removed (vol.REMOVE_EXTRA).
CONFIG_KEYS = {
    "name", "version", "slug", "description", "arch", "machine", "url", "startup", "boot", "init", "advanced", "stage",
    "ports", "ports_description", "watchdog", "webui", "ingress", "ingress_port", "ingress_entry", "ingress_stream",
    "panel_icon", "panel_title", "panel_admin", "homeassistant", "host_network", "host_pid", "host_ipc", "host_uts",
    "host_dbus", "devices", "udev", "tmpfs", "map", "environment", "privileged", "apparmor", "full_access", "audio",
    "video", "gpio", "usb", "uart", "devicetree", "kernel_modules", "realtime", "hassio_api", "hassio_role",
    "homeassistant_api", "stdin", "legacy", "docker_api", "auth_api", "services", "discovery", "backup_exclude",
    "backup_pre", "backup_post", "backup", "options", "schema", "image", "ulimits", "timeout", "journald",
    "breaking_versions",
}
BOOLEAN_KEYS = {
    "init", "ingress", "ingress_stream", "panel_admin", "host_network", "host_pid", "host_ipc", "host_uts", "host_dbus",
    "udev", "apparmor", "full_access", "audio", "video", "gpio", "usb", "uart", "devicetree", "kernel_modules", "realtime",
    "hassio_api", "homeassistant_api", "stdin", "legacy", "docker_api", "auth_api", "journald",
}
# Deprecated keys and values: each one an advisory in the Supervisor's log (_migrate_app_config,
# _warn_app_config), or ignored.
DEPRECATED_KEYS = {"advanced", "codenotary", "auto_uart", "snapshot", "snapshot_exclude", "snapshot_pre", "snapshot_post"}
BUILD_FILES = ("build.yaml", "build.yml", "build.json")


def config_problems(config):
    """config.yaml against _SCHEMA_APP_CONFIG and its advisories."""
    problems = []
    if not isinstance(config, dict):
        return ["config.yaml: not a mapping"]
    for key in sorted(set(config) - CONFIG_KEYS):
        problems.append(f"config.yaml: {key}: unknown to the Supervisor, dropped without a word")
    for key in sorted(set(config) & DEPRECATED_KEYS):
        problems.append(f"config.yaml: {key}: deprecated")
    for key in ("name", "version", "slug", "description", "arch"):
        if key not in config:
            problems.append(f"config.yaml: {key}: required")
    for key in ("name", "description", "panel_icon", "panel_title", "ingress_entry"):
        if key in config and not isinstance(config[key], str):
            problems.append(f"config.yaml: {key}: must be a string")
    if not isinstance(config.get("version"), str):
        problems.append("config.yaml: version: a quoted string (a bare 0.1 is a float)")
    if "slug" in config and not RE_SLUG_FIELD.match(str(config["slug"])):
        problems.append("config.yaml: slug: not [-_.A-Za-z0-9]+")
    for arch in config.get("arch", []):
        if arch in ARCH_DEPRECATED:
            problems.append(f"config.yaml: arch: {arch} is deprecated")
        elif arch not in ARCH_ALL:
            problems.append(f"config.yaml: arch: {arch} unknown")
    if config.get("startup", "application") not in STARTUP:
        problems.append(f"config.yaml: startup: {config.get('startup')!r} (before/after are deprecated)")
    if config.get("boot", "auto") not in BOOT:
        problems.append(f"config.yaml: boot: {config.get('boot')!r}")
    if config.get("stage", "stable") not in STAGE:
        problems.append(f"config.yaml: stage: {config.get('stage')!r}")
    for key in sorted(BOOLEAN_KEYS & set(config)):
        if not isinstance(config[key], bool):
            problems.append(f"config.yaml: {key}: must be true or false")
    port = config.get("ingress_port", 8099)
    if not (isinstance(port, int) and (port == 0 or 1 <= port <= 65535)):
        problems.append(f"config.yaml: ingress_port: {port!r}")
    if not (isinstance(config.get("timeout", 10), int) and 10 <= config.get("timeout", 10) <= 300):
        problems.append("config.yaml: timeout: 10..300")
    for service in config.get("services", []):
        if not RE_SERVICE.match(str(service)):
            problems.append(f"config.yaml: services: {service!r}")
    if not isinstance(config.get("tmpfs", False), bool):
        problems.append("config.yaml: tmpfs: deprecated format")
    if any(":" in str(device) for device in config.get("devices", [])):
        problems.append("config.yaml: devices: deprecated format")
    for volume in config.get("map", []):
        kind = volume.get("type") if isinstance(volume, dict) else str(volume).split(":")[0]
        if kind not in MAP_TYPES:
            problems.append(f"config.yaml: map: {volume!r}")
        elif kind in ("addons", "all_addon_configs", "addon_config", "config"):
            problems.append(f"config.yaml: map: {kind} is deprecated")
    if "image" in config:
        problems.append("config.yaml: image: the add-on is built on the box, no image is published")
    schema = config.get("schema", {})
    if not isinstance(schema, dict):
        problems.append("config.yaml: schema: a mapping")
    else:
        for key, element in schema.items():
            problems += [f"config.yaml: schema.{key}{where}: {why}" for where, why in element_problems(element)]
    if not isinstance(config.get("options", {}), dict):
        problems.append("config.yaml: options: a mapping")
    elif isinstance(schema, dict):
        problems += [f"config.yaml: options.{where}: {why}" for where, why in
                     option_problems(schema, config.get("options", {}))]
    return problems


def element_problems(element, where=""):
    """SCHEMA_ELEMENT: a type string, a list of one type string or mapping (no list in a list),
    or a mapping of elements."""
    if isinstance(element, str):
        return [] if RE_SCHEMA_ELEMENT.match(element) else [(where, f"unknown type {element!r}")]
    if isinstance(element, list):
        if len(element) != 1:
            return [(where, "a list holds exactly one element type")]
        if isinstance(element[0], list):
            return [(where, "a list may not directly contain another list")]
        return element_problems(element[0], where + "[]")
    if isinstance(element, dict):
        return [problem for key, inner in element.items() for problem in element_problems(inner, f"{where}.{key}")]
    return [(where, f"not a type: {element!r}")]


def value_problems(typ, value, where):
    """AppOptions._validate_element for the types this add-on uses (str, bool, int, list(...), match)."""
    if isinstance(typ, list):
        if not isinstance(value, list):
            return [(where, "Invalid list")]
        return [problem for index, item in enumerate(value) for problem in value_problems(typ[0], item, f"{where}[{index}]")]
    if isinstance(typ, dict):
        if not isinstance(value, dict):
            return [(where, "Invalid dict")]
        return option_problems(typ, value, where + ".")
    if value is None:
        return [(where, "Missing required option")]
    match = RE_SCHEMA_ELEMENT.match(typ) if isinstance(typ, str) else None
    if not match:
        return [(where, f"Unknown type {typ!r}")]
    base = typ.rstrip("?")
    if base.startswith(("str", "password")):
        low, high = match.group("s_min") or match.group("p_min"), match.group("s_max") or match.group("p_max")
        if not isinstance(value, str) or (low and len(value) < int(low)) or (high and len(value) > int(high)):
            return [(where, f"not a {base}: {value!r}")]
    elif base == "bool":
        if not isinstance(value, bool):
            return [(where, f"not a bool: {value!r}")]
    elif base.startswith("list("):
        if str(value) not in match.group("list").split("|"):
            return [(where, f"{value!r} not one of {match.group('list')}")]
    elif base.startswith("int"):
        if not isinstance(value, int) or isinstance(value, bool):
            return [(where, f"not an int: {value!r}")]
    elif base.startswith("match("):
        if not re.fullmatch(match.group("match"), str(value)):
            return [(where, f"{value!r} does not match")]
    return []


def option_problems(schema, options, prefix=""):
    problems = []
    for key, value in options.items():
        if key not in schema:
            problems.append((prefix + key, "not in the schema: the Supervisor drops it with a warning"))
        else:
            problems += value_problems(schema[key], value, prefix + key)
    for key, typ in schema.items():
        if key in options:
            continue
        inner = typ[0] if isinstance(typ, list) and typ else typ
        if not (isinstance(inner, str) and inner.endswith("?")):
            problems.append((prefix + key, "Missing option"))
    return problems


def nested_fields(element):
    """The keys of a nested option (a mapping, or a list of mappings), each with its element."""
    if isinstance(element, list) and element and isinstance(element[0], dict):
        return element[0]
    if isinstance(element, dict):
        return element
    return None


def translation_problems(schema, translations, language):
    """SCHEMA_APP_TRANSLATIONS, and a name and a description for every option and nested field."""
    problems = []
    if not isinstance(translations, dict):
        return [f"translations/{language}.yaml: not a mapping"]
    configuration = translations.get("configuration")
    if not isinstance(configuration, dict):
        return [f"translations/{language}.yaml: configuration: missing"]

    def walk(schema_part, entries, where):
        if not isinstance(entries, dict):
            problems.append(f"translations/{language}.yaml: {where}: a mapping of options")
            return
        for key in entries:
            if key not in schema_part:
                problems.append(f"translations/{language}.yaml: {where}.{key}: no such option in the schema")
        for key, element in schema_part.items():
            entry = entries.get(key)
            at = f"{where}.{key}"
            if not isinstance(entry, dict):
                problems.append(f"translations/{language}.yaml: {at}: missing")
                continue
            for part in ("name", "description"):
                if not isinstance(entry.get(part), str) or not entry[part].strip():
                    problems.append(f"translations/{language}.yaml: {at}.{part}: missing")
            for part in set(entry) - {"name", "description", "fields"}:
                problems.append(f"translations/{language}.yaml: {at}.{part}: unknown to the Supervisor")
            fields = nested_fields(element)
            if fields is not None:
                walk(fields, entry.get("fields"), at + ".fields")
            elif "fields" in entry:
                problems.append(f"translations/{language}.yaml: {at}.fields: the option has no fields")

    walk(schema, configuration, "configuration")
    for key in set(translations) - {"configuration", "network"}:
        problems.append(f"translations/{language}.yaml: {key}: unknown to the Supervisor")
    return problems


def build_problems(files, dockerfile):
    """No build file; the Dockerfile names its own bases and does not take them from BUILD_FROM."""
    problems = []
    for name, text in files.items():
        problems.append(f"{name}: deprecated (\"Move build parameters into the Dockerfile directly\")")
        data = yaml.safe_load(text) or {}
        build_from = data.get("build_from", {})
        for image in ([build_from] if isinstance(build_from, str) else list(build_from.values())):
            if not RE_DOCKER_IMAGE_BUILD.match(str(image)):
                problems.append(f"{name}: build_from {image!r} fails the Supervisor's image pattern: it builds from "
                                "ghcr.io/home-assistant/base:latest instead")
    arguments = dict(re.findall(r"^ARG\s+(\w+)(?:=(\S*))?", dockerfile, re.M))
    froms = re.findall(r"^FROM\s+(\S+)", dockerfile, re.M)
    if not froms:
        problems.append("Dockerfile: no FROM")
    for image in froms:
        if "BUILD_FROM" in image:
            problems.append(f"Dockerfile: FROM {image}: the Supervisor passes no BUILD_FROM without build.yaml, "
                            "and an older one its own Alpine base")
        for name in re.findall(r"\$\{?(\w+)", image):
            if not arguments.get(name):
                problems.append(f"Dockerfile: FROM {image}: ARG {name} has no default (the Supervisor passes none)")
    for name in ("BUILD_ARCH", "BUILD_VERSION"):
        if name not in arguments:
            problems.append(f"Dockerfile: ARG {name}: the Supervisor passes it; the image's labels use it")
    return problems


def addon_problems(addon):
    def load(name):
        with open(os.path.join(addon, name)) as f:
            return f.read()
    config = yaml.safe_load(load("config.yaml"))
    problems = config_problems(config)
    files = {name: load(name) for name in BUILD_FILES if os.path.exists(os.path.join(addon, name))}
    problems += build_problems(files, load("Dockerfile"))
    languages = sorted(name for name in os.listdir(os.path.join(addon, "translations")) if name.endswith(".yaml"))
    if "en.yaml" not in languages:
        problems.append("translations/en.yaml: missing")
    for name in languages:
        problems += translation_problems(config.get("schema", {}), yaml.safe_load(load(os.path.join("translations", name))),
                                         name[:-5])
    return problems, config, files


def mutations(config, translations, dockerfile):
    """Broken copies: (what, problems found in them). Each must find something."""
    def broken_config(change):
        copied = copy.deepcopy(config)
        change(copied)
        return config_problems(copied)

    def broken_translations(change):
        copied = copy.deepcopy(translations)
        change(copied)
        return translation_problems(config["schema"], copied, "en")

    old_build = "build_from:\n  amd64: debian:bookworm-slim\n  aarch64: debian:bookworm-slim\n"
    return [
        ("the former build.yaml (debian:bookworm-slim)",
         [p for p in build_problems({"build.yaml": old_build}, dockerfile) if "image pattern" in p]),
        ("any build.yaml, even a valid one", build_problems({"build.yaml": "build_from: docker.io/library/debian:bookworm-slim\n"},
                                                            dockerfile)),
        ("FROM ${BUILD_FROM}", build_problems({}, "ARG BUILD_FROM=debian:bookworm-slim\nARG BUILD_ARCH\nARG BUILD_VERSION\n"
                                                  "FROM ${BUILD_FROM}\n")),
        ("a FROM argument without a default", build_problems({}, "ARG BASE\nARG BUILD_ARCH\nARG BUILD_VERSION\nFROM ${BASE}\n")),
        ("a deprecated key (advanced)", broken_config(lambda c: c.update(advanced=True))),
        ("an unknown key", broken_config(lambda c: c.update(watchdog_enabled=True))),
        ("a deprecated arch (armv7)", broken_config(lambda c: c["arch"].append("armv7"))),
        ("a deprecated startup (before)", broken_config(lambda c: c.update(startup="before"))),
        ("an unknown schema type (string)", broken_config(lambda c: c["schema"].update(log_level="string"))),
        ("a nested type that is not one (integer)",
         broken_config(lambda c: c["schema"]["gateways"][0].update(name="integer"))),
        ("a list in a list", broken_config(lambda c: c["schema"].update(products=[["str"]]))),
        ("a default option outside its list", broken_config(lambda c: c["options"].update(log_level="loud"))),
        ("a default option missing", broken_config(lambda c: c["options"].pop("identity"))),
        ("a mis-typed nested default", broken_config(lambda c: c["options"]["identity"].update(follow="yes"))),
        ("a service right that is not one", broken_config(lambda c: c.update(services=["mqtt:required"]))),
        ("an option without a translation", broken_translations(lambda t: t["configuration"].pop("log_level"))),
        ("a nested field without a translation",
         broken_translations(lambda t: t["configuration"]["gateways"]["fields"].pop("status_topic"))),
        ("a nested field without a description",
         broken_translations(lambda t: t["configuration"]["identity"]["fields"]["reattach"].pop("description"))),
        ("a translation of no option", broken_translations(lambda t: t["configuration"].update(colour={"name": "Colour"}))),
    ]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--addon", default=os.path.join(ROOT, "ha-addon", "aabridge"))
    addon = parser.parse_args().addon
    failed = 0

    def check(name, ok, detail=""):
        nonlocal failed
        print(f"{'PASS' if ok else 'FAIL'}: {name}" + ("" if ok or not detail else f"\n    {detail}"))
        failed += not ok

    problems, config, files = addon_problems(addon)
    for group, words in (("the build (no build file, bases in the Dockerfile)", ("build.", "Dockerfile")),
                         ("config.yaml (keys, deprecations, types, the default options against the schema)", ("config.yaml",)),
                         ("the translations (every option and nested field: name and description)", ("translations/",))):
        found = [p for p in problems if p.startswith(words)]
        check(f"Supervisor {SUPERVISOR_COMMIT[:7]}'s rules: {group}", not found, "\n    ".join(found))
    with open(os.path.join(addon, "translations", "en.yaml")) as f:
        translations = yaml.safe_load(f)
    with open(os.path.join(addon, "Dockerfile")) as f:
        dockerfile = f.read()
    for what, found in mutations(config, translations, dockerfile):
        check(f"the rules catch {what}", bool(found), "no problem found in the broken copy")
    print(f"{'OK' if not failed else 'FAILED'}: the add-on's files against the Supervisor's rules ({failed} failed)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
