# Sourced by the bench scripts that drive nginx (Debian package): `nginx_target DIR WORKERS`
# writes DIR/nginx.conf (WORKERS worker processes, a static file on a free loopback port,
# no access log, keep-alive without limit) and a web root nginx's unprivileged workers can
# read, and sets `port` and `server` (the command that starts it in the foreground, for
# `truebench loadstep --server`).
nginx_target() { # DIR WORKERS
  command -v nginx >/dev/null 2>&1 || { echo "nginx is needed (apt-get install nginx)" >&2; exit 2; }
  chmod 755 "$1"
  mkdir -p "$1/www"
  echo "hello from nginx" >"$1/www/index.html"
  chmod 755 "$1/www"; chmod 644 "$1/www/index.html"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  cat >"$1/nginx.conf" <<CONF
daemon off;
worker_processes $2;
pid $1/nginx.pid;
error_log $1/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  server { listen 127.0.0.1:$port; root $1/www; keepalive_requests 100000000; }
}
CONF
  server="$(command -v nginx) -c $1/nginx.conf -e $1/error.log -p $1"
}
