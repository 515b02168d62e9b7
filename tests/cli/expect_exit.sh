#!/usr/bin/env bash
# expect_exit.sh <status> <text> <command> [args...]: runs the command and fails unless it exits
# with <status> and a line of its output (stdout and stderr together) contains <text>.
# Environment variables are given through `env VAR=value <command>`.
set -u
want=$1 text=$2
shift 2
out=$("$@" 2>&1)
got=$?
fail=0
if [ "$got" != "$want" ]; then
  echo "expected exit status $want, got $got: $*"
  fail=1
fi
if ! grep -qF -- "$text" <<<"$out"; then
  echo "expected a line containing: $text"
  fail=1
fi
if [ $fail -ne 0 ]; then
  echo "--- output ---"
  echo "$out"
fi
exit $fail
