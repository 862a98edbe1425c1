#!/bin/bash
# gen-other.sh makes the other-*.pcap captures: real servers and clients of
# protocols that are not Kafka (HTTP, TLS, DNS over TCP, PostgreSQL, Redis,
# SSH), each on loopback, for kdissect's "no false positives" tests.
#
# Run it as root from the repository root (tcpdump needs root):
#
#	sudo bash pcaps/gen-other.sh [-out pcaps] [-only other-http.pcap,other-ssh.pcap]
#
# It needs Debian's tcpdump, python3, curl, openssl, dnsmasq-base,
# bind9-dnsutils (dig), postgresql (initdb, postgres, psql), redis-server
# (redis-server, redis-cli) and openssh-server + openssh-client:
#
#	apt-get install tcpdump python3 curl openssl dnsmasq-base bind9-dnsutils \
#	  postgresql redis-server openssh-server openssh-client
#
# Each scenario starts its server, waits until the port accepts connections,
# starts tcpdump exactly as pcaps/gen does (--immediate-mode, -B 128 MiB,
# waits for "listening on"), runs the clients, stops tcpdump with SIGINT,
# fails if tcpdump dropped packets, and stops the server. Every step has a
# timeout. Servers run from a temporary folder with throw-away keys and
# certificates, and are stopped on exit whatever happens.
set -euo pipefail

out=pcaps
only=
while [ $# -gt 0 ]; do
	case $1 in
	-out) out=$2; shift 2 ;;
	-only) only=$2; shift 2 ;;
	*) echo "usage: $0 [-out DIR] [-only a.pcap,b.pcap]" >&2; exit 2 ;;
	esac
done
if [ "$(id -u)" != 0 ]; then
	echo "gen-other: capturing on the loopback interface needs root: sudo bash pcaps/gen-other.sh" >&2
	exit 1
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

tmp=$(mktemp -d /tmp/kdissect-gen-other.XXXXXX)
chmod 755 "$tmp" # the PostgreSQL server runs as nobody and must get in
server_pid=
tcpdump_pid=

# stop_pid PID: SIGTERM (or the signal given second), then SIGKILL after 10 s.
stop_pid() {
	local pid=$1 sig=${2:-TERM}
	kill -0 "$pid" 2>/dev/null || return 0
	kill -s "$sig" "$pid" 2>/dev/null || true
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
		sleep 0.1
	done
	kill -s KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

cleanup() {
	[ -n "$tcpdump_pid" ] && stop_pid "$tcpdump_pid" INT
	[ -n "$server_pid" ] && stop_pid "$server_pid"
	rm -rf "$tmp"
}
trap cleanup EXIT

# wait_port PORT: wait up to 15 s until something listens on 127.0.0.1:PORT.
wait_port() {
	for _ in $(seq 150); do
		if ss -Hltn "sport = :$1" | grep -q .; then
			return 0
		fi
		sleep 0.1
	done
	echo "gen-other: nothing listens on port $1 after 15 s" >&2
	return 1
}

# start_capture FILE PORT: tcpdump writes TCP traffic on PORT to FILE.
start_capture() {
	rm -f "$1"
	tcpdump --immediate-mode -i lo -U -s 0 -B 131072 -Z root -w "$1" "tcp port $2" 2>"$tmp/tcpdump.log" &
	tcpdump_pid=$!
	for _ in $(seq 150); do
		if grep -q "listening on" "$tmp/tcpdump.log"; then
			sleep 0.3 # the same margin as pcaps/gen
			return 0
		fi
		kill -0 "$tcpdump_pid" 2>/dev/null || break
		sleep 0.1
	done
	echo "gen-other: tcpdump did not start listening: $(cat "$tmp/tcpdump.log")" >&2
	return 1
}

# stop_capture: let the last packets arrive, stop tcpdump, check for drops.
stop_capture() {
	sleep 0.3
	stop_pid "$tcpdump_pid" INT
	tcpdump_pid=
	if grep -E '[1-9][0-9]* packets? dropped' "$tmp/tcpdump.log" >&2; then
		echo "gen-other: tcpdump lost packets" >&2
		return 1
	fi
}

# stop_server: stop the scenario's server (SIGTERM; PostgreSQL: fast shutdown).
stop_server() {
	stop_pid "$server_pid" "${1:-TERM}"
	server_pid=
}

# other-http.pcap: python3's http.server on port 80 and four curl requests:
# GET /, GET /hello.txt, HEAD /hello.txt and GET of a missing page (404).
gen_http() {
	mkdir -p "$tmp/www"
	printf '<!doctype html>\n<title>kdissect</title>\n<p>not kafka</p>\n' >"$tmp/www/index.html"
	printf 'hello from a plain HTTP server\n' >"$tmp/www/hello.txt"
	touch -d 2026-01-02T03:04:05Z "$tmp/www/index.html" "$tmp/www/hello.txt"
	python3 -m http.server 80 --bind 127.0.0.1 --directory "$tmp/www" >"$tmp/http.log" 2>&1 &
	server_pid=$!
	wait_port 80
	start_capture "$1" 80
	timeout 10 curl -sS -o /dev/null http://127.0.0.1/
	timeout 10 curl -sS -o /dev/null http://127.0.0.1/hello.txt
	timeout 10 curl -sS -o /dev/null -I http://127.0.0.1/hello.txt
	timeout 10 curl -sS -o /dev/null http://127.0.0.1/missing.html
	stop_capture
	stop_server
}

# other-tls.pcap: openssl s_server (self-signed P-256 certificate, -www) on
# port 443 and two HTTPS requests by curl -k (TLS 1.3, then TLS 1.2).
gen_tls() {
	timeout 20 openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
		-subj /CN=localhost -keyout "$tmp/tls.key" -out "$tmp/tls.crt" 2>/dev/null
	openssl s_server -accept 127.0.0.1:443 -cert "$tmp/tls.crt" -key "$tmp/tls.key" -www -naccept 2 \
		</dev/null >"$tmp/tls.log" 2>&1 &
	server_pid=$!
	wait_port 443
	start_capture "$1" 443
	timeout 10 curl -sS -k -o /dev/null --tlsv1.3 https://127.0.0.1/
	timeout 10 curl -sS -k -o /dev/null --tlsv1.2 --tls-max 1.2 https://127.0.0.1/
	stop_capture
	stop_server
}

# other-dns-tcp.pcap: dnsmasq on port 5300 answering for kdissect.test from
# its own records (no upstream), and three dig +tcp queries: A, AAAA, TXT.
gen_dns() {
	dnsmasq --keep-in-foreground --conf-file=/dev/null --port=5300 --listen-address=127.0.0.1 \
		--bind-interfaces --no-resolv --no-hosts --pid-file= --user=nobody \
		--host-record=kdissect.test,127.0.0.42,::42 \
		--txt-record=kdissect.test,"this is DNS, not Kafka" >"$tmp/dns.log" 2>&1 &
	server_pid=$!
	wait_port 5300
	start_capture "$1" 5300
	timeout 10 dig +tcp +tries=1 +time=5 @127.0.0.1 -p 5300 kdissect.test A >/dev/null
	timeout 10 dig +tcp +tries=1 +time=5 @127.0.0.1 -p 5300 kdissect.test AAAA >/dev/null
	timeout 10 dig +tcp +tries=1 +time=5 @127.0.0.1 -p 5300 kdissect.test TXT >/dev/null
	stop_capture
	stop_server
}

# other-postgres.pcap: a throw-away PostgreSQL cluster (initdb, run as
# nobody) on port 5432 with SCRAM-SHA-256 password authentication; psql
# connects without SSL and runs a few statements.
gen_postgres() {
	local bindir
	bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
	mkdir -p "$tmp/pg"
	echo kdissect-pg-pw >"$tmp/pg/pw"
	chown -R nobody:nogroup "$tmp/pg"
	timeout 60 runuser -u nobody -- "$bindir/initdb" -D "$tmp/pg/data" -U kdissect --pwfile="$tmp/pg/pw" \
		--auth-local=trust --auth-host=scram-sha-256 --no-sync >"$tmp/pg/initdb.log" 2>&1
	runuser -u nobody -- "$bindir/postgres" -D "$tmp/pg/data" -p 5432 -k "$tmp/pg" \
		-c listen_addresses=127.0.0.1 -c fsync=off -c logging_collector=off >"$tmp/pg/server.log" 2>&1 &
	server_pid=$!
	wait_port 5432
	start_capture "$1" 5432
	PGPASSWORD=kdissect-pg-pw PGSSLMODE=disable PGGSSENCMODE=disable PGAPPNAME=kdissect-psql \
		timeout 20 psql -X -q -h 127.0.0.1 -p 5432 -U kdissect -d postgres -v ON_ERROR_STOP=1 \
		-c "CREATE TABLE orders (id int PRIMARY KEY, item text, qty int)" \
		-c "INSERT INTO orders VALUES (1, 'widget', 3), (2, 'gadget', 5)" \
		-c "SELECT id, item, qty FROM orders ORDER BY id" \
		-c "SELECT version()" \
		-c "DROP TABLE orders" >/dev/null
	stop_capture
	stop_server INT
}

# other-redis.pcap: redis-server on port 6379 (no persistence) and seven
# redis-cli commands, one connection each. (redis-cli reading commands from
# standard input would first fetch COMMAND DOCS, a 170 KB answer.)
gen_redis() {
	redis-server --port 6379 --bind 127.0.0.1 --save "" --appendonly no --daemonize no \
		--dir "$tmp" --protected-mode no >"$tmp/redis.log" 2>&1 &
	server_pid=$!
	wait_port 6379
	start_capture "$1" 6379
	local cmd
	for cmd in "PING" "SET kdissect:greeting hello" "GET kdissect:greeting" "INCR kdissect:counter" \
		"RPUSH kdissect:list a b c" "LRANGE kdissect:list 0 -1" \
		"DEL kdissect:greeting kdissect:counter kdissect:list"; do
		# shellcheck disable=SC2086 # split cmd into words on purpose
		timeout 10 redis-cli -h 127.0.0.1 -p 6379 $cmd >/dev/null
	done
	stop_capture
	stop_server
}

# other-ssh.pcap: sshd on port 2222 (throw-away ed25519 host key, public key
# authentication only) and ssh logging in with a throw-away key to run true.
gen_ssh() {
	mkdir -p "$tmp/ssh" /run/sshd
	ssh-keygen -q -t ed25519 -N "" -f "$tmp/ssh/host_ed25519"
	ssh-keygen -q -t ed25519 -N "" -f "$tmp/ssh/client_ed25519"
	cp "$tmp/ssh/client_ed25519.pub" "$tmp/ssh/authorized_keys"
	cat >"$tmp/ssh/sshd_config" <<-EOF
		Port 2222
		ListenAddress 127.0.0.1
		HostKey $tmp/ssh/host_ed25519
		AuthorizedKeysFile $tmp/ssh/authorized_keys
		PidFile none
		UsePAM no
		StrictModes no
		PermitRootLogin prohibit-password
		PasswordAuthentication no
		KbdInteractiveAuthentication no
	EOF
	/usr/sbin/sshd -D -e -f "$tmp/ssh/sshd_config" >"$tmp/ssh/sshd.log" 2>&1 &
	server_pid=$!
	wait_port 2222
	start_capture "$1" 2222
	timeout 20 ssh -F /dev/null -i "$tmp/ssh/client_ed25519" -p 2222 -o BatchMode=yes -o IdentitiesOnly=yes \
		-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR root@127.0.0.1 true
	stop_capture
	stop_server
}

failed=0
for s in http:other-http.pcap tls:other-tls.pcap dns:other-dns-tcp.pcap postgres:other-postgres.pcap \
	redis:other-redis.pcap ssh:other-ssh.pcap; do
	fn=gen_${s%%:*} file=${s#*:}
	if [ -n "$only" ] && [[ ",$only," != *",$file,"* ]]; then
		continue
	fi
	start=$(date +%s.%N)
	# A subshell, so that a failing scenario stops there (set -e) but the
	# others still run; its trap stops whatever it left running. (Not in an
	# "if": bash ignores set -e inside a condition.)
	set +e
	(
		set -e
		trap 'stop_scenario' EXIT
		stop_scenario() {
			[ -n "$tcpdump_pid" ] && stop_pid "$tcpdump_pid" INT
			[ -n "$server_pid" ] && stop_pid "$server_pid"
			return 0
		}
		"$fn" "$out/$file"
	)
	rc=$?
	set -e
	if [ $rc = 0 ]; then
		printf '%-30s %7d bytes  %ss\n' "$file" "$(stat -c %s "$out/$file")" \
			"$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
	else
		echo "gen-other: $file failed" >&2
		failed=1
	fi
done
exit $failed
