# Shared by scripts/*.sh: installs what fnabi's tests and examples need,
# only when it is missing. Debian packages come from apt-get (as root, or
# through sudo); everything else from crates.io through cargo.

apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "fnabi: installing Debian packages: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

install_test_deps() {
  apt_install build-essential
}
