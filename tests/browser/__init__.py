"""Browser tests of the play page."""

from pathlib import Path

# Outside the temporary directories so that a person can look at them after the run.
SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"
