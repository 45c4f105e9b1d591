"""The relay's unit tests (custom_components/aabridge_relay), run by scripts/ha-test with the
Home Assistant venv's pytest: the package is imported as `aabridge_relay`. Kept out of the
integration's folder, which HACS and users copy into Home Assistant."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "custom_components"))
