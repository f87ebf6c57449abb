/**
 * A sandbox's network (`agentSandbox.network`, src/config/sandbox.ts):
 *   - "shared": the host's network namespace, as the daemon's own;
 *   - "proxied": a namespace of its own (its own loopback: a project's tests that start a server and connect to it
 *     still work), reaching out only through this process's proxy (proxy.ts). bwrap cannot forward TCP, so the
 *     proxy's Unix socket is bound into the sandbox and a relay, run first inside it, listens on 127.0.0.1 and
 *     hands each connection over; HTTPS_PROXY, HTTP_PROXY and ALL_PROXY (and their lower-case forms) name it, and
 *     NO_PROXY the run's own loopback;
 *   - "none": a namespace of its own and nothing else: only its own loopback.
 * The relay is perl, in the same process that scopes the sandbox's abstract sockets (sandbox.ts): it starts the
 * command as its child, passes on the signals it gets and ends as the command ended (its exit code, or its signal),
 * taking its connections with it. Cost per spawn (`/bin/true`, median of 10, a 2-core machine at load 8): shared
 * 101-123 ms, none 113-118 ms, proxied 186-260 ms (perl loading IO::Socket and one fork more).
 */
import { sandboxProxySocket } from './proxy.js';
import type { UpstreamProxy } from './upstream.js';

export type NetworkMode = 'shared' | 'proxied' | 'none';

export interface SandboxNetwork {
  mode: NetworkMode;
  /** "host:port" the proxy lets through whatever they resolve to (proxied only). */
  allow: string[];
  /** The proxy the host goes out through, which Maestro's then goes through too (proxied only; upstream.ts). */
  upstream?: UpstreamProxy;
}

export const PROXY_VARIABLES = ['HTTPS_PROXY', 'HTTP_PROXY', 'ALL_PROXY', 'NO_PROXY'].flatMap((v) => [v, v.toLowerCase()]);

/**
 * The perl that runs the relay, then the command (`@ARGV`: the socket inside, then the command and its arguments).
 * Each connection accepted is a fork that copies bytes both ways until both sides end. The parent waits on the
 * listening socket and on a pipe its SIGCHLD handler writes to (no lost wake-up between a reap and the wait).
 */
export const RELAY_SCRIPT = String.raw`
use IO::Socket::INET; use IO::Socket::UNIX; use POSIX ();
my $up = shift @ARGV;
my $l = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 128, Proto => "tcp") or do { print STDERR "maestro sandbox: relay: $!\n"; exit 1 };
my $url = "http://127.0.0.1:" . $l->sockport;
$ENV{$_} = $url for qw(HTTPS_PROXY https_proxy HTTP_PROXY http_proxy ALL_PROXY all_proxy);
$ENV{NO_PROXY} = $ENV{no_proxy} = "localhost,127.0.0.1,::1";
pipe(my $wake, my $waker) or exit 1; $waker->autoflush(1); $wake->blocking(0); $waker->blocking(0);
$SIG{CHLD} = sub { syswrite $waker, "x" };
my $pid = fork;
if (!defined $pid) { print STDERR "maestro sandbox: fork: $!\n"; exit 1 }
if (!$pid) { $SIG{CHLD} = "DEFAULT"; exec { $ARGV[0] } @ARGV or do { print STDERR "maestro sandbox: execvp $ARGV[0]: $!\n"; POSIX::_exit(1) } }
for my $s (qw(TERM INT HUP QUIT USR1 USR2 WINCH)) { $SIG{$s} = sub { kill $s, $pid } }
$SIG{PIPE} = "IGNORE";
my %conn;
sub copy { my ($from, $to) = @_; my $n = sysread $from, my $buf, 65536; return 0 unless $n; while (length $buf) { my $w = syswrite $to, $buf; return 0 unless $w; substr($buf, 0, $w) = "" } 1 }
sub relay {
  my ($c) = @_;
  my $u = IO::Socket::UNIX->new(Peer => $up, Type => SOCK_STREAM) or do { print $c "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"; POSIX::_exit(1) };
  my %to = (fileno $c => [$c, $u], fileno $u => [$u, $c]);
  while (%to) {
    my $rin = ""; vec($rin, $_, 1) = 1 for keys %to;
    next unless select(my $rout = $rin, undef, undef, undef) > 0;
    for my $fd (keys %to) { next unless vec($rout, $fd, 1); my ($from, $dest) = @{$to{$fd}}; next if copy($from, $dest); shutdown $dest, 1; delete $to{$fd} }
  }
  POSIX::_exit(0);
}
while (1) {
  while ((my $k = waitpid(-1, POSIX::WNOHANG())) > 0) {
    if ($k != $pid) { delete $conn{$k}; next }
    my $st = $?;
    kill "KILL", keys %conn;
    if ($st & 127) { $SIG{$_} = "DEFAULT" for qw(TERM INT HUP QUIT USR1 USR2 WINCH PIPE); kill $st & 127, $$ }
    exit($st & 127 ? 128 + ($st & 127) : $st >> 8);
  }
  my $rin = ""; vec($rin, fileno $l, 1) = 1; vec($rin, fileno $wake, 1) = 1;
  next unless select(my $rout = $rin, undef, undef, undef) > 0;
  if (vec($rout, fileno $wake, 1)) { 1 while sysread $wake, my $drain, 512 }
  next unless vec($rout, fileno $l, 1);
  my $c = $l->accept or next;
  my $k = fork;
  if (defined $k && !$k) { close $l; $SIG{$_} = "DEFAULT" for qw(CHLD TERM INT HUP QUIT USR1 USR2 WINCH); relay($c) }
  $conn{$k} = 1 if $k;
  close $c;
}
`;

/** The plain exec that ends the perl prelude when no relay runs (`@ARGV`: the command and its arguments). */
export const EXEC_SCRIPT = 'exec { $ARGV[0] } @ARGV or do { print STDERR "maestro sandbox: execvp $ARGV[0]: $!\\n"; exit 1 };';

/**
 * What a network mode adds to a sandbox: bwrap arguments (before `--`), and for "proxied" the relay, to run in
 * perl ahead of the command with `relayArgs` before it. Starts this process's proxy for "proxied".
 */
export function networkSetup(network: SandboxNetwork | undefined): { bwrap: string[]; relayArgs: string[] | null } {
  const mode = network?.mode ?? 'shared';
  switch (mode) {
    case 'shared':
      return { bwrap: [], relayArgs: null };
    case 'none':
      // The host's proxy settings name nothing this namespace can reach.
      return { bwrap: ['--unshare-net', ...PROXY_VARIABLES.flatMap((v) => ['--unsetenv', v])], relayArgs: null };
    case 'proxied': {
      // At its own path: bwrap can make a mount point there in a private /tmp, and finds one where /tmp is the host's
      // (a check run in /tmp itself); a fixed name in /tmp could be neither.
      const socket = sandboxProxySocket(network?.allow ?? [], network?.upstream);
      return { bwrap: ['--unshare-net', '--ro-bind', socket, socket], relayArgs: ['--', socket] };
    }
    default: {
      const never: never = mode;
      throw new Error(`unknown sandbox network mode ${String(never)}`);
    }
  }
}
