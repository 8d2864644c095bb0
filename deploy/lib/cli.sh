# The command-line convention of Tessera's scripts, the same as its programs' (docs/conventions.md, "Command-line
# conventions"): --help prints the script's header comment and exits 0; a usage error (unknown option,
# missing or bad value) prints one line and exits 2; a runtime error prints one line and exits 1.
# Sourced by the scripts in deploy/ and by ./tessera.

# usage_error MESSAGE: "SCRIPT: error: MESSAGE (see --help)" on stderr, exit status 2.
usage_error() {
  printf '%s: error: %s (see --help)\n' "${0##*/}" "$*" >&2
  exit 2
}

# print_help FILE: the comment block after the #! line, without the leading "# ".
print_help() {
  awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$1"
}
