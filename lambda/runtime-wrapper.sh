#!/bin/sh
# Lambda starts the Node.js runtime through this script (AWS_LAMBDA_EXEC_WRAPPER, set by
# lib/constructs/gateway-function.ts): "$@" is the runtime's own command line, node and its flags.
# It runs that command as it is, less --expose-gc. With that flag V8 refuses the code cache Node
# ships for its built-in modules, so every cold start compiled them again: about 20 ms of Init at a
# full vCPU (docs/performance.md, "The runtime's own flags and the exec wrapper"). Nothing in the
# function or the runtime client calls gc().
# https://docs.aws.amazon.com/lambda/latest/dg/runtimes-modify.html#runtime-wrapper
for arg do
  shift
  [ "$arg" = --expose-gc ] || set -- "$@" "$arg"
done
exec "$@"
