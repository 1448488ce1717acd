#!/bin/sh
# The shell completions the build wrote from the program: each one names every command that
# `PROGRAM --help` lists, the bash one loads in bash, and zsh and fish, where installed, read
# theirs without a syntax error.
# Usage: completions-name-every-command.sh PROGRAM BASH-SCRIPT ZSH-SCRIPT FISH-SCRIPT
set -eu
program=$1 bash_script=$2 zsh_script=$3 fish_script=$4
status=0

commands=$("$program" --help | sed -n '/^SUBCOMMANDS:/,/^$/s/^  \([a-z][a-z-]*\).*/\1/p')
[ -n "$commands" ] || { echo "$program --help lists no subcommands"; exit 1; }
for script in "$bash_script" "$zsh_script" "$fish_script"; do
  for command in $commands; do
    grep -qw -- "$command" "$script" || { echo "$script does not complete the command $command"; status=1; }
  done
done

bash -c 'source "$0" && complete -p fetched-results >/dev/null' "$bash_script" || {
  echo "bash does not load $bash_script as the completion of fetched-results"
  status=1
}
if command -v zsh >/dev/null; then zsh -n "$zsh_script" || status=1; fi
if command -v fish >/dev/null; then fish --no-execute "$fish_script" || status=1; fi
exit $status
