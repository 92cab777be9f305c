#!/usr/bin/env bash
# Installs what the test suite needs beyond the Rust toolchain, only when it
# is missing: curl (smoke test), nginx (the reverse proxy test), wrk
# (benchmark), openssl (a certificate for the HTTPS test), chromium (CORS in
# a browser), python3-venv (for the PyPI tools of scripts/fuzz.sh), valgrind
# (scripts/trace.sh: the functions one request runs), Node and npm (the
# clients of scripts/clients.sh), and rustfmt and clippy
# (checks).
set -euo pipefail

missing=()
command -v curl >/dev/null 2>&1 || missing+=(curl)
# Debian puts nginx in /usr/sbin, which is not on every user's PATH.
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
python3 -m venv --help >/dev/null 2>&1 || missing+=(python3-venv)
command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

if command -v rustup >/dev/null 2>&1; then
    installed=$(rustup component list --installed)
    for component in rustfmt clippy; do
        grep -q "^$component" <<<"$installed" || rustup component add "$component"
    done
fi
