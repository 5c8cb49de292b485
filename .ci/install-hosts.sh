#!/usr/bin/env bash
# Install the two real host programs used by the end-to-end tests into a cache
# directory (default ~/.cache/convmem-e2e, override with CONVMEM_E2E_CACHE).
# Idempotent: returns quickly when both hosts are already present.
#   Claude Code: npm @anthropic-ai/claude-code@2.1.328 -> $CACHE/claude-code
#   DSH:         pip deepseek-harness-sdk==0.2.1rc2 in venv $CACHE/dsh-venv
# Failures are reported but do not abort the other host; the script exits
# non-zero if a host that could be installed is still missing, and, with
# CONVMEM_CI=1, if npm itself is missing.
set -u

CLAUDE_CODE_VERSION="${CLAUDE_CODE_VERSION:-2.1.328}"
DSH_SDK_VERSION="${DSH_SDK_VERSION:-0.2.1rc2}"
CACHE="${CONVMEM_E2E_CACHE:-$HOME/.cache/convmem-e2e}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$CACHE"
status=0

claude_bin="$CACHE/claude-code/node_modules/.bin/claude"
claude_pkg="$CACHE/claude-code/node_modules/@anthropic-ai/claude-code/package.json"
if [ -x "$claude_bin" ] && grep -q "\"version\": \"$CLAUDE_CODE_VERSION\"" "$claude_pkg" 2>/dev/null; then
    echo "install-hosts: claude-code $CLAUDE_CODE_VERSION already in $CACHE/claude-code"
elif ! command -v npm >/dev/null 2>&1; then
    if [ "${CONVMEM_CI:-}" = "1" ]; then
        # in CI a missing host must fail the run, not turn its tests into skips
        echo "install-hosts: npm not found; Claude Code cannot be installed (CONVMEM_CI=1)" >&2
        status=1
    else
        echo "install-hosts: npm not found; skipping Claude Code" >&2
    fi
else
    echo "install-hosts: installing @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION"
    mkdir -p "$CACHE/claude-code"
    if ! npm install --no-audit --no-fund --loglevel=error \
        --prefix "$CACHE/claude-code" "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION"; then
        echo "install-hosts: Claude Code install failed" >&2
        status=1
    fi
fi

dsh_venv="$CACHE/dsh-venv"
if [ -x "$dsh_venv/bin/dsh" ] && "$dsh_venv/bin/python" -c "import deepseek_harness" 2>/dev/null \
    && "$dsh_venv/bin/python" -m pip show deepseek-harness-sdk 2>/dev/null | grep -qx "Version: $DSH_SDK_VERSION"; then
    echo "install-hosts: deepseek-harness-sdk $DSH_SDK_VERSION already in $dsh_venv"
else
    echo "install-hosts: installing deepseek-harness-sdk==$DSH_SDK_VERSION into $dsh_venv"
    if [ ! -x "$dsh_venv/bin/python" ]; then
        "$PYTHON" -m venv "$dsh_venv" || status=1
    fi
    if [ -x "$dsh_venv/bin/python" ]; then
        "$dsh_venv/bin/python" -m pip install --quiet --disable-pip-version-check \
            "deepseek-harness-sdk==$DSH_SDK_VERSION" zstandard || {
            echo "install-hosts: DSH install failed" >&2
            status=1
        }
    fi
fi

[ -x "$claude_bin" ] && echo "install-hosts: claude -> $claude_bin ($("$claude_bin" --version 2>/dev/null))"
if [ -x "$dsh_venv/bin/dsh" ]; then
    # dsh refuses to start without an explicit DSH_HOME, even for --version.
    tmp_home="$(mktemp -d)"
    echo "install-hosts: dsh -> $dsh_venv/bin/dsh ($(DSH_HOME="$tmp_home" DSH_TELEMETRY_MODE=DISABLED "$dsh_venv/bin/dsh" --version 2>/dev/null))"
    rm -rf "$tmp_home"
fi
exit $status
