#!/bin/sh
# Lambda starts the Node.js runtime through this script (AWS_LAMBDA_EXEC_WRAPPER, set by
# lib/constructs/gateway-function.ts): "$@" is the runtime's own command line, node, its flags
# and, last, AWS's runtime client (/var/runtime/index.mjs). It runs that command with two changes
# (docs/performance.md, "The runtime's own flags and the exec wrapper"):
# - less --expose-gc: with that flag V8 refuses the code cache Node ships for its built-in
#   modules, so every cold start compiled them again (about 20 ms of Init at a full vCPU);
#   nothing in the function or either runtime client calls gc();
# - the gateway's own runtime client (runtime-client.mjs, beside this script) in place of AWS's:
#   a third less CPU per warm request. AWS's stays when GATEWAY_RUNTIME_CLIENT=aws, when Lambda
#   runs several invocations per environment (AWS_LAMBDA_MAX_CONCURRENCY: ours serves one at a
#   time), when the file is missing, or when the last argument is not a runtime's index.mjs.
# https://docs.aws.amazon.com/lambda/latest/dg/runtimes-modify.html#runtime-wrapper
# Beside this script; ${0%/*} is its directory without starting another process.
own="${0%/*}/runtime-client.mjs"
swap=yes
if [ "${GATEWAY_RUNTIME_CLIENT:-gateway}" = aws ] || [ -n "${AWS_LAMBDA_MAX_CONCURRENCY:-}" ] || [ ! -f "$own" ]; then swap=no; fi
count=$#
i=0
for arg do
  shift
  i=$((i + 1))
  if [ "$arg" = --expose-gc ]; then continue; fi
  if [ "$i" -eq "$count" ] && [ "$swap" = yes ]; then
    case "$arg" in */index.mjs) arg="$own" ;; esac
  fi
  set -- "$@" "$arg"
done
exec "$@"
