# Shared by the scripts that start throwaway servers. Source it; do not run it.

# Prints a loopback TCP port nothing listens on (tried at random in 20000-39999).
free_port() {
  local candidate
  for _ in $(seq 1 50); do
    candidate=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  echo "no free port on 127.0.0.1" >&2
  return 1
}
