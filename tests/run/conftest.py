import sys
from pathlib import Path

# `support` (the test target server) lives in tests/support.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
