#!/usr/bin/env bash
# The README starts with exactly two commands (launch, test), and .ci/run runs exactly the
# README's test command. Fails with a message naming what differs.
set -euo pipefail
root=${1:?usage: readme_commands.sh REPO_ROOT}
readme="$root/README.md"
ci="$root/.ci/run"

# First fenced block, within the first 15 lines: the README *starts* with the commands.
first_fence=$(grep -n '^```' "$readme" | head -n1 | cut -d: -f1)
if [ -z "$first_fence" ] || [ "$first_fence" -gt 15 ]; then
  echo "FAIL: README.md does not start with a code block of commands (first fence at line ${first_fence:-none})"
  exit 1
fi
mapfile -t commands < <(awk 'f==0 && /^```/ {f=1; next} f==1 && /^```/ {exit} f==1' "$readme" |
                        sed 's/[[:space:]]*#.*$//' | sed '/^[[:space:]]*$/d')
if [ "${#commands[@]}" -ne 2 ]; then
  echo "FAIL: README's first code block has ${#commands[@]} commands, expected 2: ${commands[*]}"
  exit 1
fi
launch=${commands[0]}
test_cmd=${commands[1]}
case "$launch" in *scripts/launch*) ;; *) echo "FAIL: first command '$launch' is not the launch command"; exit 1;; esac
case "$test_cmd" in *scripts/test*) ;; *) echo "FAIL: second command '$test_cmd' is not the test command"; exit 1;; esac

mapfile -t ci_commands < <(grep -vE '^[[:space:]]*(#|$|set |cd )' "$ci")
if [ "${#ci_commands[@]}" -ne 1 ] || [ "${ci_commands[0]}" != "$test_cmd" ]; then
  echo "FAIL: .ci/run runs '${ci_commands[*]}', README's test command is '$test_cmd'"
  exit 1
fi
for script in "$root/${launch%% *}" "$root/${test_cmd%% *}" "$root/scripts/setup" "$ci"; do
  [ -x "$script" ] || { echo "FAIL: $script is not executable"; exit 1; }
done
echo "1 passed, 0 failed"
