#!/usr/bin/env bash
# Counts the lines of code of examples, as the README's table of Rust vs Python example
# sizes counts them: non-blank lines that are not comments. Rust: lines starting with `//`
# (`//!`, `///` included) are comments. Python: lines starting with `#`, and docstrings
# (from a line starting with `"""` to the line closing it) are comments.
#
#     scripts/count_lines.sh FILE...    # prints "<count> <file>" for each
set -euo pipefail
for f in "$@"; do
    case "$f" in
    *.rs)
        n=$(awk '/^[[:space:]]*$/ {next} /^[[:space:]]*\/\// {next} {c++} END {print c+0}' "$f")
        ;;
    *.py)
        n=$(awk '
            /^[[:space:]]*$/ {next}
            doc { if (index($0, "\"\"\"")) doc = 0; next }
            /^[[:space:]]*"""/ {
                rest = $0; sub(/^[[:space:]]*"""/, "", rest)
                if (!index(rest, "\"\"\"")) doc = 1
                next
            }
            /^[[:space:]]*#/ {next}
            {c++}
            END {print c+0}' "$f")
        ;;
    *)
        echo "unknown file type: $f" >&2
        exit 2
        ;;
    esac
    echo "$n $f"
done
