"""scripts/macos/aabridge-sources on Linux: the recorded outputs of system_profiler and blueutil
(fixtures/README.md cites each) stand in for the Mac-only commands; the reports go through the
real mosquitto_pub and the real curl to a real mosquitto on loopback, watched by mosquitto_sub.

    python3 harness/macos/test_aabridge_sources.py
"""

import os
import plistlib
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import common  # noqa: E402
from common import free_port, mosquitto_passwd  # noqa: E402

SCRIPT = Path(common.ROOT) / "scripts" / "macos" / "aabridge-sources"
PLIST = Path(common.ROOT) / "scripts" / "macos" / "local.aabridge.sources.plist"
FIXTURES = HERE / "fixtures"
MAC = "F4:D4:88:6A:76:7A"          # the recording's controller_address
AIRPODS = "18:3F:70:72:C1:68"      # the recording's AirPods
TOPIC = "aabridge/accessory/183F7072C168/set"


class Broker(common.Broker):
    """mosquitto (open, or with the user alice-mac) and a mosquitto_sub of aabridge/# writing
    `topic qos retained payload` lines to `work`/messages."""

    def __init__(self, work, password=None):
        super().__init__(work, configure=lambda port: "\n".join(
            [f"listener {port} 127.0.0.1"] +
            (["allow_anonymous false", f"password_file {Path(work) / 'passwd'}"] if password else ["allow_anonymous true"])) + "\n")
        if password:
            mosquitto_passwd(Path(work) / "passwd", {"alice-mac": password})
        self.start()
        self.out = open(Path(work) / "messages", "w+")
        args = ["mosquitto_sub", "-p", str(self.port), "-h", "127.0.0.1", "-q", "1", "-t", "aabridge/#", "-F", "%t %q %r %p"]
        if password:
            args += ["-u", "alice-mac", "-P", password]
        self.sub = subprocess.Popen(args, stdout=self.out, stderr=subprocess.STDOUT)
        time.sleep(0.5)

    def messages(self, wait=0.5):
        time.sleep(wait)
        self.out.flush()
        self.out.seek(0)
        return [line.rstrip("\n").split(" ", 3) for line in self.out.read().splitlines() if line]

    def stop(self):
        common.stop_process(self.sub, 10)
        super().stop()
        self.out.close()


class AabridgeSourcesTests(unittest.TestCase):
    password = None

    def setUp(self):
        self.work = Path(tempfile.mkdtemp(prefix="aabridge-sources-"))
        # mosquitto, started as root, drops to its own user before it reads the password file.
        os.chmod(self.work, 0o755)
        self.broker = Broker(self.work, self.password)
        # A PATH with the fake Mac commands and only what the script may use of this machine.
        self.fake = self.work / "fake"
        self.tools = self.work / "tools"
        self.fake.mkdir()
        self.tools.mkdir()
        for tool in ("perl", "sh", "cat", "curl", "mosquitto_pub"):
            os.symlink(shutil.which(tool), self.tools / tool)
        self.calls = self.work / "calls"
        for command in ("system_profiler", "blueutil"):
            self.fake_command(command, f"{command}-connected.json")
        self.state = self.work / "state" / "sources.state"
        self.write_config()

    def tearDown(self):
        self.broker.stop()
        shutil.rmtree(self.work, ignore_errors=True)

    def fake_command(self, command, fixture, status=0):
        """The Mac's command: records its arguments, prints the recording."""
        path = self.fake / command
        path.write_text(f"#!/bin/sh\necho \"{command} $*\" >> '{self.calls}'\ncat '{FIXTURES / fixture}'\nexit {status}\n")
        path.chmod(0o755)

    def write_config(self, **extra):
        lines = [f"broker mqtt://127.0.0.1:{self.broker.port}", "reader system_profiler", "publisher mosquitto_pub",
                 f"accessory {AIRPODS}"]
        if self.password:
            (self.work / "password").write_text(self.password + "\n")
            lines += ["user alice-mac", f"password_file {self.work / 'password'}"]
        for key, value in extra.items():
            lines = [line for line in lines if not line.startswith(key + " ")] + ([f"{key} {value}"] if value else [])
        self.config = self.work / "sources.conf"
        self.config.write_text("\n".join(lines) + "\n")

    def run_script(self, *args, path=None, timeout=30):
        env = {"PATH": path or f"{self.fake}:{self.tools}", "HOME": str(self.work)}
        return subprocess.run([str(SCRIPT), "--config", str(self.config), "--state", str(self.state), *args],
                              env=env, capture_output=True, text=True, timeout=timeout)

    def sets(self):
        return [m for m in self.broker.messages() if m[0].endswith("/set")]

    # ---- connect and disconnect -----------------------------------------------------------------

    def test_system_profiler_connect_then_disconnect(self):
        first = self.run_script("--once")
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertIn(f"connected {AIRPODS} to {MAC}", first.stdout)
        self.assertEqual(self.sets(), [[TOPIC, "1", "0", f'{{"source_connected":"{MAC}"}}']])
        self.assertEqual(self.calls.read_text(), "system_profiler SPBluetoothDataType -json\n")
        # The same again: nothing to send.
        again = self.run_script("--once")
        self.assertIn("nothing to report", again.stdout)
        self.assertEqual(len(self.sets()), 1)
        # Taken out: a disconnection.
        self.fake_command("system_profiler", "system_profiler-disconnected.json")
        second = self.run_script("--once")
        self.assertEqual(second.returncode, 0, second.stderr)
        self.assertIn(f"disconnected {AIRPODS} from {MAC}", second.stdout)
        self.assertEqual(self.sets()[1:], [[TOPIC, "1", "0", f'{{"source_disconnected":"{MAC}"}}']])

    def test_not_connected_at_the_first_look_sends_nothing(self):
        # A disconnection nobody reported would count as a report and keep the bridge from
        # restoring the accessory's home sources.
        self.fake_command("system_profiler", "system_profiler-disconnected.json")
        result = self.run_script("--once")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.sets(), [])

    def test_matched_by_name_reported_for_the_id_given(self):
        # The accessory's id is a rotating address; the Mac knows it by its name.
        self.write_config(accessory="A1:B2:C3:D4:E5:F6 wladn airpods  PRO")
        result = self.run_script("--once")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.sets(), [["aabridge/accessory/A1B2C3D4E5F6/set", "1", "0", f'{{"source_connected":"{MAC}"}}']])

    def test_blueutil_with_the_configured_source(self):
        self.write_config(reader="blueutil", source="66-55-44-33-22-11")
        result = self.run_script("--once")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.sets(), [[TOPIC, "1", "0", '{"source_connected":"66:55:44:33:22:11"}']])
        self.assertEqual(self.calls.read_text(), "blueutil --connected --format json\n")
        self.fake_command("blueutil", "blueutil-disconnected.json")
        result = self.run_script("--once")
        self.assertEqual(self.sets()[1:], [[TOPIC, "1", "0", '{"source_disconnected":"66:55:44:33:22:11"}']])

    def test_blueutil_chosen_when_on_path_and_the_address_from_system_profiler(self):
        self.write_config(reader="")
        result = self.run_script("--once")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.sets(), [[TOPIC, "1", "0", f'{{"source_connected":"{MAC}"}}']])
        self.assertEqual(self.calls.read_text().splitlines(),
                         ["blueutil --connected --format json", "system_profiler SPBluetoothDataType -json"])

    def test_curl_when_mosquitto_pub_is_absent(self):
        self.write_config(publisher="")
        os.unlink(self.tools / "mosquitto_pub")
        result = self.run_script("--once")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("connected", result.stdout)
        # curl publishes at QoS 0, not retained.
        self.assertEqual(self.sets(), [[TOPIC, "0", "0", f'{{"source_connected":"{MAC}"}}']])

    # ---- bad output, failures -------------------------------------------------------------------

    def assert_refused(self, result, words):
        self.assertEqual(result.returncode, 1)
        self.assertIn(words, result.stderr)
        self.assertIn("nothing reported", result.stderr)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertEqual(self.sets(), [])
        self.assertFalse(self.state.exists(), "the state is not written")

    def test_malformed_system_profiler(self):
        self.fake_command("system_profiler", "system_profiler-truncated.json")
        self.assert_refused(self.run_script("--once"), "'system_profiler SPBluetoothDataType -json' printed no JSON")

    def test_other_layout_is_not_taken_for_nothing_connected(self):
        self.fake_command("system_profiler", "system_profiler-other-layout.json")
        self.assert_refused(self.run_script("--once"), "neither device_connected nor device_not_connected")

    def test_failing_system_profiler(self):
        self.fake_command("system_profiler", "system_profiler-connected.json", status=3)
        self.assert_refused(self.run_script("--once"), "failed (exit status 3)")

    def test_malformed_blueutil(self):
        self.write_config(reader="blueutil", source=MAC)
        self.fake_command("blueutil", "blueutil-malformed.json")
        self.assert_refused(self.run_script("--once"), "device 18:3F:70:72:C1:68 has no connected true or false")

    def test_a_report_that_fails_is_sent_at_the_next_look(self):
        self.write_config(broker=f"mqtt://127.0.0.1:{free_port()}")
        failed = self.run_script("--once")
        self.assertEqual(failed.returncode, 1)
        self.assertIn("mosquitto_pub could not send", failed.stderr)
        self.write_config()
        result = self.run_script("--once")
        self.assertIn(f"connected {AIRPODS} to {MAC}", result.stdout)
        self.assertEqual(len(self.sets()), 1)

    def test_configuration_errors_name_the_line(self):
        self.config.write_text(self.config.read_text() + "acessory 11:22:33:44:55:66\n")
        result = self.run_script("--once")
        self.assertEqual(result.returncode, 2)
        line = len(self.config.read_text().splitlines())
        self.assertIn(f"line {line}: unknown key 'acessory'", result.stderr)
        self.write_config(accessory="18:3F:70:72:C1")
        result = self.run_script("--once")
        self.assertEqual(result.returncode, 2)
        self.assertIn("accessory '18:3F:70:72:C1' is not a Bluetooth address", result.stderr)
        self.assertEqual(self.sets(), [])

    # ---- the loop -------------------------------------------------------------------------------

    def test_loop_reports_and_takes_back_on_sigterm(self):
        env = {"PATH": f"{self.fake}:{self.tools}", "HOME": str(self.work)}
        process = subprocess.Popen([str(SCRIPT), "--config", str(self.config), "--state", str(self.state), "--interval", "1"],
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and not self.sets():
                pass
            self.fake_command("system_profiler", "system_profiler-disconnected.json")
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and len(self.sets()) < 2:
                pass
            self.fake_command("system_profiler", "system_profiler-connected.json")
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and len(self.sets()) < 3:
                pass
        finally:
            process.terminate()
            out, err = process.communicate(timeout=30)
        self.assertEqual(process.returncode, 0, err)
        self.assertEqual([m[3] for m in self.sets()],
                         [f'{{"source_connected":"{MAC}"}}', f'{{"source_disconnected":"{MAC}"}}',
                          f'{{"source_connected":"{MAC}"}}', f'{{"source_disconnected":"{MAC}"}}'])
        self.assertIn("(stopping)", out)

    # ---- the LaunchAgent ------------------------------------------------------------------------

    def test_launch_agent_plist(self):
        with open(PLIST, "rb") as f:
            agent = plistlib.load(f)
        self.assertEqual(agent["Label"], "local.aabridge.sources")
        self.assertEqual(set(agent), {"Label", "ProgramArguments", "EnvironmentVariables", "RunAtLoad", "KeepAlive",
                                      "ThrottleInterval", "ExitTimeOut", "ProcessType", "StandardOutPath",
                                      "StandardErrorPath"})
        self.assertTrue(agent["RunAtLoad"])
        self.assertEqual(agent["KeepAlive"], {"SuccessfulExit": False})
        path = agent["EnvironmentVariables"]["PATH"].split(":")
        for directory in ("/opt/homebrew/bin", "/usr/sbin", "/usr/bin"):
            self.assertIn(directory, path)
        program = agent["ProgramArguments"]
        self.assertTrue(program[0].endswith("/aabridge-sources"))
        # Its arguments are the script's: run them here with the home directory replaced.
        home = str(self.work)
        shutil.copy(self.config, self.work / "conf")
        (self.work / ".config" / "aabridge").mkdir(parents=True)
        shutil.copy(self.config, self.work / ".config" / "aabridge" / "sources.conf")
        arguments = [a.replace("/Users/YOU", home) for a in program[1:]]
        env = {"PATH": f"{self.fake}:{self.tools}", "HOME": home}
        result = subprocess.run([str(SCRIPT), *arguments, "--state", str(self.state), "--once"], env=env,
                                capture_output=True, text=True, timeout=30)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(len(self.sets()), 1)


class AabridgeSourcesWithPasswordTests(AabridgeSourcesTests):
    """The same behind a broker that wants a user and password (mosquitto_pub -u/-P, curl's user)."""
    password = "s3cret-\"quoted\""


if __name__ == "__main__":
    unittest.main(verbosity=2)
