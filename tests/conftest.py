"""Session-wide test set-up."""

import os
import tempfile

# The loader remembers valid JSONPaths/schemas in the user's cache directory; tests (and the
# commands they start) keep theirs in a throwaway one.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="litmus-test-cache-")
