# Shared by the scripts that start throwaway servers. Source it; do not run it.

# Prints a loopback TCP port nothing listens on, tried at random from 20000 up to the
# kernel's ephemeral range (32768 by default): a port in that range may be the local end
# of some client's connection, which a probe cannot see and a listener cannot bind.
free_port() {
  local candidate top
  top=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  [ "$top" -ge 25000 ] 2>/dev/null || top=32768
  for _ in $(seq 1 50); do
    candidate=$((20000 + RANDOM % (top - 20000)))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  echo "no free port on 127.0.0.1" >&2
  return 1
}
