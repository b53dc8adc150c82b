#!/bin/sh
# Miniflare's runtime command for a local runtime with V8 flags (startRuntime's `v8Flags`, scripts/stack.mjs):
# adds STRAD_V8_FLAGS to the config Miniflare writes on stdin (scripts/workerd-v8-flags.mjs), then becomes
# $STRAD_WORKERD with Miniflare's arguments, so the process Miniflare spawned, watches and stops is workerd's own.
# V8 prints what the flags ask for (--trace-gc's lines) through C's stdout, which holds 4 KiB at a time when it is a
# pipe and is lost if workerd is stopped: with STRAD_LINE_BUFFERED=1, stdbuf (coreutils) makes it write each line as
# it is printed.
set -e
config=$(mktemp)
# The config holds the Workers' code and bindings: it is never left behind, whatever fails.
trap 'rm -f "$config"' EXIT
"${STRAD_NODE:-node}" "$(dirname "$0")/workerd-v8-flags.mjs" > "$config"
exec 0< "$config"
rm -f "$config"
trap - EXIT
if [ "$STRAD_LINE_BUFFERED" = 1 ]; then
  exec stdbuf -oL "$STRAD_WORKERD" "$@"
fi
exec "$STRAD_WORKERD" "$@"
