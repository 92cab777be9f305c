#!/usr/bin/env bash
# nginx in front of the release binary, with the configuration we ship
# (scripts/nginx/widgets-todos.conf), as docs/limits.md, "nginx in front"
# tells users to run it. Installs nginx (Debian's package) when missing,
# starts the server and nginx on free ports of 127.0.0.1, then
# scripts/proxy.py checks that nginx passes our responses unchanged and
# stops what the server's HTTP library cannot survive (HTTP/2.0 request
# lines, trickled heads, a 64 MiB header line) with the server's thread
# and descriptor counts at their idle level; and scripts/smoke.sh walks
# every route through nginx. Run by scripts/test.sh; takes 30 to 40 s.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
export PATH="$PATH:/usr/sbin" # where Debian puts nginx
need nginx nginx

conf=scripts/nginx/widgets-todos.conf
tmp=$(mktemp -d)
# nginx's workers run as "nobody" when it is started as root: let them
# reach their temporary directories.
chmod 755 "$tmp"
mkdir "$tmp/nginx"
pid=
nginx_pid=
cleanup() {
    [ -z "$nginx_pid" ] || kill "$nginx_pid" 2>/dev/null || true
    [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
    [ -z "$nginx_pid" ] || wait "$nginx_pid" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

token=proxy-test-token
start_server "$tmp" --log-level warn --auth-token "$token"
pid=$SERVER_PID
server_port=${SERVER_URL##*:}

# The shipped file, its two lines marked CHANGE pointed at this server and
# at a free port. Each must match exactly once, so the test cannot drift
# from the file users copy.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
for marker in 'server 127.0.0.1:8080;  # CHANGE' 'listen 80;  # CHANGE'; do
    [ "$(grep -cF "$marker" "$conf")" = 1 ] || { echo "FAIL: $conf has no single line '$marker'"; exit 1; }
done
header_timeout=$(sed -n 's/^ *client_header_timeout \([0-9]*\)s;.*/\1/p' "$conf")
[ -n "$header_timeout" ] || { echo "FAIL: no client_header_timeout in seconds in $conf"; exit 1; }

# A free port can be taken between asking and binding: try three.
for _ in 1 2 3; do
    port=$(free_port)
    sed -e "s/server 127.0.0.1:8080;  # CHANGE.*/server 127.0.0.1:$server_port;/" \
        -e "s/listen 80;  # CHANGE.*/listen 127.0.0.1:$port;/" "$conf" >"$tmp/nginx/widgets-todos.conf"
    # Only what nginx needs to run in a directory of its own, in the
    # foreground: the server block is the shipped one.
    cat >"$tmp/nginx/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 1024; }
http {
    access_log $tmp/nginx/access.log;
    client_body_temp_path $tmp/nginx/body;
    proxy_temp_path $tmp/nginx/proxy;
    fastcgi_temp_path $tmp/nginx/fastcgi;
    uwsgi_temp_path $tmp/nginx/uwsgi;
    scgi_temp_path $tmp/nginx/scgi;
    include $tmp/nginx/widgets-todos.conf;
}
EOF
    nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/error.log" >>"$tmp/nginx/output" 2>&1 &
    nginx_pid=$!
    for _ in $(seq 100); do
        curl -s --max-time 2 -o /dev/null "http://127.0.0.1:$port/healthz" && break
        kill -0 "$nginx_pid" 2>/dev/null || break
        sleep 0.05
    done
    kill -0 "$nginx_pid" 2>/dev/null && break
    nginx_pid=
done
if [ -z "$nginx_pid" ] || ! curl -s --max-time 2 -o /dev/null "http://127.0.0.1:$port/healthz"; then
    echo "FAIL: nginx did not start:"
    cat "$tmp/nginx/output" "$tmp/nginx/error.log"
    exit 1
fi
proxy_url="http://127.0.0.1:$port"
echo "nginx $(nginx -v 2>&1 | sed 's/.*nginx\///') on $proxy_url, in front of $SERVER_URL"

show_logs() {
    echo "nginx's error log:"
    tail -n 20 "$tmp/nginx/error.log"
    echo "the server's log:"
    tail -n 20 "$tmp/err"
}
if ! python3 scripts/proxy.py --proxy "$proxy_url" --server "$SERVER_URL" --server-pid "$pid" \
    --header-timeout "$header_timeout" --auth-token "$token" | tee "$tmp/checks"; then
    show_logs
    exit 1
fi
checks=$(sed -n 's/^proxy.py: \([0-9]*\) checks passed$/\1/p' "$tmp/checks")

if ! BASE_URL="$proxy_url" AUTH_TOKEN="$token" sh scripts/smoke.sh | tee "$tmp/smoke"; then
    show_logs
    exit 1
fi
smoke=$(sed -n 's/^smoke: \([0-9]*\) passed.*/\1/p' "$tmp/smoke")

# With the server stopped, nginx answers 502, as problem+json too.
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
[ "$status" -eq 0 ] || { echo "FAIL: the server exited with $status after SIGTERM"; cat "$tmp/err"; exit 1; }
answer=$(curl -s --max-time 5 -w ' %{http_code} %{content_type}' "$proxy_url/api/todos")
case $answer in
    *'"status":502'*' 502 application/problem+json') echo "ok - the server stopped: nginx answers 502 problem+json" ;;
    *) echo "FAIL: the server stopped: nginx answered: $answer"; exit 1 ;;
esac
echo "proxy: $((checks + smoke + 1)) passed, 0 failed"
