/**
 * Three "hosts" on one machine for the rehearsal (three-hosts.deploy.ts): three network namespaces, each
 * with its own loopback and one interface (a veth pair) on a bridge of the root namespace, which holds the
 * stores' address (`.1` of a random 10.x.y.0/24 that no interface of the machine uses). A process started
 * in a namespace (`ip netns exec`) reaches the stores on the bridge's address and nothing of another host
 * but its address. Made and removed by the rehearsal: `remove()` kills whatever still runs in a namespace
 * (`ip netns pids`: only the processes the rehearsal started there), deletes the namespaces and the bridge;
 * it is safe to call twice and runs on the process's exit too.
 *
 * Where namespaces cannot be made (not root, no `ip`), the fallback is three processes on loopback:
 * `mode: 'loopback'`, every address 127.0.0.1 (each host a port and a data folder of its own);
 * `FRESHET_REHEARSAL_LOOPBACK=1` chooses it.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';

/** Where the hosts and the stores are, and how to run a command on a host. */
export interface HostsNetwork {
  mode: 'netns' | 'loopback';
  /** The address the stores listen on, reachable from every host. */
  storeAddress: string;
  /** Host i's (0..2) address. */
  address(i: number): string;
  /** The command prefix that runs a program on host i (`ip netns exec <ns>`; none on loopback). */
  exec(i: number): string[];
  /** Removes the namespaces, the links and whatever still runs there. Idempotent. */
  remove(): void;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });

/** A 10.x.y.0/24 no address of the machine is in (prefix `10.x.y`). */
function freeSubnet(): string {
  const used = ip('-4', '-o', 'addr', 'show');
  for (let attempt = 0; attempt < 50; attempt++) {
    const prefix = `10.${randomInt(200, 250)}.${randomInt(0, 256)}`;
    if (!used.includes(` ${prefix}.`)) return prefix;
  }
  throw new Error('no free 10.x.y.0/24 for the rehearsal');
}

/**
 * Makes three namespaces on a bridge; falls back to loopback where that is refused, or when
 * `FRESHET_REHEARSAL_LOOPBACK=1` asks for it.
 */
export function makeHostsNetwork(): HostsNetwork {
  try {
    if (process.env.FRESHET_REHEARSAL_LOOPBACK === '1') throw new Error('FRESHET_REHEARSAL_LOOPBACK=1');
    return netns();
  } catch (err) {
    console.log(`[rehearsal] network namespaces unavailable (${(err as Error).message.split('\n')[0]}): loopback`);
    return {
      mode: 'loopback',
      storeAddress: '127.0.0.1',
      address: () => '127.0.0.1',
      exec: () => [],
      remove: () => {},
    };
  }
}

function netns(): HostsNetwork {
  const id = randomBytes(3).toString('hex');
  const prefix = freeSubnet();
  const bridge = `fsb${id}`;
  const names = [0, 1, 2].map((i) => `fsr-${id}-${i}`);
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    for (const ns of names) {
      try {
        for (const pid of ip('netns', 'pids', ns).split('\n').filter(Boolean)) {
          try {
            process.kill(Number(pid), 'SIGKILL');
          } catch {}
        }
        ip('netns', 'del', ns);
      } catch {}
    }
    for (const i of [0, 1, 2]) {
      try {
        ip('link', 'del', `fsv${id}${i}`);
      } catch {}
    }
    try {
      ip('link', 'del', bridge);
    } catch {}
  };
  process.once('exit', remove);
  try {
    ip('link', 'add', bridge, 'type', 'bridge');
    ip('addr', 'add', `${prefix}.1/24`, 'dev', bridge);
    ip('link', 'set', bridge, 'up');
    names.forEach((ns, i) => {
      ip('netns', 'add', ns);
      ip('link', 'add', `fsv${id}${i}`, 'type', 'veth', 'peer', 'name', `fsp${id}${i}`);
      ip('link', 'set', `fsv${id}${i}`, 'master', bridge);
      ip('link', 'set', `fsv${id}${i}`, 'up');
      ip('link', 'set', `fsp${id}${i}`, 'netns', ns);
      const inNs = (...args: string[]) => ip('netns', 'exec', ns, 'ip', ...args);
      inNs('link', 'set', `fsp${id}${i}`, 'name', 'eth0');
      inNs('addr', 'add', `${prefix}.${10 + i}/24`, 'dev', 'eth0');
      inNs('link', 'set', 'eth0', 'up');
      inNs('link', 'set', 'lo', 'up');
    });
  } catch (err) {
    remove();
    throw err;
  }
  return {
    mode: 'netns',
    storeAddress: `${prefix}.1`,
    address: (i) => `${prefix}.${10 + i}`,
    exec: (i) => ['ip', 'netns', 'exec', names[i]!],
    remove,
  };
}
